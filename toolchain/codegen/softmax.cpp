// Softmax along the last dimension, fused: out[r, j] = e^(x[r,j] − M_r) / Σ_j e^(x[r,j] − M_r)
// with M_r = max_j x[r, j], every intermediate kept in the unified buffer — one LOAD of the
// input and one STORE of the result per block of rows, instead of a device-memory round trip
// per operation (docs/CODEGEN.md, "Fused softmax").
//
// A row of n elements is k = ⌈n / W⌉ UB rows (W elements each); per block of rows:
//
//   LOAD x                                   k UB rows per row (a tail row is padded with −∞)
//   REDUCE max over=rows, then over=elems    M_r in element 0 of one UB row per row
//   VECTOR sub bcol math=exp (x, M) → E      e^(x − M), the subtraction in fp32, one rounding
//                                            (with `round_difference`: VECTOR sub bcol, then
//                                            VECTOR pass math=exp — x − M rounded to bf16 first,
//                                            as a bf16 program's subtract is)
//   REDUCE sum over=rows, then over=elems    S_r
//   VECTOR pass math=recip (S) → S           1 / S_r
//   VECTOR mul bcol (E, S) → E               the normalisation
//   STORE E
//
// The −∞ padding of a tail row gives e^(−∞ − M) = 0, so it adds nothing to the sum; E is a
// separate region so that the padding, LOADed once per slot, is never overwritten. A row that
// fits one UB row (k = 1) needs no padding: REDUCE over=elems reads its n elements only. Two
// slots let the next block load while one is computed.
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

// VECTOR dst = math(a op b) over `rows` rows; `per_row_b`: b is element 0 of row b + i (bcol),
// or with `one_b` element 0 of row b for every row (bcast + bcol).
isa::Instruction Vector(isa::VecOp op, isa::VecMath math, std::uint64_t a, std::uint64_t b, std::uint64_t dst,
                        std::uint64_t rows, bool one_b) {
  return isa::MakeInstruction(isa::Opcode::kVector, {{Field::kOp, static_cast<std::uint64_t>(op)},
                                                     {Field::kMath, static_cast<std::uint64_t>(math)},
                                                     {Field::kBcol, op == isa::VecOp::kPass ? 0u : 1u},
                                                     {Field::kBcast, one_b ? 1u : 0u},
                                                     {Field::kA, a},
                                                     {Field::kB, b},
                                                     {Field::kDst, dst},
                                                     {Field::kRows, rows}});
}

// Where one slot's regions start (UB rows): the input, the exponentials, the partial rows of a
// reduction over k > 1 UB rows, the maxima and the sums.
struct Slot {
  std::uint64_t x, e, partials, max, sum;
};

}  // namespace

std::uint64_t SoftmaxRowsPerBlock(const Config& config, std::uint64_t n) {
  const std::uint64_t width = config.UbRowElems(), k = (n + width - 1) / width;
  if (n == 0 || k > 65535) return 0;
  return std::min<std::uint64_t>(config.UbRows() / (2 * (2 * k + 3)), 65535 / k);
}

void Softmax(ProgramBuilder& builder, const Tensor& in, const Tensor& out, bool round_difference) {
  Require("softmax", builder.IsBf16(), "the vector unit's exp and recip need a bf16 configuration");
  Require("softmax", in.dtype == builder.ElementType() && out.dtype == builder.ElementType(),
          "in and out must have the configuration's element type");
  Require("softmax", !in.shape.empty() && in.Elements() > 0 && out.Elements() == in.Elements(),
          "in must not be empty and out must have its elements");
  const RowLayout layout(in.shape.back(), builder.UbRowElems());
  const std::uint64_t n = layout.n, rows = in.Elements() / n, k = layout.k;
  const std::uint64_t block = std::min(SoftmaxRowsPerBlock(builder.config(), n), rows);
  Require("softmax", block > 0, fmt::format("a row of {} elements does not fit the unified buffer twice", n));
  const auto slot_at = [&](std::uint64_t s) {
    const std::uint64_t base = s * block * (2 * k + 3);
    return Slot{base, base + block * k, base + 2 * block * k, base + 2 * block * k + block,
                base + 2 * block * k + 2 * block};
  };
  builder.BeginKernel(fmt::format("softmax {}x{}", rows, n));
  if (layout.PaddedTail()) {
    for (std::uint64_t s = 0; s < 2; ++s) FillTailRows(builder, layout, 0xFF80, slot_at(s).x, block);  // −∞
  }
  // dst = math(a op row scalar) for every row: one VECTOR when a row is one UB row, else one
  // per row with that row's scalar broadcast to its k UB rows.
  const auto per_row = [&](isa::VecOp op, isa::VecMath math, std::uint64_t a, std::uint64_t scalars,
                           std::uint64_t dst, std::uint64_t count) {
    if (k == 1) {
      builder.Emit(Vector(op, math, a, scalars, dst, count, false),
                   {{Space::kUb, a, a + count, false}, {Space::kUb, scalars, scalars + count, false},
                    {Space::kUb, dst, dst + count, true}});
      return;
    }
    for (std::uint64_t r = 0; r < count; ++r) {
      builder.Emit(Vector(op, math, a + r * k, scalars + r, dst + r * k, k, true),
                   {{Space::kUb, a + r * k, a + (r + 1) * k, false}, {Space::kUb, scalars + r, scalars + r + 1, false},
                    {Space::kUb, dst + r * k, dst + (r + 1) * k, true}});
    }
  };
  std::uint64_t s = 0;
  for (std::uint64_t r0 = 0; r0 < rows; r0 += block, ++s) {
    const std::uint64_t count = std::min(block, rows - r0);
    const Slot slot = slot_at(s % 2);
    TransferRows(builder, true, in, layout, r0, count, slot.x);
    ReduceEachRow(builder, isa::PoolOp::kMax, layout, slot.x, slot.partials, slot.max, count, 0);
    if (round_difference) {
      per_row(isa::VecOp::kSub, isa::VecMath::kNone, slot.x, slot.max, slot.e, count);
      const std::uint64_t e_rows = count * k;
      builder.Emit(Vector(isa::VecOp::kPass, isa::VecMath::kExp, slot.e, slot.e, slot.e, e_rows, false),
                   {{Space::kUb, slot.e, slot.e + e_rows, false}, {Space::kUb, slot.e, slot.e + e_rows, true}});
    } else {
      per_row(isa::VecOp::kSub, isa::VecMath::kExp, slot.x, slot.max, slot.e, count);
    }
    ReduceEachRow(builder, isa::PoolOp::kSum, layout, slot.e, slot.partials, slot.sum, count, 0);
    builder.Emit(Vector(isa::VecOp::kPass, isa::VecMath::kRecip, slot.sum, slot.sum, slot.sum, count, false),
                 {{Space::kUb, slot.sum, slot.sum + count, false}, {Space::kUb, slot.sum, slot.sum + count, true}});
    per_row(isa::VecOp::kMul, isa::VecMath::kNone, slot.e, slot.sum, slot.e, count);
    TransferRows(builder, false, out, layout, r0, count, slot.e);
  }
}

}  // namespace systole::codegen
