#include "sim/timing/timing.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace systole::model {
using isa::Field;
using isa::Opcode;

TimingModel::TimingModel(const Config& config, TimingParameters parameters)
    : config_(config), parameters_(parameters), memory_(config) {
  // Adding the size of one row of every bank of every channel to an address moves each access
  // to the next row of the same bank (docs/MEMORY.md, "Addresses") as long as the channel
  // interleave lies below the row bits — so the timing repeats with that period.
  const std::uint64_t period = std::uint64_t{config.memory_channels} * config.dram.bank_groups *
                               config.dram.banks_per_group * config.dram.row_bytes;
  const std::uint64_t row_span = period / config.memory_channels;
  dram_period_ = config.interleave_bytes <= row_span ? period : 0;
  open_rows_.assign(std::size_t{config.memory_channels} * config.dram.banks_per_group, -1);
  // systole_dma_weights' CREDITS: weight_queue_depth tiles of word-aligned rows, rounded up to
  // a power of two, at least the row reader's 16.
  const std::uint64_t row_words = (std::uint64_t{config.cols} * ElementBytes(config.dtype) + 31) / 32;
  weight_credits_ = std::max<std::uint64_t>(
      16, parameters_.weight_queue_depth * std::bit_ceil(std::uint64_t{config.rows} * row_words));
  // The fetch formula (NextIssue) counts from the request to a word in an open row; the shared
  // replay counts to the controller's response: the difference is the arbiter and fetch buffer.
  const MemoryStream word{0, 0, {{false, 0}}, 0};
  const std::uint64_t open_row_response = memory_.RunStreams({&word, 1}, std::array<std::uint64_t, 1>{0})[0].first_response;
  const Cycle formula = config.dram.t_cl + parameters_.fetch_overhead + 1;
  fetch_response_to_word_ = formula > open_row_response ? formula - open_row_response : 1;
}

DmaTime TimingModel::Dma(std::uint64_t address, std::uint64_t stride, std::uint64_t rows,
                         std::uint64_t row_bytes, bool write, std::uint64_t credits,
                         std::uint64_t credit_delay) {
  if (rows == 0 || row_bytes == 0) return {};
  if (parameters_.memory == TimingParameters::Memory::kFixed) {
    return {parameters_.memory_latency, DmaBeats(rows, row_bytes)};
  }
  const std::uint64_t key_address = dram_period_ != 0 ? address % dram_period_ : address;
  const auto key = std::tuple{key_address, stride, rows, row_bytes, write, credits, credit_delay};
  if (const auto it = dma_cache_.find(key); it != dma_cache_.end()) return it->second;
  // At most dram_max_accesses words (whole rows, at least one) are simulated.
  const std::uint64_t words_per_row = row_bytes / 32 + 2;  // an upper bound, any alignment
  const std::uint64_t simulated =
      std::clamp<std::uint64_t>(parameters_.dram_max_accesses / words_per_row, 1, rows);
  const std::vector<MemoryAccess> accesses =
      MemoryTimingModel::DmaAccesses(key_address, stride, simulated, row_bytes, write);
  const MemoryTimingResult result = memory_.Run(accesses, credits, credit_delay);
  // Response of the first access at `latency`, of the last at `cycles`; one more cycle to take
  // it. A truncated stream continues at the rate it had.
  DmaTime time{result.latencies.front(), result.cycles - result.latencies.front() + 1};
  if (simulated < rows) time.stream = (time.stream * rows + simulated - 1) / simulated;
  dma_cache_.emplace(key, time);
  return time;
}

bool TimingModel::Deferred() const {
  return parameters_.memory == TimingParameters::Memory::kDram && parameters_.shared_memory;
}

void TimingModel::StartLaunch(std::uint64_t pc) {
  launch_pc_ = pc;
  launch_insns_.clear();
  first_estimate_ = {};
  ResetSchedule();
  recording_ = Deferred() ? nullptr : timeline_;
  if (recording_ != nullptr) recording_->LaunchStarted(0);
}

void TimingModel::ResetSchedule() {
  instructions_.clear();
  sequencer_ = 0;
  fetch_request_ = 0;
  fetched_ = 0;
  fetch_pops_.clear();
  launch_end_ = 0;
  memory_busy_.clear();
  // The host's transfers between launches move the DRAM rows: a launch starts with none known,
  // so that a launch's estimate depends on the launch alone.
  std::fill(open_rows_.begin(), open_rows_.end(), -1);
  unit_free_ = {};
  for (auto& starts : recent_starts_) starts.clear();
  for (auto& row : tokens_) {
    for (auto& queue : row) queue.clear();
  }
  tile_loaded_.clear();
  tile_popped_.clear();
}

