// Optimizer updates on the accumulators: the parameters, their optimizer state and the gradient
// loaded as fp32 rows, combined by ACCVEC in IEEE binary32 (the host interpreter's f32 operations
// bit for bit, docs/NUMERICS.md "ACCVEC"), stored back, and the new parameters rounded to the
// element type by ACTIVATE for the next step's weight tiles (docs/TRAINING.md, "State in device
// memory").
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <functional>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/codegen/require.hpp"

namespace systole::codegen {

namespace {

using isa::AccOp;
using isa::Field;
using isa::MemSpace;

// What one optimizer keeps: the fp32 tensors loaded and stored back (parameters first), the
// gradient, loaded only, and the element-type copy of the new parameters.
struct UpdateTensors {
  std::vector<const Tensor*> state;  // parameters, then the optimizer's state, stored back in place
  const Tensor* gradient = nullptr;
  const UpdateCopies* copies = nullptr;
  const Tensor* scalar = nullptr;    // optional: one fp32 value loaded into its own row
  std::size_t temporaries = 1;       // accumulator slots the arithmetic needs besides those
};

// The accumulator rows of one chunk: one slot per state tensor, the gradient, the temporaries.
struct Slots {
  std::vector<std::uint64_t> state;
  std::uint64_t gradient = 0;
  std::vector<std::uint64_t> temporary;
  std::uint64_t scalar = 0;  // the scalar's row
};

// The chunked schedule both updates share: `arithmetic(slots, rows)` emits the ACCVECs of one
// chunk of `rows` rows between its loads and its stores and returns the slot of the step it
// subtracted from the parameters (p' = p − step), which the replicas subtract too.
void EmitUpdate(ProgramBuilder& builder, const char* kernel, const UpdateTensors& tensors,
                std::uint64_t rows_per_chunk,
                const std::function<std::uint64_t(const Slots&, std::uint64_t)>& arithmetic) {
  const std::uint64_t c = builder.C();
  const Tensor& parameters = *tensors.state.at(0);
  Require(kernel, builder.IsBf16(), "needs a bf16 configuration (ACCVEC is fp32)");
  std::vector<const Tensor*> fp32 = tensors.state;
  fp32.push_back(tensors.gradient);
  for (const Tensor* t : fp32) {
    Require(kernel, t->dtype == DataType::kFp32, "parameters, optimizer state and gradient must be fp32");
    Require(kernel, t->shape == parameters.shape, "parameters, optimizer state and gradient must have one shape");
  }
  const std::optional<Tensor>& weights = tensors.copies->weights;
  Require(kernel, !weights || (weights->dtype == builder.ElementType() && weights->Elements() == parameters.Elements()),
          "the weights must be the parameters' elements in the element type");
  Require(kernel, !parameters.shape.empty() && parameters.shape.back() == c && parameters.Elements() > 0,
          fmt::format("tensors must be rows of C = {} elements", c));
  const std::uint64_t total = parameters.Elements() / c;
  for (const Tensor& replica : tensors.copies->replicated) {
    Require(kernel, replica.dtype == DataType::kFp32 && replica.shape.size() == 3 && replica.shape[0] == total &&
                        replica.shape[1] > 0 && replica.shape[2] == c,
            fmt::format("a replica must be fp32 [{}, rows, {}]: each parameter row replicated", total, c));
  }
  Require(kernel, tensors.scalar == nullptr || (tensors.scalar->dtype == DataType::kFp32 && tensors.scalar->Elements() == 1),
          "the scalar must be one fp32 value");
  const std::uint64_t slots = fp32.size() + tensors.temporaries;
  // Two sets of slots: one set's rows load while the other's compute (and a row for the scalar).
  const std::uint64_t chunk = std::min<std::uint64_t>({total, rows_per_chunk != 0 ? rows_per_chunk : 32,
                                                       (builder.AccRows() - 1) / (2 * slots), builder.UbRows() / 2, 0xFFFF});
  Require(kernel, chunk > 0, "the accumulators are too small");
  const std::uint64_t fp32_row = c * 4, element_row = weights ? c * weights->ElementBytes() : 0;
  const std::uint64_t scalar_row = builder.AccRows() - 1;
  // The replicas pass through the accumulators below the slots, `piece` rows at a time, in two
  // alternating halves (one loads while the other is subtracted and stored).
  const std::uint64_t below_slots = scalar_row - 2 * slots * chunk;
  const std::uint64_t piece = std::min<std::uint64_t>(below_slots / 2, 0xFFFF);
  Require(kernel, tensors.copies->replicated.empty() || piece > 0, "the accumulators are too small for the replicas");
  std::uint64_t replica_pieces = 0;
  if (tensors.scalar != nullptr) {
    builder.Emit(LoadInsn(MemSpace::kAcc, tensors.scalar->address, 4, scalar_row, 0, 1, 1),
                 {{Space::kAcc, scalar_row, scalar_row + 1, true}, ReadOf(*tensors.scalar)});
  }
  std::uint64_t set = 0;
  for (std::uint64_t first = 0; first < total; first += chunk, ++set) {
    const std::uint64_t rows = std::min(chunk, total - first);
    // From the top of the accumulators and the UB down: a kernel before this one (the gradient's
    // GEMM) works from row 0 up, so the state can load while it still runs.
    std::uint64_t next = scalar_row - (set % 2 + 1) * slots * chunk;
    Slots s;
    s.scalar = scalar_row;
    for (std::size_t i = 0; i < tensors.state.size(); ++i, next += chunk) s.state.push_back(next);
    s.gradient = next;
    next += chunk;
    for (std::size_t i = 0; i < tensors.temporaries; ++i, next += chunk) s.temporary.push_back(next);
    const std::uint64_t ub = builder.UbRows() - (set % 2 + 1) * chunk;
    const auto acc = [&](std::uint64_t row, bool write) { return Access{Space::kAcc, row, row + rows, write}; };
    // This chunk's bytes of a tensor (not the whole tensor: the next chunk's loads need not wait
    // for this one's stores).
    const auto bytes_of = [&](const Tensor& tensor, std::uint64_t row_bytes, bool write) {
      return Access{Space::kDram, tensor.address + first * row_bytes, tensor.address + (first + rows) * row_bytes, write};
    };
    const auto load = [&](const Tensor& tensor, std::uint64_t row) {
      builder.Emit(LoadInsn(MemSpace::kAcc, tensor.address + first * fp32_row, fp32_row, row, 0, rows, c),
                   {acc(row, true), bytes_of(tensor, fp32_row, false)});
    };
    for (std::size_t i = 0; i < tensors.state.size(); ++i) load(*tensors.state[i], s.state[i]);
    load(*tensors.gradient, s.gradient);
    const std::uint64_t step = arithmetic(s, rows);
    for (std::size_t i = 0; i < tensors.state.size(); ++i) {
      builder.Emit(StoreInsn(MemSpace::kAcc, tensors.state[i]->address + first * fp32_row, fp32_row, s.state[i], 0, rows, c),
                   {acc(s.state[i], false), bytes_of(*tensors.state[i], fp32_row, true)});
    }
    if (weights) {
      // The element-type copy the next step's weight tiles load: ACTIVATE rounds to bf16 (RNE).
      builder.Emit(isa::MakeInstruction(isa::Opcode::kActivate, {{Field::kAcc, s.state[0]}, {Field::kUb, ub}, {Field::kRows, rows}}),
                   {acc(s.state[0], false), {Space::kUb, ub, ub + rows, true}});
      builder.Emit(StoreInsn(MemSpace::kUb, weights->address + first * element_row, element_row, ub, 0, rows, c),
                   {{Space::kUb, ub, ub + rows, false}, bytes_of(*weights, element_row, true)});
    }
    // Each replica of each parameter row of the chunk: R − step, the step's row broadcast.
    for (const Tensor& replica : tensors.copies->replicated) {
      const std::uint64_t replica_rows = replica.shape[1];
      for (std::uint64_t r = 0; r < rows; ++r) {
        for (std::uint64_t at = 0; at < replica_rows; at += piece, ++replica_pieces) {
          const std::uint64_t n = std::min(piece, replica_rows - at);
          const std::uint64_t base = (replica_pieces % 2) * piece;
          const std::uint64_t address = replica.address + ((first + r) * replica_rows + at) * fp32_row;
          const Access region{Space::kAcc, base, base + n, true};
          const Access bytes{Space::kDram, address, address + n * fp32_row, false};
          builder.Emit(LoadInsn(MemSpace::kAcc, address, fp32_row, base, 0, n, c), {region, bytes});
          builder.Emit(isa::MakeInstruction(isa::Opcode::kAccVec, {{Field::kOp, static_cast<std::uint64_t>(AccOp::kSub)},
                                                                   {Field::kA, base},
                                                                   {Field::kB, step + r},
                                                                   {Field::kDst, base},
                                                                   {Field::kRows, n},
                                                                   {Field::kBcast, 1}}),
                       {{Space::kAcc, base, base + n, false}, region, {Space::kAcc, step + r, step + r + 1, false}});
          builder.Emit(StoreInsn(MemSpace::kAcc, address, fp32_row, base, 0, n, c),
                       {{Space::kAcc, base, base + n, false}, {Space::kDram, address, address + n * fp32_row, true}});
        }
      }
    }
  }
}

// ACCVEC over `rows` rows, dst = a op b: b a row per row (Rows), an immediate (Immediate), or
// element 0 of the scalar row (ByScalarRow).
struct AccVec {
  ProgramBuilder& builder;
  std::uint64_t rows;
  std::uint64_t scalar_row;

