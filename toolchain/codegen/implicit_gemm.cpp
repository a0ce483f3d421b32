// The GEMM engine's schedule: program order of the loads, weight tiles, MATMULs and epilogues
// (docs/CODEGEN.md, "The schedule"). Buffer plans are in gemm_buffers.cpp.
#include "toolchain/codegen/implicit_gemm.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "sim/timing/timing.hpp"

namespace systole::codegen {

using isa::Field;
using isa::MemSpace;
using isa::Opcode;

namespace {

struct Pending {
  isa::Instruction insn;
  std::vector<Access> accesses;
};

class Emitter {
 public:
  Emitter(ProgramBuilder& builder, const ImplicitGemm& problem, const GemmBuffers& buffers)
      : b_(builder), p_(problem), buf_(buffers),
        e_(ElementBytes(builder.config().dtype)),
        out_e_(problem.out.ElementBytes()),
        n_tiles_((problem.n + builder.C() - 1) / builder.C()), timing_(builder.config()) {
    if (buf_.ring_steps != 0 && (n_tiles_ != 1 || buf_.a_buffers != 1 || buf_.ring_steps < 2)) {
      throw std::logic_error("codegen: a ring of step slots needs two slots or more, one N tile and one A slot");
    }
    const std::uint64_t a_slot = std::uint64_t{StepSlots()} * buf_.chunk_rows;
    out_base_ = a_slot * buf_.a_buffers;
    acc_slot_ = buf_.chunk_rows + 1;
    zero_row_ = b_.FillRow(0);
    a_slot_rows_ = a_slot;
    // Every slot that fits, not only the plan's: a wider first group (Groups) needs them. At
    // least the plan's (whose sizes PlanGemmBuffers checked); at most 64 of each.
    const std::uint64_t ub_left = b_.config().UbRows() - out_base_;
    acc_slots_ = std::clamp<std::uint64_t>(b_.config().AccRows() / acc_slot_, buf_.acc_buffers, 64);
    out_slots_ = std::clamp<std::uint64_t>(ub_left / buf_.chunk_rows, buf_.out_buffers, 64);
    const std::uint64_t tile_bytes = std::uint64_t{b_.C()} * e_;
    const model::DmaTime w = timing_.Dma(0, tile_bytes, b_.R(), tile_bytes, false);
    weight_latency_ = w.latency;
    weight_tile_cycles_ = w.latency + w.stream;
    BuildGroups();
    BuildWeightList();
  }

  // Program order (docs/CODEGEN.md, "The schedule"): per chunk, the N tiles in groups; per
  // group, the k-steps in order and within a k-step the group's tiles, each accumulating into
  // its own accumulator slot — so every output element still sums its k-steps in order. A
  // chunk whose A rows no earlier chunk prefetched (the first one, and every chunk with one A
  // slot) loads them step by step inside its first group, which is as wide as the slots allow:
  // each step's gathers then overlap the weight tiles of a whole group of MATMULs instead of
  // all of them preceding the first MATMUL. The epilogues (ACTIVATE + STORE, or STORE of raw
  // accumulators) of a group go after the next group's MATMULs.
  void Run() {
    if (p_.chunks.empty()) return;
    std::vector<Pending> epilogues;
    std::uint64_t tile = 0;
    for (std::size_t c = 0; c < p_.chunks.size(); ++c) {
      const Chunk& chunk = p_.chunks[c];
      std::vector<std::vector<Pending>> own;  // this chunk's A loads, per k-step
      if (!Prefetched(c)) {
        // In pieces only when the weights set the pace (a MATMUL is shorter than a weight
        // tile's DMA): otherwise the gathers are better off as few DMAs, each one latency.
        own = ALoads(c, Groups(c).front() > 1 && chunk.rows < weight_tile_cycles_);
        for (std::size_t s = 0; s < std::min<std::size_t>(StepsAhead(), own.size()); ++s) {
          for (Pending& load : own[s]) Emit(load);
        }
      }
      // The next chunk's loads, spread evenly over this chunk's MATMULs.
      Spread prefetch;
      if (c + 1 < p_.chunks.size() && Prefetched(c + 1)) {
        for (std::vector<Pending>& step : ALoads(c + 1, false)) {
          for (Pending& load : step) prefetch.items.push_back(std::move(load));
        }
      }
      prefetch.slots = n_tiles_ * chunk.steps.size();
      std::uint32_t j0 = 0;
      for (const std::uint32_t group : Groups(c)) {
        for (std::size_t s = 0; s < chunk.steps.size(); ++s) {
          // The next step's own loads, spread over this step's MATMULs.
          Spread ahead;
          const std::size_t next = s + StepsAhead();
          if (j0 == 0 && !own.empty() && next < own.size()) ahead.items = std::move(own[next]);
          ahead.slots = group;
          for (std::uint32_t g = 0; g < group; ++g) {
            const std::uint64_t acc = AccSlot(tile + g);
            if (s == 0) BiasAhead(tile + g);
            PushWeightsAhead();
            const std::uint64_t ub = ASlot(c) + StepSlot(s) * buf_.chunk_rows;
            Emit({MatmulInsn(ub, acc, chunk.rows, chunk.steps[s].k, true, s > 0 || StartsLoaded()),
                  {{Space::kUb, ub, ub + chunk.rows, false},
                   {Space::kAcc, acc, acc + chunk.rows, true}}});
            ++pops_;
            ahead.Next(*this);
            prefetch.Next(*this);
          }
        }
        // The previous group's epilogues go after this group's MATMULs in program order, close
        // to when they can start, so that they do not hold up the sequencer or the memory.
        for (const Pending& e : epilogues) Emit(e);
        epilogues.clear();
        epilogued_ = tile;
        for (std::uint32_t g = 0; g < group; ++g) AddEpilogue(chunk, j0 + g, tile + g, epilogues);
        j0 += group;
        tile += group;
      }
      prefetch.Rest(*this);
    }
    for (const Pending& e : epilogues) Emit(e);
  }

