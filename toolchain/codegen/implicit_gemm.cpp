#include "codegen/implicit_gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <deque>
#include <stdexcept>

namespace systole::codegen {

using isa::Field;
using isa::MemSpace;
using isa::Opcode;

OutputTransform OutputTransform::Float(isa::ActFunc func, float scale, float lo, float hi) {
  const auto bf16 = [](float v) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
    return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
  };
  OutputTransform t;
  t.func = func;
  t.scale_bits = std::bit_cast<std::uint32_t>(scale);
  t.lo_bits = bf16(lo);
  t.hi_bits = bf16(hi);
  return t;
}

OutputTransform OutputTransform::Quantized(std::int32_t multiplier, std::uint8_t shift,
                                           std::int8_t zero_point, isa::ActFunc func,
                                           std::int16_t lo, std::int16_t hi) {
  OutputTransform t;
  t.func = func;
  t.scale_bits = static_cast<std::uint32_t>(multiplier);
  t.shift = shift;
  t.zero_point = zero_point;
  t.lo_bits = static_cast<std::uint16_t>(lo);
  t.hi_bits = static_cast<std::uint16_t>(hi);
  return t;
}

namespace {

struct BufferOption {
  std::uint32_t a, acc, out;
};
constexpr BufferOption kBufferOptions[] = {{2, 3, 3}, {2, 2, 2}, {1, 3, 3}, {1, 2, 2}};

std::uint64_t OptionRows(const Config& config, const BufferOption& o, std::uint32_t max_steps,
                         std::uint64_t wanted_rows, bool raw_output) {
  const std::uint64_t acc_limit = config.AccRows() / o.acc;
  const std::uint64_t ub_per_row = std::uint64_t{o.a} * max_steps + (raw_output ? 0 : o.out);
  return std::min<std::uint64_t>(
      {acc_limit > 0 ? acc_limit - 1 : 0, config.UbRows() / ub_per_row, 65535, wanted_rows});
}

[[noreturn]] void NoPlanFits(const Config& config, std::uint32_t max_steps) {
  throw std::invalid_argument(fmt::format(
      "codegen: a reduction of {} k-steps does not fit the {} unified-buffer rows", max_steps,
      config.UbRows()));
}

}  // namespace

std::vector<GemmBuffers> GemmBufferOptions(const Config& config, std::uint32_t max_steps,
                                           std::uint64_t wanted_rows, bool raw_output) {
  if (max_steps == 0 || wanted_rows == 0) throw std::invalid_argument("codegen: empty GEMM");
  std::vector<GemmBuffers> options;
  for (const BufferOption& o : kBufferOptions) {
    const std::uint64_t rows = OptionRows(config, o, max_steps, wanted_rows, raw_output);
    if (rows > 0) options.push_back({static_cast<std::uint32_t>(rows), o.a, o.acc, o.out, max_steps});
  }
  if (options.empty()) NoPlanFits(config, max_steps);
  return options;
}

