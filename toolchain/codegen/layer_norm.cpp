// Layer norm along the last dimension, fused: y = (x − mean) · rsqrt(var + ε) [· γ] [+ β] with
// mean and var the row means of x and of (x − mean)², every intermediate kept in the unified
// buffer — one LOAD of the input and one STORE of the result per block of rows (docs/CODEGEN.md,
// "Fused layer norm").
//
// A row of n elements is k = ⌈n / W⌉ UB rows; per block of rows, with the same roundings as
// RowReduce and Elementwise step by step:
//
//   LOAD x                                       X (a tail row's padding is +0, loaded once)
//   REDUCE sum over=rows, over=elems, scale 1/n  mean
//   VECTOR sub bcol (X, mean) → D                d = x − mean
//   VECTOR mul (D, D) → Q                        d², a tail row's padding zeroed by a mask row
//   REDUCE sum … scale 1/n                       var
//   VECTOR add bcast bcol (var, ε) → var         var + ε
//   VECTOR pass math=rsqrt (var) → var           r
//   VECTOR mul bcol (D, r) → D                   d · r
//   VECTOR mul (D, γ) → D, VECTOR add (D, β) → D  when given: γ and β are k UB rows, loaded once
//   STORE D
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/codegen/require.hpp"
#include "toolchain/codegen/row_blocks.hpp"