  void Rows(AccOp op, std::uint64_t dst, std::uint64_t a, std::optional<std::uint64_t> b) const {
    std::vector<Access> accesses = {{Space::kAcc, a, a + rows, false}, {Space::kAcc, dst, dst + rows, true}};
    if (b) accesses.push_back({Space::kAcc, *b, *b + rows, false});
    builder.Emit(isa::MakeInstruction(isa::Opcode::kAccVec, {{Field::kOp, static_cast<std::uint64_t>(op)},
                                                             {Field::kA, a},
                                                             {Field::kB, b.value_or(0)},
                                                             {Field::kDst, dst},
                                                             {Field::kRows, rows}}),
                 accesses);
  }
  void Immediate(AccOp op, std::uint64_t dst, std::uint64_t a, float imm) const {
    builder.Emit(isa::MakeInstruction(isa::Opcode::kAccVec, {{Field::kOp, static_cast<std::uint64_t>(op)},
                                                             {Field::kA, a},
                                                             {Field::kDst, dst},
                                                             {Field::kRows, rows},
                                                             {Field::kScalar, 1},
                                                             {Field::kImm, std::bit_cast<std::uint32_t>(imm)}}),
                 {{Space::kAcc, a, a + rows, false}, {Space::kAcc, dst, dst + rows, true}});
  }
  // b = element 0 of the scalar row, for every element.
  void ByScalarRow(AccOp op, std::uint64_t dst, std::uint64_t a) const {
    builder.Emit(isa::MakeInstruction(isa::Opcode::kAccVec, {{Field::kOp, static_cast<std::uint64_t>(op)},
                                                             {Field::kA, a},
                                                             {Field::kB, scalar_row},
                                                             {Field::kDst, dst},
                                                             {Field::kRows, rows},
                                                             {Field::kBcast, 1},
                                                             {Field::kBcol, 1}}),
                 {{Space::kAcc, a, a + rows, false}, {Space::kAcc, dst, dst + rows, true},
                  {Space::kAcc, scalar_row, scalar_row + 1, false}});
  }
};

}  // namespace

void SgdMomentumUpdate(ProgramBuilder& builder, const Tensor& parameters, const Tensor& momentum,
                       const Tensor& gradient, const UpdateCopies& copies, float mu, float learning_rate,
                       std::uint64_t rows_per_chunk) {
  const UpdateTensors tensors{{&parameters, &momentum}, &gradient, &copies, nullptr, 1};
  EmitUpdate(builder, "sgd update", tensors, rows_per_chunk, [&](const Slots& s, std::uint64_t rows) {
    const AccVec v{builder, rows, s.scalar};
    const std::uint64_t p = s.state[0], m = s.state[1], g = s.gradient, t = s.temporary[0];
    // The HLO's order: m' = (m * mu) + g; p' = p - (m' * lr).
    v.Immediate(AccOp::kMul, m, m, mu);
    v.Rows(AccOp::kAdd, m, m, g);
    v.Immediate(AccOp::kMul, t, m, learning_rate);
    v.Rows(AccOp::kSub, p, p, t);
    return t;
  });
}

void AdamUpdate(ProgramBuilder& builder, const Tensor& parameters, const Tensor& first_moment,
                const Tensor& second_moment, const Tensor& gradient, const Tensor& step_size,
                const UpdateCopies& copies, const AdamParams& params, std::uint64_t rows_per_chunk) {
  const UpdateTensors tensors{{&parameters, &first_moment, &second_moment}, &gradient, &copies, &step_size, 2};
  EmitUpdate(builder, "adam update", tensors, rows_per_chunk, [&](const Slots& s, std::uint64_t rows) {
    const AccVec v{builder, rows, s.scalar};
    const std::uint64_t p = s.state[0], m = s.state[1], w = s.state[2], g = s.gradient;
    const std::uint64_t t = s.temporary[0], u = s.temporary[1];
    // optax's order (mlp_adam_step.hlo): m' = m·b1 + g·(1−b1); v' = v·b2 + (g·(1−b2))·g;
    // p' = p − (s·m') / (sqrt(v') + eps), s the step size the host computes from the count.
    v.Immediate(AccOp::kMul, m, m, params.b1);
    v.Immediate(AccOp::kMul, t, g, params.one_minus_b1);
    v.Rows(AccOp::kAdd, m, m, t);
    v.Immediate(AccOp::kMul, w, w, params.b2);
    v.Immediate(AccOp::kMul, t, g, params.one_minus_b2);
    v.Rows(AccOp::kMul, t, t, g);
    v.Rows(AccOp::kAdd, w, w, t);
    v.ByScalarRow(AccOp::kMul, u, m);  // m'·s: the HLO's s·m', the same product
    v.Rows(AccOp::kSqrt, t, w, std::nullopt);
    v.Immediate(AccOp::kAdd, t, t, params.epsilon);
    v.Rows(AccOp::kDiv, u, u, t);
    v.Rows(AccOp::kSub, p, p, u);
    return u;
  });
}

}  // namespace systole::codegen