 private:
  struct WeightLoad {
    std::uint64_t dram, stride;
    std::uint32_t k, n;
  };

  // Instructions emitted evenly over `slots` calls of Next (the i-th once (i + 1) / items
  // of the slots have passed, so early), the rest by Rest.
  struct Spread {
    std::vector<Pending> items;
    std::size_t slots = 1, slot = 0, emitted = 0;
    void Next(Emitter& e) {
      ++slot;
      const std::size_t due = (slot * items.size() + slots - 1) / slots;
      for (; emitted < due; ++emitted) e.Emit(items[emitted]);
    }
    void Rest(Emitter& e) {
      for (; emitted < items.size(); ++emitted) e.Emit(items[emitted]);
    }
  };

  // The most rows of a gather (`stride` bytes apart, `row_bytes` each) whose DMA streams within
  // a weight tile's latency on the golden model's memory timing: such a LOAD, issued between
  // two weight tiles, does not delay the second (DMAs take the memory first come first served
  // in program order, docs/MODEL.md).
  std::uint32_t PieceRows(std::uint64_t stride, std::uint64_t row_bytes) {
    const auto key = std::pair{stride, row_bytes};
    if (const auto it = piece_rows_.find(key); it != piece_rows_.end()) return it->second;
    std::uint32_t rows = 1;
    while (rows < 256 && timing_.Dma(0, stride, rows + 1, row_bytes, false).stream <= weight_latency_) ++rows;
    piece_rows_.emplace(key, rows);
    return rows;
  }

  // Step slots per A slot, and the one k-step s uses (GemmBuffers::ring_steps).
  std::uint32_t StepSlots() const { return buf_.ring_steps != 0 ? buf_.ring_steps : buf_.max_steps; }
  std::uint64_t StepSlot(std::size_t s) const { return s % StepSlots(); }
  // How many k-steps of a chunk's own rows are loaded before its first MATMUL, and so how far
  // ahead of step s the loads spread over s's MATMULs are: one, or in a ring every slot but the
  // one the first MATMUL frees (ring_steps >= 2: PlanRingBuffers).
  std::uint32_t StepsAhead() const { return buf_.ring_steps != 0 ? buf_.ring_steps - 1 : 1; }
  std::uint64_t ASlot(std::size_t chunk) const { return (chunk % buf_.a_buffers) * a_slot_rows_; }
  std::uint64_t AccSlot(std::uint64_t tile) const { return (tile % acc_slots_) * acc_slot_; }
  bool BiasFirst() const { return p_.raw_output && p_.bias.has_value(); }
  // The first MATMUL of a tile accumulates onto rows loaded before it (a raw output's bias, or
  // the starting tensor).
  bool StartsLoaded() const { return BiasFirst() || p_.start.has_value(); }
  // Chunk c's A rows were loaded during chunk c - 1 (two A slots).
  bool Prefetched(std::size_t c) const { return c > 0 && buf_.a_buffers > 1; }