GemmBuffers PlanGemmBuffers(const Config& config, std::uint32_t max_steps,
                            std::uint64_t wanted_rows, bool raw_output) {
  if (max_steps == 0 || wanted_rows == 0) throw std::invalid_argument("codegen: empty GEMM");
  // Most buffering first; the first plan whose chunks are long enough to hide a weight tile's
  // DMA (about 128 rows) wins, otherwise the one with the longest chunks. With one A slot the
  // next chunk's rows load only after the current chunk's MATMULs (no overlap), which still
  // beats chunks too short to hide the weight DMA. The accumulators always have two or more
  // slots: an epilogue runs one tile behind the MATMULs.
  const std::uint64_t good_enough = std::min<std::uint64_t>(wanted_rows, 128);
  GemmBuffers best;
  for (const BufferOption& o : kBufferOptions) {
    const std::uint64_t rows = OptionRows(config, o, max_steps, wanted_rows, raw_output);
    if (rows > best.chunk_rows) {
      best = {static_cast<std::uint32_t>(rows), o.a, o.acc, o.out, max_steps};
    }
    if (rows >= good_enough) break;
  }
  if (best.chunk_rows == 0) NoPlanFits(config, max_steps);
  return best;
}

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
        n_tiles_((problem.n + builder.C() - 1) / builder.C()) {
    const std::uint64_t a_slot = std::uint64_t{buf_.max_steps} * buf_.chunk_rows;
    out_base_ = a_slot * buf_.a_buffers;
    acc_slot_ = buf_.chunk_rows + 1;
    zero_row_ = b_.FillRow(0);
    a_slot_rows_ = a_slot;
    BuildWeightList();
  }

  void Run() {
    if (p_.chunks.empty()) return;
    for (Pending& load : ALoads(0)) Emit(load);
    std::optional<Pending> epilogue_act, epilogue_store;
    std::uint64_t tile = 0;
    for (std::size_t c = 0; c < p_.chunks.size(); ++c) {
      const Chunk& chunk = p_.chunks[c];
      std::deque<Pending> prefetch;
      // With a single A slot the next chunk loads after this one (the loop's tail).
      if (c + 1 < p_.chunks.size() && buf_.a_buffers > 1) {
        for (Pending& load : ALoads(c + 1)) prefetch.push_back(std::move(load));
      }
      const std::size_t matmuls = n_tiles_ * chunk.steps.size();
      const std::size_t quota = (prefetch.size() + matmuls - 1) / matmuls;
      for (std::uint32_t j = 0; j < n_tiles_; ++j, ++tile) {
        const std::uint32_t n0 = j * b_.C(), nn = std::min(b_.C(), p_.n - n0);
        const std::uint64_t acc = (tile % buf_.acc_buffers) * acc_slot_;
        const std::uint64_t bias_row = acc + buf_.chunk_rows;
        const bool bias_first = p_.raw_output && p_.bias.has_value();
        if (p_.bias) {
          // Raw output: the bias is the accumulators' starting value (stride 0 repeats it);
          // otherwise one bias row that ACTIVATE adds.
          const std::uint64_t first = bias_first ? acc : bias_row;
          const std::uint64_t rows = bias_first ? chunk.rows : 1;
          const bool replicated = p_.bias_block_bytes != 0;
          Emit({LoadInsn(MemSpace::kAcc,
                         p_.bias_dram + (replicated ? j * p_.bias_block_bytes : std::uint64_t{n0} * 4),
                         replicated ? std::uint64_t{b_.C()} * 4 : 0, first, 0, rows,
                         nn),
                {ReadOf(*p_.bias), {Space::kAcc, first, first + rows, true}}});
        }
        for (std::size_t s = 0; s < chunk.steps.size(); ++s) {
          PushWeightsAhead();
          const std::uint64_t ub = ASlot(c) + s * buf_.chunk_rows;
          Emit({MatmulInsn(ub, acc, chunk.rows, chunk.steps[s].k, true, s > 0 || bias_first),
                {{Space::kUb, ub, ub + chunk.rows, false},
                 {Space::kAcc, acc, acc + chunk.rows, true}}});
          ++pops_;
          for (std::size_t q = 0; q < quota && !prefetch.empty(); ++q) {
            Emit(prefetch.front());
            prefetch.pop_front();
          }
        }
        // The previous tile's epilogue goes after this tile's MATMULs in program order, close
        // to when it can start, so that it does not hold up the sequencer or the memory.
        if (epilogue_act) Emit(*epilogue_act);
        if (epilogue_store) Emit(*epilogue_store);
        epilogue_act.reset();
        epilogue_store.reset();
        const std::uint64_t out_dram =
            chunk.out_dram + (p_.out_block_bytes != 0 ? j * p_.out_block_bytes : std::uint64_t{n0} * out_e_);
        if (p_.raw_output) {
          epilogue_store = Pending{
              StoreInsn(MemSpace::kAcc, out_dram, chunk.out_stride, acc, 0, chunk.rows, nn),
              {{Space::kAcc, acc, acc + chunk.rows, false}, WriteOf(p_.out)}};
        } else {
          const std::uint64_t ub = out_base_ + (tile % buf_.out_buffers) * buf_.chunk_rows;
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
          epilogue_act = Pending{act, act_accesses};
          epilogue_store = Pending{
              StoreInsn(MemSpace::kUb, out_dram, chunk.out_stride, ub, 0, chunk.rows, nn),
              {{Space::kUb, ub, ub + chunk.rows, false}, WriteOf(p_.out)}};
        }
      }
      while (!prefetch.empty()) {
        Emit(prefetch.front());
        prefetch.pop_front();
      }
      if (c + 1 < p_.chunks.size() && buf_.a_buffers == 1) {
        for (Pending& load : ALoads(c + 1)) Emit(load);
      }
    }
    if (epilogue_act) Emit(*epilogue_act);
    if (epilogue_store) Emit(*epilogue_store);
  }

 private:
  struct WeightLoad {
    std::uint64_t dram, stride;
    std::uint32_t k, n;
  };

  std::uint64_t ASlot(std::size_t chunk) const { return (chunk % buf_.a_buffers) * a_slot_rows_; }

  void Emit(const Pending& pending) { b_.Emit(pending.insn, pending.accesses); }

  // Weight tiles in the order the MATMULs pop them.
  void BuildWeightList() {
    for (const Chunk& chunk : p_.chunks) {
      if (chunk.rows == 0 || chunk.rows > buf_.chunk_rows || chunk.steps.size() > buf_.max_steps) {
        throw std::logic_error("codegen: chunk does not match its buffer plan");
      }
      for (std::uint32_t j = 0; j < n_tiles_; ++j) {
        const std::uint32_t n0 = j * b_.C(), nn = std::min(b_.C(), p_.n - n0);
        for (const KStep& step : chunk.steps) {
          const std::uint64_t column = p_.weight_block_bytes != 0 ? j * p_.weight_block_bytes
                                                                  : std::uint64_t{n0} * e_;
          weights_.push_back({step.weight_dram + column, step.weight_stride, step.k, nn});
        }
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

  std::vector<Pending> ALoads(std::size_t c) const {
    const Chunk& chunk = p_.chunks[c];
    std::vector<Pending> loads;
    for (std::size_t s = 0; s < chunk.steps.size(); ++s) {
      const KStep& step = chunk.steps[s];
      std::uint32_t covered = 0;
      for (const RowSegment& seg : step.segments) {
        if (seg.first_row != covered || seg.rows == 0) {
          throw std::logic_error("codegen: row segments must cover the chunk in order");
        }
        covered += seg.rows;
        const std::uint64_t row = ASlot(c) + s * buf_.chunk_rows + seg.first_row;
        const Access ub{Space::kUb, row, row + seg.rows, true};
        if (seg.fill) {
          loads.push_back({LoadInsn(MemSpace::kUb, zero_row_.address, 0, row, 0, seg.rows, step.k),
                           {ub}});
        } else {
          loads.push_back({LoadInsn(MemSpace::kUb, seg.dram, seg.stride, row, 0, seg.rows, step.k),
                           {ub, ReadOf(p_.a)}});
        }
      }
      if (covered != chunk.rows) throw std::logic_error("codegen: row segments miss rows");
    }
    return loads;
  }

  ProgramBuilder& b_;
  const ImplicitGemm& p_;
  GemmBuffers buf_;
  std::uint64_t e_, out_e_;
  std::uint32_t n_tiles_;
  std::uint64_t out_base_ = 0, acc_slot_ = 0, a_slot_rows_ = 0;
  Tensor zero_row_;
  std::vector<WeightLoad> weights_;
  std::size_t pushed_ = 0, pops_ = 0;
};

}  // namespace

void EmitImplicitGemm(ProgramBuilder& builder, const ImplicitGemm& problem,
                      const GemmBuffers& buffers) {
  if (problem.n == 0) throw std::invalid_argument("codegen: GEMM with no output columns");
  Emitter(builder, problem, buffers).Run();
}

}  // namespace systole::codegen