std::uint64_t TimingModel::DmaBeats(std::uint64_t rows, std::uint64_t row_bytes) const {
  const std::uint64_t beats_per_row = (row_bytes + parameters_.beat_bytes - 1) / parameters_.beat_bytes;
  const std::uint64_t channels = config_.memory_channels;
  return (rows * beats_per_row + channels - 1) / channels;
}

// The fetch keeps fetch_depth words requested or buffered: word n is requested one cycle
// after the previous request and once dispatch has taken word n - fetch_depth, and arrives a
// CAS latency plus the fetch overhead later (its DRAM row is open: see TimingParameters). The
// dispatch states then take dispatch_cycles per instruction, S_NEXT waiting for the word.
TimingModel::Cycle TimingModel::NextIssue() {
  Cycle request = fetched_ == 0 ? 1 : fetch_request_ + 1;  // the fetch starts after launch_start
  if (fetch_pops_.size() >= parameters_.fetch_depth) request = std::max(request, fetch_pops_.front() + 1);
  fetch_request_ = request;
  ++fetched_;
  const Cycle word = request + config_.dram.t_cl + parameters_.fetch_overhead + 1;
  const Cycle pop = std::max(sequencer_, word);
  fetch_pops_.push_back(pop);
  while (fetch_pops_.size() > parameters_.fetch_depth) fetch_pops_.pop_front();
  return pop + parameters_.dispatch_cycles - 1;
}

// S_ISSUE pushes the instruction into its unit's queue, and waits while the queue is full,
// i.e. until the instruction unit_queue_depth places earlier on that unit has been accepted.
// Returns the first cycle the unit may accept it.
TimingModel::Cycle TimingModel::Dispatch(unsigned unit, PerfCounters& perf) {
  const Cycle issue = NextIssue();
  Cycle at = issue;
  const auto& accepted = recent_starts_[unit];
  if (accepted.size() >= parameters_.unit_queue_depth) at = std::max(at, accepted.front() + 1);
  At(perf, Perf::kStallDispatch) += at - issue;
  RecordStall(trace::kSequencerTrack, trace::StallCause::kDispatch, issue, at);
  sequencer_ = at + 1;
  return at + 1;
}

// Tokens are consumed oldest first; the checks guarantee that each awaited token exists.
TimingModel::Cycle TimingModel::TakeTokens(const isa::Instruction& insn, unsigned unit) {
  Cycle ready = 0;
  for (unsigned producer = 0; producer < isa::kNumUnits; ++producer) {
    if ((insn.wait >> producer & 1u) == 0) continue;
    auto& queue = tokens_[producer][unit];
    if (queue.empty()) continue;
    ready = std::max(ready, queue.front());
    queue.pop_front();
  }
  return ready;
}

void TimingModel::SendTokens(const isa::Instruction& insn, unsigned unit, Cycle complete) {
  for (unsigned consumer = 0; consumer < isa::kNumUnits; ++consumer) {
    if ((insn.signal >> consumer & 1u) != 0) {
      tokens_[unit][consumer].push_back(complete + parameters_.token_latency);
    }
  }
}

void TimingModel::Finish(unsigned unit, Cycle start, Cycle unit_free, Cycle complete) {
  unit_free_[unit] = unit_free;
  auto& starts = recent_starts_[unit];
  starts.push_back(start);
  while (starts.size() > parameters_.unit_queue_depth) starts.pop_front();
  launch_end_ = std::max(launch_end_, complete);
}

TimingModel::Cycle TimingModel::ReserveMemory(Cycle from, std::uint64_t cycles) {
  if (cycles == 0) return from;  // an empty DMA holds nothing
  Cycle t = from;
  auto it = memory_busy_.upper_bound(t);
  if (it != memory_busy_.begin() && std::prev(it)->second > t) t = std::prev(it)->second;
  while (cycles > 0) {
    it = memory_busy_.lower_bound(t);
    const Cycle gap = it == memory_busy_.end() ? cycles : std::min<Cycle>(cycles, it->first - t);
    // Take [t, t + gap), merged with its neighbours.
    Cycle begin = t, end = t + gap;
    if (it != memory_busy_.end() && it->first == end) {
      end = it->second;
      it = memory_busy_.erase(it);
    }
    if (it != memory_busy_.begin() && std::prev(it)->second == begin) {
      begin = std::prev(it)->first;
      memory_busy_.erase(std::prev(it));
    }
    memory_busy_[begin] = end;
    cycles -= gap;
    t = end;
  }
  return t;
}

