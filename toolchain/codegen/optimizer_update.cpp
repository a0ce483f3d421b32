// Optimizer updates on the accumulators: the parameters, their optimizer state and the gradient
// loaded as fp32 rows, combined by ACCVEC in IEEE binary32 (the host interpreter's f32 operations
// bit for bit, docs/NUMERICS.md "ACCVEC"), stored back, and the new parameters rounded to the
// element type by ACTIVATE for the next step's weight tiles (docs/TRAINING.md, "State in device
// memory").
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/codegen/require.hpp"

namespace systole::codegen {

namespace {

using isa::Field;
using isa::MemSpace;

isa::Instruction AccVecInsn(isa::AccOp op, std::uint64_t a, std::uint64_t b, std::uint64_t dst, std::uint64_t rows,
                            std::optional<float> immediate = std::nullopt) {
  return isa::MakeInstruction(isa::Opcode::kAccVec, {{Field::kOp, static_cast<std::uint64_t>(op)},
                                                     {Field::kA, a},
                                                     {Field::kB, immediate ? 0 : b},
                                                     {Field::kDst, dst},
                                                     {Field::kRows, rows},
                                                     {Field::kScalar, immediate ? 1u : 0u},
                                                     {Field::kImm, immediate ? std::bit_cast<std::uint32_t>(*immediate) : 0u}});
}

}  // namespace

void SgdMomentumUpdate(ProgramBuilder& builder, const Tensor& parameters, const Tensor& momentum,
                       const Tensor& gradient, const Tensor& weights, float mu, float learning_rate,
                       std::uint64_t rows_per_chunk) {
  const std::uint64_t c = builder.C();
  Require("sgd update", builder.IsBf16(), "needs a bf16 configuration (ACCVEC is fp32)");
  for (const Tensor* t : {&parameters, &momentum, &gradient}) {
    Require("sgd update", t->dtype == DataType::kFp32, "parameters, momentum and gradient must be fp32");
    Require("sgd update", t->shape == parameters.shape, "parameters, momentum and gradient must have one shape");
  }
  Require("sgd update", weights.dtype == builder.ElementType() && weights.Elements() == parameters.Elements(),
          "the weights must be the parameters' elements in the element type");
  Require("sgd update", !parameters.shape.empty() && parameters.shape.back() == c && parameters.Elements() > 0,
          fmt::format("tensors must be rows of C = {} elements", c));
  const std::uint64_t total = parameters.Elements() / c;
  // Two sets of four slots (p, m, g, a temporary): one set's rows load while the other's compute.
  const std::uint64_t chunk = std::min<std::uint64_t>(
      {total, rows_per_chunk != 0 ? rows_per_chunk : 32, builder.AccRows() / 8, builder.UbRows() / 2, 0xFFFF});
  Require("sgd update", chunk > 0, "the accumulators are too small");
  const std::uint64_t fp32_row = c * 4, element_row = c * weights.ElementBytes();
  std::uint64_t set = 0;
  for (std::uint64_t first = 0; first < total; first += chunk, ++set) {
    const std::uint64_t rows = std::min(chunk, total - first);
    // From the top of the accumulators and the UB down: a kernel before this one (the gradient's
    // GEMM) works from row 0 up, so p and m can load while it still runs.
    const std::uint64_t base = builder.AccRows() - (set % 2 + 1) * 4 * chunk;
    const std::uint64_t p = base, m = p + chunk, g = m + chunk, t = g + chunk;
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
    load(parameters, p);
    load(momentum, m);
    load(gradient, g);
    // The HLO's order: m' = (m * mu) + g; p' = p - (m' * lr).
    builder.Emit(AccVecInsn(isa::AccOp::kMul, m, 0, m, rows, mu), {acc(m, true)});
    builder.Emit(AccVecInsn(isa::AccOp::kAdd, m, g, m, rows), {acc(m, true), acc(g, false)});
    builder.Emit(AccVecInsn(isa::AccOp::kMul, m, 0, t, rows, learning_rate), {acc(m, false), acc(t, true)});
    builder.Emit(AccVecInsn(isa::AccOp::kSub, p, t, p, rows), {acc(p, true), acc(t, false)});
    const auto store = [&](const Tensor& tensor, std::uint64_t row) {
      builder.Emit(StoreInsn(MemSpace::kAcc, tensor.address + first * fp32_row, fp32_row, row, 0, rows, c),
                   {acc(row, false), bytes_of(tensor, fp32_row, true)});
    };
    store(parameters, p);
    store(momentum, m);
    // The element-type copy the next step's weight tiles load: ACTIVATE rounds to bf16 (RNE).
    builder.Emit(isa::MakeInstruction(isa::Opcode::kActivate, {{Field::kAcc, p}, {Field::kUb, ub}, {Field::kRows, rows}}),
                 {acc(p, false), {Space::kUb, ub, ub + rows, true}});
    builder.Emit(StoreInsn(MemSpace::kUb, weights.address + first * element_row, element_row, ub, 0, rows, c),
                 {{Space::kUb, ub, ub + rows, false}, bytes_of(weights, element_row, true)});
  }
}

}  // namespace systole::codegen