  // The N-tile groups of chunk c (BuildGroups).
  const std::vector<std::uint32_t>& Groups(std::size_t c) const { return groups_[c]; }

  // Every chunk's groups (Groups). A chunk that loads its own A rows starts with a group of
  // 7/8 of the accumulator slots (GemmBuffers::first_group_eighths; convolutions also try 4/8
  // and keep the faster): each k-step's gathers then overlap that many MATMULs (the
  // first chunk of a launch has nothing to hide them behind otherwise). At most the slots the
  // group before it leaves, since that group's epilogues follow this group's MATMULs in the
  // program and its tiles hold their slots until then; and in the last chunk at most 7/8 of
  // the N tiles, so that the epilogues of the wide group overlap the last tiles' MATMULs.
  // Measured on ResNet-50 (`ref`, --network-inputs 1), against half the slots and no cap:
  // 17 041 519 -> 16 858 080 cycles (3/4: 16 883 332; 15/16: 17 132 440; the last-chunk cap
  // at 1/2: 16 965 918, none: 16 870 371); single tiles after the first group, one epilogue
  // behind. The output slots do not limit the group: an ACTIVATE that waits for the STORE of
  // an output slot's previous tile holds up only the epilogues.
  void BuildGroups() {
    std::uint64_t previous = 0;  // the width of the last group before the chunk
    for (std::size_t c = 0; c < p_.chunks.size(); ++c) {
      std::uint64_t first = 1;
      if (!Prefetched(c)) {
        first = std::min(acc_slots_ * buf_.first_group_eighths / 8, acc_slots_ - std::max<std::uint64_t>(previous, 1));
        if (buf_.cap_last_group && c + 1 == p_.chunks.size()) first = std::min<std::uint64_t>(first, n_tiles_ * 7 / 8);
        first = std::clamp<std::uint64_t>(first, 1, n_tiles_);
      }
      std::vector<std::uint32_t> groups = {static_cast<std::uint32_t>(first)};
      for (std::uint64_t j = first; j < n_tiles_; ++j) groups.push_back(1);
      previous = groups.back();
      groups_.push_back(std::move(groups));
    }
  }

  // Emits the bias loads of every tile up to `tile` (global order: chunk by chunk, N tiles in
  // order) and, where its slot allows, of the next one, so that a tile's bias loads while the
  // previous tile computes: a raw output's replicated bias is as many rows as the chunk, as long
  // a DMA as the tile's STORE.
  void BiasAhead(std::uint64_t tile) {
    if (!p_.bias && !p_.start) return;
    const std::uint64_t tiles = p_.chunks.size() * n_tiles_;
    // The next tile's too when the epilogue of the slot's previous tile is in the program.
    const bool lead = tile + 1 < tiles && (tile + 1 < acc_slots_ || tile + 1 - acc_slots_ < epilogued_);
    for (; biased_ <= tile + (lead ? 1 : 0); ++biased_) {
      if (biased_ >= acc_slots_ && biased_ - acc_slots_ >= epilogued_) {
        throw std::logic_error("codegen: a bias load would overwrite a slot before its epilogue");
      }
      EmitBias(p_.chunks[biased_ / n_tiles_], static_cast<std::uint32_t>(biased_ % n_tiles_),
               AccSlot(biased_));
    }
  }

  // Raw output: the bias is the accumulators' starting value (stride 0 repeats a vector, a
  // replicated bias loads contiguously); otherwise one bias row that ACTIVATE adds. A starting
  // tensor loads the tile's rows from where the output tile goes: scaled to its 4-byte elements
  // when it is in the accumulator type, as it is (and widened by the LOAD) in the element type.
  void EmitBias(const Chunk& chunk, std::uint32_t j, std::uint64_t acc) {
    const std::uint32_t n0 = j * b_.C(), nn = std::min(b_.C(), p_.n - n0);
    if (p_.start) {
      const bool element_start = p_.start->dtype != b_.AccumulatorType();
      const std::uint64_t scale = element_start ? 1 : 4 / out_e_;
      const std::uint64_t out_offset = chunk.out_dram - p_.out.address +
                                       (p_.out_block_bytes != 0 ? j * p_.out_block_bytes : std::uint64_t{n0} * out_e_);
      const std::uint64_t dram = p_.start->address + out_offset * scale;
      isa::Instruction load = LoadInsn(MemSpace::kAcc, dram, chunk.out_stride * scale, acc, 0, chunk.rows, nn);
      load[isa::Field::kWiden] = element_start ? 1 : 0;
      Emit({load, {ReadOf(*p_.start), {Space::kAcc, acc, acc + chunk.rows, true}}});
    }
    if (!p_.bias) return;
    const std::uint64_t first = BiasFirst() ? acc : acc + buf_.chunk_rows;
    const std::uint64_t rows = BiasFirst() ? chunk.rows : 1;
    const bool replicated = p_.bias_block_bytes != 0;
    const std::uint64_t dram = p_.bias_dram + (replicated ? j * p_.bias_block_bytes : std::uint64_t{n0} * 4);
    const std::uint64_t stride = replicated ? std::uint64_t{b_.C()} * 4 : 0;
    Emit({LoadInsn(MemSpace::kAcc, dram, stride, first, 0, rows, nn),
          {ReadOf(*p_.bias), {Space::kAcc, first, first + rows, true}}});
  }