// A DMA takes the time it takes alone on an idle memory — its latency, then its stream — with
// two corrections. Its first access finds the DRAM row the earlier DMAs left open in its bank
// (no ACTIVATE: t_rcd less) or another row open there (a PRECHARGE first: t_rp more), where the
// idle-memory latency assumed a closed bank. And its stream holds device memory, which the
// three DMA units share first come, first served in time: it takes the first free cycles from
// the end of its latency. The cycles it waits for them are its memory stall.
TimingModel::Cycle TimingModel::Transfer(unsigned unit, Cycle start, DmaTime time, std::uint64_t first,
                                         std::uint64_t last, PerfCounters& perf) {
  // Intervals that ended before the current dispatch can no longer be taken: every later
  // instruction starts after its dispatch.
  while (!memory_busy_.empty() && memory_busy_.begin()->second < sequencer_) memory_busy_.erase(memory_busy_.begin());
  std::uint64_t latency = time.latency;
  if (parameters_.memory == TimingParameters::Memory::kDram) {
    const DramLocation at = memory_.Locate(first);
    const std::int64_t open = open_rows_[at.channel * config_.dram.banks_per_group + at.bank];
    if (open == static_cast<std::int64_t>(at.row)) {
      latency -= std::min<std::uint64_t>(latency, config_.dram.t_rcd);
    } else if (open >= 0) {
      latency += config_.dram.t_rp;
    }
    const DramLocation end = memory_.Locate(last);
    open_rows_[end.channel * config_.dram.banks_per_group + end.bank] = static_cast<std::int64_t>(end.row);
  }
  const Cycle data = start + latency;
  const Cycle done = ReserveMemory(data, time.stream);
  const Cycle waited = done - data - time.stream;
  At(perf, Perf::kStallMemory) += waited;
  RecordStall(unit, trace::StallCause::kMemory, start, start + waited);
  return done;
}

TimingModel::DmaShape TimingModel::ShapeOf(const isa::Instruction& insn) const {
  DmaShape d{insn[Field::kDram], insn[Field::kStride], insn[Field::kRows], 0, 0, insn.opcode == Opcode::kStore};
  if (insn.opcode == Opcode::kLoadWeights) {
    d.row_bytes = insn[Field::kCols] * ElementBytes(config_.dtype);
    d.credits = weight_credits_;
    d.credit_delay = parameters_.credit_return;
  } else {
    const std::uint64_t size = isa::DmaElementBytes(insn, ElementBytes(config_.dtype));
    d.row_bytes = insn[Field::kElems] * size;
    d.credits = d.write ? 0 : config_.load_credits;  // the LOAD row reader's CREDITS
    d.credit_delay = d.write ? 0 : parameters_.credit_return;
  }
  return d;
}

// One input row enters per cycle; results leave R + C cycles after the last one (skew fill and
// drain), overlapping the next MATMUL, which is accepted while this one issues its last rows so
// that its first row follows this one's last.
TimingModel::Cycle TimingModel::MatmulDone(std::uint64_t rows, Cycle first_row, Cycle& unit_free) const {
  unit_free = first_row + rows - parameters_.mxu_issue_latency;
  return first_row + rows + config_.rows + config_.cols + parameters_.mxu_done_latency;
}

namespace {
// ACCVEC: done pulses the cycle after the last write's grant; the unit's `start` is the cycle
// after the edge that accepts the instruction (as for the other vector instructions).
constexpr std::uint64_t kAccVecDoneLatency = 1;
constexpr std::uint64_t kAccVecStartLatency = 0;
constexpr std::uint64_t kAccVecRowsInFlight = 4;  // the RTL's FLIGHT: rows read, not yet written
}  // namespace

std::optional<std::uint64_t> TimingModel::StreamedReads(const isa::Instruction& insn) {
  const std::uint64_t rows = insn[Field::kRows];
  switch (insn.opcode) {
    case Opcode::kActivate: return rows + (insn[Field::kBias] != 0 ? 1 : 0);  // the bias row first
    case Opcode::kVector:  // rows a and b (a twice for op=pass)
      return insn[Field::kMath] == 0 ? std::optional<std::uint64_t>{2 * rows} : std::nullopt;
    case Opcode::kReduce:  // over=rows: a POOL window of 1 x rows pixels
      return insn[Field::kOver] != 0 ? std::optional<std::uint64_t>{rows} : std::nullopt;
    case Opcode::kPool:  // one window pixel per cycle (a whole row of channels at a time)
      return insn[Field::kOutH] * insn[Field::kOutW] * insn[Field::kWinH] * insn[Field::kWinW];
    default: return std::nullopt;
  }
}