namespace systole::codegen {
namespace {

using isa::Field;
using isa::MemSpace;

struct VectorOperands {
  std::uint64_t a, b, dst, rows;
  bool bcast = false, bcol = false;
};
isa::Instruction Vector(isa::VecOp op, isa::VecMath math, const VectorOperands& v) {
  return isa::MakeInstruction(isa::Opcode::kVector, {{Field::kOp, static_cast<std::uint64_t>(op)},
                                                     {Field::kMath, static_cast<std::uint64_t>(math)},
                                                     {Field::kBcol, v.bcol ? 1u : 0u},
                                                     {Field::kBcast, v.bcast ? 1u : 0u},
                                                     {Field::kA, v.a},
                                                     {Field::kB, v.b},
                                                     {Field::kDst, v.dst},
                                                     {Field::kRows, v.rows}});
}

}  // namespace

std::uint64_t LayerNormRowsPerBlock(const Config& config, std::uint64_t n) {
  const std::uint64_t width = config.UbRowElems(), k = (n + width - 1) / width;
  const std::uint64_t shared = 2 * k + 2;  // γ, β, the ε row and the mask row
  if (n == 0 || k > 65535 || config.UbRows() <= shared) return 0;
  return std::min<std::uint64_t>((config.UbRows() - shared) / (2 * (3 * k + 3)), 65535 / k);
}

void LayerNorm(ProgramBuilder& builder, const Tensor& in, const Tensor& out, const LayerNormParams& params) {
  Require("layer norm", builder.IsBf16(), "the vector unit's rsqrt and REDUCE's scale need a bf16 configuration");
  Require("layer norm", in.dtype == builder.ElementType() && out.dtype == builder.ElementType(),
          "in and out must have the configuration's element type");
  Require("layer norm", !in.shape.empty() && in.Elements() > 0 && out.Elements() == in.Elements(),
          "in must not be empty and out must have its elements");
  const std::uint64_t n = in.shape.back(), rows = in.Elements() / n;
  for (const Tensor* t : {params.gamma ? &*params.gamma : nullptr, params.beta ? &*params.beta : nullptr}) {
    Require("layer norm", t == nullptr || (t->dtype == in.dtype && t->Elements() == n),
            fmt::format("gamma and beta must be {} elements of the element type", n));
  }
  const RowLayout layout(n, builder.UbRowElems());
  const std::uint64_t width = layout.width, full = layout.full, tail = layout.tail, k = layout.k;
  const std::uint64_t block = std::min(LayerNormRowsPerBlock(builder.config(), n), rows);
  Require("layer norm", block > 0, fmt::format("a row of {} elements does not fit the unified buffer twice", n));
  const bool padded_tail = layout.PaddedTail();
  builder.BeginKernel(fmt::format("layer norm {}x{}", rows, n));

  // Shared rows: γ (k), β (k), ε (element 0), the tail mask (1 for the t elements, 0 after).
  const std::uint64_t gamma_row = 0, beta_row = k, eps_row = 2 * k, mask_row = 2 * k + 1, slots = 2 * k + 2;
  // γ and β as one row of n elements each.
  if (params.gamma) TransferRows(builder, true, *params.gamma, layout, 0, 1, gamma_row);
  if (params.beta) TransferRows(builder, true, *params.beta, layout, 0, 1, beta_row);
  const Tensor eps = builder.FillRow(params.epsilon_bits);
  builder.Emit(LoadInsn(MemSpace::kUb, eps.address, 0, eps_row, 0, 1, width),
               {{Space::kUb, eps_row, eps_row + 1, true}, ReadOf(eps)});
  const Tensor zero = builder.FillRow(0x0000);
  if (padded_tail) {
    const Tensor one = builder.FillRow(0x3F80);  // bf16 1.0
    builder.Emit(LoadInsn(MemSpace::kUb, zero.address, 0, mask_row, 0, 1, width),
                 {{Space::kUb, mask_row, mask_row + 1, true}, ReadOf(zero)});
    builder.Emit(LoadInsn(MemSpace::kUb, one.address, 0, mask_row, 0, 1, tail),
                 {{Space::kUb, mask_row, mask_row + 1, true}, ReadOf(one)});
  }
  struct Slot {
    std::uint64_t x, d, q, partials, mean, var;
  };
  const auto slot_at = [&](std::uint64_t s) {
    const std::uint64_t base = slots + s * block * (3 * k + 3);
    return Slot{base, base + block * k, base + 2 * block * k, base + 3 * block * k, base + 3 * block * k + block,
                base + 3 * block * k + 2 * block};
  };
  if (padded_tail) {  // x's tail padding: +0, which adds nothing to a sum
    for (std::uint64_t s = 0; s < 2; ++s) FillTailRows(builder, layout, 0x0000, slot_at(s).x, block);
  }

  // One VECTOR over `count` rows of k UB rows: a op b into dst, where b is, per `kind`, the same
  // rows (elementwise), one scalar per row (bcol) or a shared vector of k rows (γ, β).
  enum class B { kSame, kRowScalar, kSharedVector };
  const auto vector = [&](isa::VecOp op, std::uint64_t a, B kind, std::uint64_t b, std::uint64_t dst,
                          std::uint64_t count) {
    const auto emit = [&](const VectorOperands& v, std::uint64_t b_rows) {
      builder.Emit(Vector(op, isa::VecMath::kNone, v),
                   {{Space::kUb, v.a, v.a + v.rows, false}, {Space::kUb, v.b, v.b + b_rows, false},
                    {Space::kUb, v.dst, v.dst + v.rows, true}});
    };
    if (kind == B::kSame) {
      emit({a, b, dst, count * k}, count * k);
    } else if (kind == B::kRowScalar && k == 1) {
      emit({a, b, dst, count, false, true}, count);
    } else if (kind == B::kSharedVector && k == 1) {
      emit({a, b, dst, count, true, false}, 1);
    } else {
      for (std::uint64_t r = 0; r < count; ++r) {
        if (kind == B::kRowScalar) {
          emit({a + r * k, b + r, dst + r * k, k, true, true}, 1);
        } else {
          emit({a + r * k, b, dst + r * k, k, false, false}, k);
        }
      }
    }
  };
  std::uint64_t s = 0;
  for (std::uint64_t r0 = 0; r0 < rows; r0 += block, ++s) {
    const std::uint64_t count = std::min(block, rows - r0);
    const Slot slot = slot_at(s % 2);
    TransferRows(builder, true, in, layout, r0, count, slot.x);
    ReduceEachRow(builder, isa::PoolOp::kSum, layout, slot.x, slot.partials, slot.mean, count, params.inverse_n_bits);
    vector(isa::VecOp::kSub, slot.x, B::kRowScalar, slot.mean, slot.d, count);
    vector(isa::VecOp::kMul, slot.d, B::kSame, slot.d, slot.q, count);
    if (padded_tail) {  // (0 − mean)² in the tail rows' padding: back to +0 (d² ≥ 0, so · 0 is +0)
      for (std::uint64_t r = 0; r < count; ++r) {
        const std::uint64_t row = slot.q + r * k + full;
        builder.Emit(Vector(isa::VecOp::kMul, isa::VecMath::kNone, {row, mask_row, row, 1}),
                     {{Space::kUb, row, row + 1, false}, {Space::kUb, mask_row, mask_row + 1, false},
                      {Space::kUb, row, row + 1, true}});
      }
    }
    ReduceEachRow(builder, isa::PoolOp::kSum, layout, slot.q, slot.partials, slot.var, count, params.inverse_n_bits);
    builder.Emit(Vector(isa::VecOp::kAdd, isa::VecMath::kNone, {slot.var, eps_row, slot.var, count, true, true}),
                 {{Space::kUb, slot.var, slot.var + count, false}, {Space::kUb, eps_row, eps_row + 1, false},
                  {Space::kUb, slot.var, slot.var + count, true}});
    builder.Emit(Vector(isa::VecOp::kPass, isa::VecMath::kRsqrt, {slot.var, slot.var, slot.var, count}),
                 {{Space::kUb, slot.var, slot.var + count, false}, {Space::kUb, slot.var, slot.var + count, true}});
    vector(isa::VecOp::kMul, slot.d, B::kRowScalar, slot.var, slot.d, count);
    if (params.gamma) vector(isa::VecOp::kMul, slot.d, B::kSharedVector, gamma_row, slot.d, count);
    if (params.beta) vector(isa::VecOp::kAdd, slot.d, B::kSharedVector, beta_row, slot.d, count);
    TransferRows(builder, false, out, layout, r0, count, slot.d);
  }
}

}  // namespace systole::codegen