  void AddStore(isa::MemSpace mem, std::uint64_t dram, std::uint64_t stride, std::uint64_t row,
                std::uint32_t rows, std::uint32_t cols, std::vector<Pending>& out) {
    const Space space = mem == MemSpace::kAcc ? Space::kAcc : Space::kUb;
    out.push_back({StoreInsn(mem, dram, stride, row, 0, rows, cols),
                   {{space, row, row + rows, false}, WriteOf(p_.out)}});
  }

  // ACTIVATE + STORE (or the STORE of raw accumulators) of N tile j of a chunk, computed in
  // accumulator slot `tile`.
  void AddEpilogue(const Chunk& chunk, std::uint32_t j, std::uint64_t tile,
                   std::vector<Pending>& out) {
    const std::uint32_t n0 = j * b_.C(), nn = std::min(b_.C(), p_.n - n0);
    const std::uint64_t acc = AccSlot(tile), bias_row = acc + buf_.chunk_rows;
    const std::uint64_t out_dram =
        chunk.out_dram + (p_.out_block_bytes != 0 ? j * p_.out_block_bytes : std::uint64_t{n0} * out_e_);
    if (p_.raw_output) {
      AddStore(MemSpace::kAcc, out_dram, chunk.out_stride, acc, chunk.rows, nn, out);
      return;
    }
    const std::uint64_t ub = out_base_ + (tile % out_slots_) * buf_.chunk_rows;
    const OutputTransform& t = p_.transform;
    isa::Instruction act = isa::MakeInstruction(
        Opcode::kActivate, {{Field::kAcc, acc},
                            {Field::kUb, ub},
                            {Field::kRows, chunk.rows},
                            {Field::kBias, p_.bias ? 1u : 0u},
                            {Field::kBiasRow, p_.bias ? bias_row : 0},
                            {Field::kFunc, static_cast<std::uint64_t>(t.func)},
                            {Field::kScale, t.scale_bits},
                            {Field::kShift, t.shift},
                            {Field::kZeroPoint, static_cast<std::uint64_t>(std::int64_t{t.zero_point})},
                            {Field::kLo, t.lo_bits},
                            {Field::kHi, t.hi_bits}});
    std::vector<Access> act_accesses = {{Space::kAcc, acc, acc + chunk.rows, false},
                                        {Space::kUb, ub, ub + chunk.rows, true}};
    if (p_.bias) act_accesses.push_back({Space::kAcc, bias_row, bias_row + 1, false});
    out.push_back({act, act_accesses});
    AddStore(MemSpace::kUb, out_dram, chunk.out_stride, ub, chunk.rows, nn, out);
  }

  void Emit(const Pending& pending) { b_.Emit(pending.insn, pending.accesses); }

  // Weight tiles in the order the MATMULs pop them (Run's loops).
  void BuildWeightList() {
    for (std::size_t c = 0; c < p_.chunks.size(); ++c) {
      const Chunk& chunk = p_.chunks[c];
      if (chunk.rows == 0 || chunk.rows > buf_.chunk_rows || chunk.steps.size() > buf_.max_steps) {
        throw std::logic_error("codegen: chunk does not match its buffer plan");
      }
      std::uint32_t j0 = 0;
      for (const std::uint32_t group : Groups(c)) {
        for (const KStep& step : chunk.steps) {
          for (std::uint32_t j = j0; j < j0 + group; ++j) {
            const std::uint32_t n0 = j * b_.C(), nn = std::min(b_.C(), p_.n - n0);
            const std::uint64_t column = p_.weight_block_bytes != 0 ? j * p_.weight_block_bytes
                                                                    : std::uint64_t{n0} * e_;
            weights_.push_back({step.weight_dram + column, step.weight_stride, step.k, nn});
          }
        }
        j0 += group;
      }
    }
  }