bool TimingModel::AccVecRowsOverlap(const isa::Instruction& insn) {
  const auto op = static_cast<isa::AccOp>(insn[Field::kOp]);
  const bool reads_b = insn[Field::kScalar] == 0 && op != isa::AccOp::kSqrt;
  if (op == isa::AccOp::kDiv || op == isa::AccOp::kSqrt) return false;  // one divider per lane
  // A row in flight writes dst + i while row j > i reads a + j (b + j): the same row when
  // dst − a = j − i < kAccVecRowsInFlight. A bcast b row is read by every row.
  const auto writes_ahead = [&](std::uint64_t src) {
    return insn[Field::kDst] > src && insn[Field::kDst] - src < kAccVecRowsInFlight;
  };
  const std::uint64_t b = insn[Field::kB], dst = insn[Field::kDst];
  if (writes_ahead(insn[Field::kA])) return false;
  if (reads_b && insn[Field::kBcast] == 0 && writes_ahead(b)) return false;
  if (reads_b && insn[Field::kBcast] != 0 && b >= dst && b - dst < insn[Field::kRows]) return false;
  return true;
}

std::uint64_t TimingModel::AccVecCycles(const isa::Instruction& insn) {
  const auto op = static_cast<isa::AccOp>(insn[Field::kOp]);
  const std::uint64_t reads = insn[Field::kScalar] == 0 && op != isa::AccOp::kSqrt ? 2 : 1;
  const std::uint64_t rows = insn[Field::kRows];
  // Overlapped: a row every `reads` cycles, plus the last row's arrival, operation and write.
  if (AccVecRowsOverlap(insn)) return rows * reads + 3 + kAccVecDoneLatency;
  const bool iterative = op == isa::AccOp::kDiv || op == isa::AccOp::kSqrt;
  const std::uint64_t per_row = reads + 1 + (iterative ? 29 : 1) + 1;
  return rows * per_row + kAccVecDoneLatency;
}

TimingModel::Cycle TimingModel::Occupy(const isa::Instruction& insn, Cycle start, Cycle& unit_free) const {
  const std::uint64_t rows = insn[Field::kRows];
  // The vector unit's streaming instructions: their buffer reads, one per cycle, then its
  // pipeline; the unit accepts the next one in the cycle before `done`.
  if (const std::optional<std::uint64_t> reads = StreamedReads(insn)) {
    unit_free = start + *reads + parameters_.vector_pipeline - 1;
    return unit_free + 1;
  }
  switch (insn.opcode) {
    case Opcode::kVector: {
      // With math=, each row runs the function's micro-program (the cycles rtl_vector_math_test
      // prints for rtl/vector/systole_vector_math_rom.sv) after its two reads, and no read is
      // issued meanwhile.
      static constexpr std::array<std::uint64_t, isa::kNumVecMath> kMathRowCycles = {
          0, 27, 19, 17, 50, 46, 53, 74, 39};
      const std::uint64_t per_row = kMathRowCycles.at(insn[Field::kMath]) + 4;
      const Cycle complete = start + rows * per_row + parameters_.vector_pipeline - 2;
      unit_free = complete - 1;
      return complete;
    }
    case Opcode::kAccVec: {
      // Rows overlapped or one at a time (rtl/vector/systole_vector_accvec.sv); the accumulator
      // ports are assumed free (the MXU and LOAD write first, STORE shares the read port).
      const Cycle complete = start + AccVecCycles(insn) + kAccVecStartLatency;
      unit_free = complete - 1;
      return complete;
    }
    case Opcode::kReduce: {
      // over=elems: the row's read, then one element per cycle, then its write.
      const Cycle complete = start + rows * (insn[Field::kElems] + 4) + 1;
      unit_free = complete - 1;
      return complete;
    }
    default:
      unit_free = start + 1;
      return start + 1;
  }
}

void TimingModel::Schedule(const isa::Instruction& insn, PerfCounters& perf) {
  launch_insns_.push_back(insn);
  PerfCounters added{};
  ScheduleOne(insn, added);
  for (unsigned c = 0; c < kNumPerfCounters; ++c) {
    perf[c] += added[c];
    first_estimate_[c] += added[c];
  }
}

void TimingModel::Recorded(const PerfCounters& perf, const PerfCounters& before) {
  InstructionTiming& t = instructions_.emplace_back();
  t.complete = last_complete_;
  t.launch_end = launch_end_;
  for (unsigned c = 0; c < kNumPerfCounters; ++c) t.perf[c] = perf[c] - before[c];
}

