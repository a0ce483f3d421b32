// The end of a launch with TimingParameters::shared_memory: the launch simulated again, cycle by
// cycle, with its DMA streams and instruction fetches sharing one memory model (SharedMemory).
// The first estimate (TimingModel::Schedule) prices each DMA on an idle memory, in program
// order; on the RTL the streams interleave request by request at the core's arbiter, close each
// other's rows in shared banks and wait for each other's responses in the reorder buffer, and a
// DMA is slowed by DMAs that come after it in the program. So here every time is worked out as
// soon as what it depends on is known — the sequencer's fetch and dispatch, each unit's queue,
// tokens and weight tiles, with the same formulas as Schedule — and the memory advances a cycle
// at a time underneath, each DMA adding its stream when its unit accepts it. Every time derived
// this way lies after the cycle at which it becomes known, so no stream is ever added in the
// memory's past (docs/MODEL.md, "How close").
#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <stdexcept>

#include "sim/timing/timing.hpp"

namespace systole::model {

using isa::Field;
using isa::Opcode;

namespace {

// The arbiter port of each DMA unit (REQ_* of rtl/systole_core.sv); the fetch is port 0.
unsigned ArbiterPort(isa::Unit unit) {
  switch (unit) {
    case isa::Unit::kLoad: return 1;
    case isa::Unit::kWeight: return 2;
    default: return 3;  // STORE
  }
}

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t kNoIndex = std::numeric_limits<std::size_t>::max();

struct Span {
  std::uint64_t begin = 0, end = 0;
};

// A LOAD into the accumulators: the MXU has the accumulator write port whenever it writes a
// result row (rtl/systole_core.sv: ld_acc_wr_gnt), so the row reader holds a finished row until
// a cycle the MXU leaves free, and the words behind it, with their credits, until then.
struct AccumulatorLoad {
  std::size_t step = 0, stream = 0;
  std::vector<std::uint64_t> row_words;  // words of each row, in order
  std::size_t row = 0, word = 0;         // the row being assembled, its words taken so far
  std::size_t access = 0;                // the next word to take from the responses
  std::uint64_t full_at = std::numeric_limits<std::uint64_t>::max();  // a finished row waits
  std::size_t written = 0;
};

// A STORE's buffer reads: its unit reads row r into a two-row staging FIFO (rows 0 and 1 right
// after it starts, row r >= 2 the cycle after the last word of row r - 2 was taken by the
// memory; rtl/dma/systole_dma_store.sv), on the read port it shares with the vector unit.
struct StoreReads {
  std::size_t step = 0, stream = 0;
  bool from_accumulators = false;
  std::uint64_t start = 0;
  std::vector<std::size_t> last_word;  // per row: the index of its last access
};

// A vector-unit instruction whose buffer reads (TimingModel::StreamedReads) share a read port
// with STORE's (ACTIVATE: the accumulators; POOL, REDUCE over rows, VECTOR without math=: the
// unified buffer). The port's
// round-robin arbiter (rtl/systole_core.sv, u_ub_rd_arb / u_acc_rd_arb) gives a STORE that asks
// beside the continuously reading vector unit the next cycle, so each STORE read in the vector
// unit's read window moves the rest of the window one cycle later.
struct VectorOnSharedPort {
  std::size_t step = 0;
  std::uint64_t reads = 0;
  bool from_accumulators = false;
  std::uint64_t complete = 0, free = 0;  // with the port to itself (Occupy)
  std::uint64_t lost = 0;                // cycles given to STORE reads so far
};

// One instruction of the launch: what program order fixes, then its times as they become known.
struct Step {
  const isa::Instruction* insn = nullptr;
  bool sequencer = false;  // SYNC, INTERRUPT, HALT
  isa::Unit unit = isa::Unit::kSequencer;
  std::size_t place = 0;                    // among its unit's instructions
  std::vector<std::size_t> tokens_from;     // the producers whose tokens it takes
  std::size_t tile = 0;                     // LOAD_WEIGHTS: tile n; MATMUL with pop: pop n
  std::size_t earlier = 0;                  // LOAD_WEIGHTS: pops before it; MATMUL: tiles before it
  bool dma = false, empty_dma = false, pop = false;
  std::uint64_t issue = kNone, available = kNone, start = kNone, first_row = kNone;
  std::uint64_t tile_in = kNone;  // MATMUL with pop: its tile has left the weight FIFO for the array
  std::uint64_t complete = kNone, end_of_launch = kNone;  // end_of_launch: what it adds to the end
  std::size_t stream = kNoIndex;
  PerfCounters perf{};
  Span dispatch_stall, token_stall, memory_stall, wfifo_stall;
};

}  // namespace

void TimingModel::EndLaunch(PerfCounters& perf) {
  if (!Deferred()) return;
  const bool unchecked = std::any_of(launch_insns_.begin(), launch_insns_.end(), [](const isa::Instruction& insn) {
    return isa::FindOpcode(static_cast<std::uint8_t>(insn.opcode)) == nullptr;
  });
  // A fault before any instruction ran, or an instruction the checks never saw: the first
  // estimate stands.
  if (launch_insns_.empty() || unchecked) {
    if (timeline_ != nullptr) timeline_->LaunchStarted(0);
    return;
  }
  PerfCounters shared{};
  SimulateShared(shared);
  for (unsigned c = 0; c < kNumPerfCounters; ++c) perf[c] = perf[c] - first_estimate_[c] + shared[c];
  first_estimate_ = shared;
}

void TimingModel::SimulateShared(PerfCounters& perf) {
  const std::size_t n = launch_insns_.size();
  const TimingParameters& p = parameters_;
  std::vector<Step> steps(n);
  std::array<std::vector<std::size_t>, isa::kNumUnits> units;
  std::vector<std::size_t> weight_loads, pops;
  {
    std::array<std::array<std::deque<std::size_t>, isa::kNumUnits>, isa::kNumUnits> tokens;
    for (std::size_t i = 0; i < n; ++i) {
      Step& s = steps[i];
      s.insn = &launch_insns_[i];
      const isa::Instruction& insn = *s.insn;
      s.unit = isa::FindOpcode(static_cast<std::uint8_t>(insn.opcode))->unit;
      s.sequencer = s.unit == isa::Unit::kSequencer;
      if (s.sequencer) continue;
      const auto u = static_cast<unsigned>(s.unit);
      s.place = units[u].size();
      units[u].push_back(i);
      for (unsigned producer = 0; producer < isa::kNumUnits; ++producer) {
        if ((insn.wait >> producer & 1u) == 0 || tokens[producer][u].empty()) continue;
        s.tokens_from.push_back(tokens[producer][u].front());
        tokens[producer][u].pop_front();
      }
      for (unsigned consumer = 0; consumer < isa::kNumUnits; ++consumer) {
        if ((insn.signal >> consumer & 1u) != 0) tokens[u][consumer].push_back(i);
      }
      s.dma = insn.opcode == Opcode::kLoad || insn.opcode == Opcode::kStore || insn.opcode == Opcode::kLoadWeights;
      if (s.dma) s.empty_dma = ShapeOf(insn).Empty();
      if (insn.opcode == Opcode::kLoadWeights) {
        s.tile = weight_loads.size();
        s.earlier = pops.size();
        weight_loads.push_back(i);
      } else if (insn.opcode == Opcode::kMatmul && insn[Field::kPop] != 0) {
        s.pop = true;
        s.tile = pops.size();
        s.earlier = weight_loads.size();
        pops.push_back(i);
      }
    }
  }

  // The host wrote the program last: each bank holds the row of the last program word in it.
  std::vector<std::uint64_t> program_words(n);
  for (std::size_t k = 0; k < n; ++k) program_words[k] = launch_pc_ + k * isa::kInstructionBytes;
  SharedMemory memory(config_, MemoryTimingOptions{}, program_words);
  std::vector<std::size_t> owner;  // per stream: the instruction (fetches: n + word)

  // The sequencer: instruction words requested, their arrival, when dispatch took them.
  std::vector<std::uint64_t> request(n, kNone), arrival(n, kNone), taken(n, kNone);
  std::size_t requested = 0, next_dispatch = 0, ended = 0;
  std::uint64_t sequencer = 0;    // when S_NEXT may take the next word
  std::uint64_t launch_end = 0;   // the latest end of the first `ended` instructions (for SYNC, HALT)
  std::array<std::size_t, isa::kNumUnits> next_start{};
  std::array<std::uint64_t, isa::kNumUnits> unit_free{};
  std::array<std::size_t, isa::kNumUnits> finishing;  // a MATMUL started, waiting for its tile
  finishing.fill(kNoIndex);
  std::size_t completed = 0;
  std::vector<AccumulatorLoad> accumulator_loads;
  std::vector<StoreReads> store_reads;
  std::vector<VectorOnSharedPort> vector_reads;  // started, their end not yet known
  // STORE reads of the accumulators (or the unified buffer) in cycles [begin, end), as far as
  // the memory has been simulated.
  const auto store_reads_in = [&](bool from_accumulators, std::uint64_t begin, std::uint64_t end) {
    std::uint64_t count = 0;
    for (const StoreReads& store : store_reads) {
      if (store.from_accumulators != from_accumulators || store.start + 1 >= end) continue;
      const std::uint64_t store_complete = steps[store.step].complete;
      if (store_complete != kNone && store_complete < begin) continue;  // read everything before
      const std::vector<std::int64_t>& accepts = memory.Accepts(store.stream);
      for (std::size_t r = 0; r < store.last_word.size(); ++r) {
        std::uint64_t at = store.start + 1 + r;
        if (r >= 2) {
          const std::int64_t accepted = accepts[store.last_word[r - 2]];
          if (accepted < 0) break;
          at = static_cast<std::uint64_t>(accepted) + 1;
        }
        if (at >= end) break;
        if (at >= begin) ++count;
      }
    }
    return count;
  };
  // The cycles the MXU writes accumulator rows, [begin, end) in order: a row issued at cycle I
  // is written at I + R + C + 1 (rtl/mxu/systole_mxu.sv).
  std::deque<Span> mxu_writes;
  const auto mxu_writes_at = [&](std::uint64_t cycle) {
    while (!mxu_writes.empty() && mxu_writes.front().end <= cycle) mxu_writes.pop_front();
    return !mxu_writes.empty() && mxu_writes.front().begin <= cycle;
  };

  const auto known = [](std::uint64_t t) { return t != kNone; };
  // `end_of_launch`: what it adds to the launch's end (HALT: its issue, not its completion).
  const auto finish = [&](Step& s, std::uint64_t complete, std::uint64_t end_of_launch) {
    s.complete = complete;
    s.end_of_launch = end_of_launch;
    ++completed;
  };
  // A DMA's last word is in (read_done / store_done after the memory's last response): its
  // memory stall, as the RTL counts it, is the cycles a request of it was offered and not taken.
  const auto dma_done = [&](Step& s, std::uint64_t complete, const MemoryStreamTiming& t) {
    At(s.perf, Perf::kStallMemory) += t.refused;
    s.memory_stall = {s.start, s.start + t.refused};
    if (s.insn->opcode != Opcode::kLoadWeights) unit_free[static_cast<unsigned>(s.unit)] = complete - 1;
    finish(s, complete, complete);
  };

  // The fetch keeps fetch_depth words requested or taken ahead of dispatch (NextIssue).
  const auto fetch = [&] {
    bool progress = false;
    while (requested < n) {
      const std::size_t k = requested;
      std::uint64_t at = k == 0 ? 1 : request[k - 1] + 1;
      if (k >= p.fetch_depth) {
        if (!known(taken[k - p.fetch_depth])) break;
        at = std::max(at, taken[k - p.fetch_depth] + 1);
      }
      request[k] = at;
      owner.push_back(n + k);
      memory.Add({0, at, {{false, program_words[k]}}, 0});
      ++requested;
      progress = true;
    }
    return progress;
  };

  // Dispatch in program order (Dispatch, NextIssue, and Schedule's SYNC/HALT).
  const auto dispatch = [&] {
    bool progress = false;
    while (next_dispatch < n) {
      Step& s = steps[next_dispatch];
      if (!known(s.issue)) {
        if (!known(arrival[next_dispatch])) break;
        taken[next_dispatch] = std::max(sequencer, arrival[next_dispatch]);
        s.issue = taken[next_dispatch] + p.dispatch_cycles - 1;
        progress = true;
      }
      if (s.sequencer) {
        std::uint64_t issue = s.issue;
        if (s.insn->opcode != Opcode::kInterrupt) {
          // Waits until every earlier instruction is done.
          while (ended < next_dispatch && known(steps[ended].end_of_launch)) {
            launch_end = std::max(launch_end, steps[ended].end_of_launch);
            ++ended;
          }
          if (ended < next_dispatch) break;
          issue = std::max(issue, launch_end + 1);
        }
        s.start = issue;
        sequencer = issue + 1;
        finish(s, issue + 1, s.insn->opcode == Opcode::kHalt ? issue : issue + 1);
      } else {
        const auto u = static_cast<unsigned>(s.unit);
        std::uint64_t at = s.issue;
        if (s.place >= p.unit_queue_depth) {
          const Step& ahead = steps[units[u][s.place - p.unit_queue_depth]];
          if (!known(ahead.start)) break;
          at = std::max(at, ahead.start + 1);
        }
        At(s.perf, Perf::kStallDispatch) += at - s.issue;
        s.dispatch_stall = {s.issue, at};
        sequencer = at + 1;
        s.available = at + 1;
      }
      ++next_dispatch;
      progress = true;
    }
    return progress;
  };

  // When tile j has left the FIFO: it shifts in, R rows, once it is loaded and the MATMUL
  // before its own has issued its first row (known before the MATMUL that pops it starts, as the
  // array preloads it beside the one before). A tile loaded after its pop in program order (the
  // launch faults there) has its time set by finish_matmul.
  const auto tile_leaves_fifo = [&](std::size_t j) -> std::uint64_t {
    Step& pop = steps[pops[j]];
    if (known(pop.tile_in) || pop.tile >= pop.earlier) return pop.tile_in;
    const Step& load = steps[weight_loads[j]];
    if (!known(load.complete)) return kNone;
    std::uint64_t ready = load.complete;
    if (j > 0) {
      const Step& before = steps[pops[j - 1]];
      if (!known(before.first_row)) return kNone;
      ready = std::max(ready, before.first_row);
    }
    pop.tile_in = ready + config_.rows;
    return pop.tile_in;
  };

  // MATMUL's first row once its tile is in the array (Schedule's kMatmul).
  const auto finish_matmul = [&](Step& s) {
    std::uint64_t first_row = s.start + p.mxu_issue_latency;
    if (s.pop) {
      std::uint64_t ready = kNone;
      if (s.tile < s.earlier) {
        ready = tile_leaves_fifo(s.tile);
        if (!known(ready)) return false;
      } else {
        ready = first_row;
        if (s.tile > 0) ready = std::max(ready, steps[pops[s.tile - 1]].first_row);
        ready += config_.rows;
        s.tile_in = ready;
      }
      if (ready > first_row) {
        At(s.perf, Perf::kStallWfifo) += ready - first_row;
        s.wfifo_stall = {first_row, ready};
        first_row = ready;
      }
    }
    s.first_row = first_row;
    const std::uint64_t rows = (*s.insn)[Field::kRows];
    const std::uint64_t first_write = first_row + config_.rows + config_.cols + 1;
    if (rows > 0) mxu_writes.push_back({first_write, first_write + rows});
    At(s.perf, Perf::kMxuBusy) += rows;
    std::uint64_t free = 0;
    const std::uint64_t complete = MatmulDone(rows, first_row, free);
    unit_free[static_cast<unsigned>(isa::Unit::kMxu)] = free;
    finish(s, complete, complete);
    return true;
  };

  // A LOAD_WEIGHTS whose tile needs the weight FIFO slot of an earlier tile (weight_fifo_tiles
  // before it, popped earlier in program order): that tile's index, or kNoIndex. Its rows go in
  // once that tile has left the FIFO for the array (tile_in), one a cycle; `done` follows the last
  // (rtl/mxu/systole_weight_fifo.sv frees a tile's slot after its last row is read;
  // rtl/dma/systole_dma_weights.sv). Measured on the RTL's swapped classifier: every tile's
  // done is 2 R + 1 cycles after the first row of the MATMUL before the one that frees its slot.
  const auto room_for = [&](const Step& s) -> std::size_t {
    const std::size_t fifo = config_.weight_fifo_tiles;
    if (s.insn->opcode != Opcode::kLoadWeights || s.tile < fifo || s.tile - fifo >= s.earlier) return kNoIndex;
    return s.tile - fifo;
  };
  struct WaitingForRoom {
    std::size_t step;
    std::uint64_t data_done;  // its words are in (read_done after the last response)
  };
  std::vector<WaitingForRoom> waiting_for_room;
  const auto fill_freed_slots = [&] {
    bool progress = false;
    std::erase_if(waiting_for_room, [&](const WaitingForRoom& w) {
      Step& s = steps[w.step];
      const std::uint64_t freed = tile_leaves_fifo(room_for(s));
      if (!known(freed)) return false;
      dma_done(s, std::max(w.data_done, freed + config_.rows + 1), memory.Timing(s.stream));
      progress = true;
      return true;
    });
    return progress;
  };

  // Each unit takes its next instruction (Schedule: unit free, tokens, the weight FIFO).
  const auto start_units = [&] {
    bool progress = false;
    for (unsigned u = 0; u < isa::kNumUnits; ++u) {
      while (true) {
        if (finishing[u] != kNoIndex) {
          if (!finish_matmul(steps[finishing[u]])) break;
          finishing[u] = kNoIndex;
          progress = true;
        }
        if (next_start[u] >= units[u].size() || !known(unit_free[u])) break;
        Step& s = steps[units[u][next_start[u]]];
        if (!known(s.available)) break;
        const std::uint64_t base = std::max(s.available, unit_free[u]);
        std::uint64_t start = base;
        bool ready = true;
        for (const std::size_t producer : s.tokens_from) {
          if (!known(steps[producer].complete)) {
            ready = false;
            break;
          }
          start = std::max(start, steps[producer].complete + p.token_latency);
        }
        if (!ready) break;
        const std::uint64_t token_start = start;
        if (s.insn->opcode == Opcode::kLoadWeights) {
          // The WEIGHT unit takes a tile while its queue has room, whether or not the weight
          // FIFO has: the FIFO holds back its rows, and so its `done` (room_for above). The
          // queue frees an entry as the oldest tile's last row goes in, the cycle before that
          // tile is complete (as a unit takes its next instruction: unit_free).
          if (s.tile >= p.weight_queue_depth) {
            const Step& before = steps[weight_loads[s.tile - p.weight_queue_depth]];
            if (!known(before.complete)) break;
            start = std::max(start, before.complete - 1);
          }
        }
        At(s.perf, Perf::kStallToken) += token_start - base;
        s.token_stall = {base, token_start};
        s.start = start;
        ++next_start[u];
        progress = true;
        const isa::Instruction& insn = *s.insn;
        if (s.dma && s.empty_dma) {
          // Nothing to move: done at once (Transfer of nothing).
          unit_free[u] = insn.opcode == Opcode::kLoadWeights ? start + 1 : start - 1;
          finish(s, start, start);
        } else if (s.dma) {
          const DmaShape d = ShapeOf(insn);
          const bool to_accumulators = insn.opcode == Opcode::kLoad && insn[Field::kMem] != 0;
          // A STORE's accepts are kept: they time its buffer reads (StoreReads).
          s.stream = memory.Add({ArbiterPort(s.unit), start + (d.write ? p.store_issue : p.read_issue),
                                 MemoryTimingModel::DmaAccesses(d.dram, d.stride, d.rows, d.row_bytes, d.write),
                                 d.credits, d.credit_delay, to_accumulators, insn.opcode == Opcode::kStore});
          owner.push_back(units[u][next_start[u] - 1]);
          if (to_accumulators) {
            AccumulatorLoad& load = accumulator_loads.emplace_back();
            load.step = units[u][next_start[u] - 1];
            load.stream = s.stream;
            for (std::uint64_t r = 0; r < d.rows; ++r) load.row_words.push_back(d.RowWords(r));
          }
          if (insn.opcode == Opcode::kStore) {
            StoreReads& reads = store_reads.emplace_back();
            reads.step = units[u][next_start[u] - 1];
            reads.stream = s.stream;
            reads.from_accumulators = insn[Field::kMem] != 0;
            reads.start = start;
            std::uint64_t words = 0;
            for (std::uint64_t r = 0; r < d.rows; ++r) {
              words += d.RowWords(r);
              reads.last_word.push_back(words - 1);
            }
          }
          unit_free[u] = kNone;  // known from the memory
        } else if (insn.opcode == Opcode::kMatmul) {
          unit_free[u] = kNone;
          finishing[u] = units[u][next_start[u] - 1];
        } else {
          std::uint64_t free = 0;
          const std::uint64_t complete = Occupy(insn, start, free);
          if (const std::uint64_t reads = StreamedReads(insn).value_or(0); reads > 0) {
            vector_reads.push_back({units[u][next_start[u] - 1], reads,
                                    insn.opcode == Opcode::kActivate, complete, free, 0});
            unit_free[u] = kNone;  // once the STORE reads in its window are known
          } else {
            unit_free[u] = free;
            finish(s, complete, complete);
          }
        }
      }
    }
    return progress;
  };

  // What the memory's last cycle told: fetched words, DMAs whose requests are all out or done.
  const auto harvest = [&] {
    for (const std::size_t stream : memory.NewlyAccepted()) {
      const std::size_t i = owner[stream];
      if (i >= n || steps[i].insn->opcode != Opcode::kLoadWeights) continue;
      // The WEIGHT unit takes its next tile once this one's requests are out (Schedule).
      unit_free[static_cast<unsigned>(isa::Unit::kWeight)] = memory.Timing(stream).last_accept + 2;
    }
    for (const std::size_t stream : memory.NewlyAnswered()) {
      const std::size_t i = owner[stream];
      const MemoryStreamTiming& t = memory.Timing(stream);
      if (i >= n) {
        arrival[i - n] = t.last_response + fetch_response_to_word_;
        continue;
      }
      Step& s = steps[i];
      if (s.insn->opcode == Opcode::kLoad && (*s.insn)[Field::kMem] != 0) continue;  // by its rows
      const bool store = s.insn->opcode == Opcode::kStore;
      const std::uint64_t done = t.last_response + 1 + (store ? p.store_done : p.read_done);
      if (room_for(s) != kNoIndex) {
        waiting_for_room.push_back({i, done});
        continue;
      }
      dma_done(s, done, t);
    }
    // The accumulator LOADs in the cycle just simulated: a finished row is written if the MXU
    // leaves the port free; a word that arrived by the cycle before is taken into the row
    // buffer if it is empty or its row leaves now, and its credit returns.
    const auto now = static_cast<std::uint64_t>(memory.Now());
    for (auto it = accumulator_loads.begin(); it != accumulator_loads.end();) {
      AccumulatorLoad& load = *it;
      Step& s = steps[load.step];
      if (known(load.full_at) && load.full_at <= now && !mxu_writes_at(now)) {
        load.full_at = kNone;
        if (++load.written == load.row_words.size()) {
          dma_done(s, now + 1 + p.read_done - 1, memory.Timing(load.stream));  // as a row written at r + 2
          it = accumulator_loads.erase(it);
          continue;
        }
      }
      const std::vector<std::int64_t>& responses = memory.Responses(load.stream);
      if (!known(load.full_at) && load.access < responses.size() && responses[load.access] >= 0 &&
          static_cast<std::uint64_t>(responses[load.access]) < now) {
        memory.Release(ArbiterPort(isa::Unit::kLoad), 1);
        ++load.access;
        if (++load.word == load.row_words[load.row]) {
          load.word = 0;
          ++load.row;
          load.full_at = now + 1;
        }
      }
      ++it;
    }
    // Vector-unit instructions whose read window the memory has passed: the STORE reads in it.
    for (auto it = vector_reads.begin(); it != vector_reads.end();) {
      VectorOnSharedPort& v = *it;
      Step& s = steps[v.step];
      const std::uint64_t end = s.start + v.reads + v.lost;
      if (end > now + 1) {
        ++it;
        continue;
      }
      const std::uint64_t lost = store_reads_in(v.from_accumulators, s.start, end);
      if (lost > v.lost) {  // the window grew: look again when the memory has passed it
        v.lost = lost;
        ++it;
        continue;
      }
      unit_free[static_cast<unsigned>(s.unit)] = v.free + v.lost;
      finish(s, v.complete + v.lost, v.complete + v.lost);
      it = vector_reads.erase(it);
    }
  };

  while (true) {
    // Everything that can be worked out now, until nothing more can: each step may unblock another.
    for (bool progress = true; progress;) {
      progress = fetch();
      progress = dispatch() || progress;
      progress = start_units() || progress;
      progress = fill_freed_slots() || progress;
    }
    if (completed == n) break;
    // Accumulator LOADs are followed cycle by cycle: no jumping over idle memory cycles; nor
    // past the end of a vector instruction's read window.
    std::int64_t limit = accumulator_loads.empty() ? -1 : memory.Now() + 1;
    for (const VectorOnSharedPort& v : vector_reads) {
      const auto end = static_cast<std::int64_t>(steps[v.step].start + v.reads + v.lost) - 1;
      const std::int64_t at = std::max(end, memory.Now() + 1);
      limit = limit < 0 ? at : std::min(limit, at);
    }
    if (!memory.Step(limit)) throw std::logic_error("TimingModel: the shared schedule is stuck");
    harvest();
  }

  // The records, in program order, as Schedule leaves them.
  instructions_.clear();
  launch_end_ = 0;
  if (timeline_ != nullptr) timeline_->LaunchStarted(0);
  for (const Step& s : steps) {
    launch_end_ = std::max(launch_end_, s.end_of_launch);
    instructions_.push_back({s.complete, launch_end_, s.perf});
    for (unsigned c = 0; c < kNumPerfCounters; ++c) perf[c] += s.perf[c];
    if (timeline_ == nullptr) continue;
    if (s.sequencer) {
      if (s.insn->opcode == Opcode::kHalt) timeline_->LaunchEnded(launch_end_);
      continue;
    }
    const auto unit = static_cast<unsigned>(s.unit);
    timeline_->UnitStall(trace::kSequencerTrack, trace::StallCause::kDispatch, s.dispatch_stall.begin,
                         s.dispatch_stall.end);
    timeline_->UnitStall(unit, trace::StallCause::kToken, s.token_stall.begin, s.token_stall.end);
    if (s.dma) timeline_->UnitStall(unit, trace::StallCause::kMemory, s.memory_stall.begin, s.memory_stall.end);
    if (s.pop) timeline_->UnitStall(unit, trace::StallCause::kWeightFifo, s.wfifo_stall.begin, s.wfifo_stall.end);
    timeline_->UnitInstruction(unit, s.start, s.complete);
  }
}

}  // namespace systole::model