  // Keeps the weight FIFO full: before the MATMUL that pops tile i, tiles up to
  // i + weight_fifo_tiles - 1 are queued (the most the FIFO rules allow).
  void PushWeightsAhead() {
    const std::size_t limit = std::min(weights_.size(), pops_ + b_.config().weight_fifo_tiles);
    for (; pushed_ < limit; ++pushed_) {
      const WeightLoad& w = weights_[pushed_];
      b_.Emit(LoadWeightsInsn(w.dram, w.stride, w.k, w.n), {ReadOf(p_.weights)});
    }
  }

  // Chunk c's A gathers, per k-step; with `pieces`, cut into LOADs of at most PieceRows rows,
  // which slip between the weight tiles of a group's MATMULs instead of delaying them. (Cutting
  // every gather so costs a DMA latency per piece: for prefetches spread over a whole chunk
  // measured slower than whole gathers.)
  std::vector<std::vector<Pending>> ALoads(std::size_t c, bool pieces) {
    const Chunk& chunk = p_.chunks[c];
    std::vector<std::vector<Pending>> steps(chunk.steps.size());
    for (std::size_t s = 0; s < chunk.steps.size(); ++s) {
      const KStep& step = chunk.steps[s];
      std::vector<Pending>& loads = steps[s];
      std::uint32_t covered = 0;
      for (const RowSegment& seg : step.segments) {
        if (seg.first_row != covered || seg.rows == 0) {
          throw std::logic_error("codegen: row segments must cover the chunk in order");
        }
        covered += seg.rows;
        const std::uint32_t piece =
            pieces ? PieceRows(seg.fill ? 0 : seg.stride, std::uint64_t{step.k} * e_) : seg.rows;
        for (std::uint32_t r0 = 0; r0 < seg.rows; r0 += piece) {
          const std::uint32_t rows = std::min(piece, seg.rows - r0);
          const std::uint64_t row = ASlot(c) + StepSlot(s) * buf_.chunk_rows + seg.first_row + r0;
          const Access ub{Space::kUb, row, row + rows, true};
          if (seg.fill) {
            loads.push_back({LoadInsn(MemSpace::kUb, zero_row_.address, 0, row, 0, rows, step.k),
                             {ub}});
          } else {
            loads.push_back({LoadInsn(MemSpace::kUb, seg.dram + r0 * seg.stride, seg.stride, row, 0,
                                      rows, step.k),
                             {ub, ReadOf(p_.a)}});
          }
        }
      }
      if (covered != chunk.rows) throw std::logic_error("codegen: row segments miss rows");
    }
    return steps;
  }

  ProgramBuilder& b_;
  const ImplicitGemm& p_;
  GemmBuffers buf_;
  std::uint64_t e_, out_e_;
  std::uint32_t n_tiles_;
  std::uint64_t out_base_ = 0, acc_slot_ = 0, a_slot_rows_ = 0, acc_slots_ = 0, out_slots_ = 0;
  Tensor zero_row_;
  std::vector<WeightLoad> weights_;
  std::vector<std::vector<std::uint32_t>> groups_;  // per chunk (BuildGroups)
  std::size_t pushed_ = 0, pops_ = 0;
  std::uint64_t biased_ = 0;     // tiles whose bias load is in the program
  std::uint64_t epilogued_ = 0;  // tiles whose epilogue is in the program
  model::TimingModel timing_;
  std::uint64_t weight_latency_ = 0, weight_tile_cycles_ = 0;  // of a contiguous weight tile
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t> piece_rows_;
};

}  // namespace

void EmitImplicitGemm(ProgramBuilder& builder, const ImplicitGemm& problem,
                      const GemmBuffers& buffers) {
  if (problem.n == 0) throw std::invalid_argument("codegen: GEMM with no output columns");
  if (problem.start && (problem.raw_output ||
                        (problem.start->dtype != builder.AccumulatorType() &&
                         problem.start->dtype != builder.ElementType()) ||
                        problem.start->shape != problem.out.shape)) {
    throw std::invalid_argument(
        "codegen: a starting tensor must have the output's shape in the accumulator or the element type, and the "
        "output must not be raw");
  }
  Emitter(builder, problem, buffers).Run();
}

}  // namespace systole::codegen