void TimingModel::ScheduleOne(const isa::Instruction& insn, PerfCounters& perf) {
  const PerfCounters before = perf;
  last_complete_ = 0;
  const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(insn.opcode));
  if (spec == nullptr) {
    Recorded(perf, before);
    return;
  }
  if (spec->unit == isa::Unit::kSequencer) {
    // SYNC and HALT wait in S_ISSUE until every earlier instruction is done; the launch ends
    // the cycle after (HALT). INTERRUPT goes on at once.
    Cycle issue = NextIssue();
    if (insn.opcode != Opcode::kInterrupt) issue = std::max(issue, launch_end_ + 1);
    sequencer_ = issue + 1;
    launch_end_ = std::max(launch_end_, insn.opcode == Opcode::kHalt ? issue : issue + 1);
    last_complete_ = issue + 1;
    if (insn.opcode == Opcode::kHalt && recording_ != nullptr) recording_->LaunchEnded(launch_end_);
    Recorded(perf, before);
    return;
  }
  const auto unit = static_cast<unsigned>(spec->unit);
  const Cycle dispatched = Dispatch(unit, perf);
  const Cycle base = std::max(dispatched, unit_free_[unit]);
  Cycle start = std::max(base, TakeTokens(insn, unit));
  At(perf, Perf::kStallToken) += start - base;
  RecordStall(unit, trace::StallCause::kToken, base, start);

  const std::uint64_t rows = insn[Field::kRows];
  Cycle unit_free = 0, complete = 0;
  switch (insn.opcode) {
    case Opcode::kLoad:
    case Opcode::kStore: {
      const DmaShape d = ShapeOf(insn);
      complete = Transfer(unit, start, Dma(d), d.dram, d.LastByte(), perf);
      unit_free = complete - 1;  // ready again in the cycle of its last write / acknowledgement
      break;
    }
    case Opcode::kLoadWeights: {
      // FIFO space: tile n needs tile n - depth to have left the FIFO (been popped).
      const std::size_t tile = tile_loaded_.size();
      if (tile >= config_.weight_fifo_tiles) {
        const std::size_t freed_by = tile - config_.weight_fifo_tiles;
        if (freed_by < tile_popped_.size()) start = std::max(start, tile_popped_[freed_by]);
      }
      // The unit's in-order queue: tile n is taken once tile n - depth is done.
      if (tile >= parameters_.weight_queue_depth) {
        start = std::max(start, tile_loaded_[tile - parameters_.weight_queue_depth]);
      }
      const DmaShape d = ShapeOf(insn);
      const DmaTime time = Dma(d);
      complete = Transfer(unit, start, time, d.dram, d.LastByte(), perf);
      // Tiles overlap: the unit takes the next LOAD_WEIGHTS once this one's requests are issued
      // (its data's arrival less the round trip), plus the one idle cycle between tiles of the
      // RTL (rtl/dma/systole_dma_weights.sv), not when its data has arrived.
      unit_free = complete - time.latency + 1;
      tile_loaded_.push_back(complete);
      break;
    }
    case Opcode::kMatmul: {
      // The first row is issued mxu_issue_latency cycles after the instruction is accepted.
      Cycle first_row = start + parameters_.mxu_issue_latency;
      if (insn[Field::kPop] != 0) {
        // The next tile shifts into the array's shadow buffer (R cycles) once it has arrived
        // and the previous swap has freed the shadow buffer.
        const std::size_t tile = tile_popped_.size();
        Cycle ready = tile < tile_loaded_.size() ? tile_loaded_[tile] : first_row;
        if (tile > 0) ready = std::max(ready, tile_popped_[tile - 1]);
        ready += config_.rows;
        if (ready > first_row) {
          At(perf, Perf::kStallWfifo) += ready - first_row;
          RecordStall(unit, trace::StallCause::kWeightFifo, first_row, ready);
          first_row = ready;
        }
        tile_popped_.push_back(first_row);
      }
      At(perf, Perf::kMxuBusy) += rows;
      complete = MatmulDone(rows, first_row, unit_free);
      break;
    }
    default:
      complete = Occupy(insn, start, unit_free);
      break;
  }
  Finish(unit, start, unit_free, complete);
  SendTokens(insn, unit, complete);
  if (recording_ != nullptr) recording_->UnitInstruction(unit, start, complete);
  last_complete_ = complete;
  Recorded(perf, before);
}

}  // namespace systole::model
