// Row patterns shared by the fused row kernels (lower_softmax.cpp, lower_layer_norm.cpp): how
// a per-row value (a row's max, sum or mean) is reduced from and broadcast back over the rows
// of x, [rows, n] with n its last dimension, in the shapes JAX writes. Not a public API.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {

// `reduce` is a max (init −∞) or sum (init 0) over the last dimension of its operand.
bool ReducesLastDimension(const hlo::Instruction& reduce, bool max);

// A copy that keeps the row-major element order: reshape, bitcast, convert, or a broadcast that
// only adds unit dimensions.
bool KeepsElementOrder(const hlo::Instruction& i);

// The per-row value that `operand` (of x's shape) broadcasts along x's last dimension: walks
// back through one broadcast of x's leading dimensions and element-order-preserving copies of
// `rows` elements, appending them to `path`. nullptr when `operand` is not such a broadcast.
const hlo::Instruction* RowValueOf(const hlo::Instruction& operand, const hlo::Shape& x,
                                   std::vector<const hlo::Instruction*>& path);

// The per-column vector (γ, β: n elements) that `operand` (of x's shape) broadcasts over x's
// rows: one broadcast with dimensions {rank − 1} and element-order-preserving copies of n
// elements back to their source, which is returned (nullptr otherwise).
const hlo::Instruction* ColumnVectorOf(const hlo::Instruction& operand, const hlo::Shape& x);

// A row mean as JAX writes it: copies, one divide / multiply by a constant (the scale) and the
// reduce(add) over the last dimension of `summed` (or of its convert to f32), walked back from
// `value`, the path appended to `path`. nullopt when `value` is not one.
struct ScaledRowSum {
  const hlo::Instruction* reduce = nullptr;
  const hlo::Instruction* summed = nullptr;  // the value whose rows are summed
  std::uint32_t scale_bits = 0;             // fp32 bits of the scale (1.0f when none)
};
std::optional<ScaledRowSum> ScaledRowSumOf(const hlo::Instruction& value, std::vector<const hlo::Instruction*>& path);

// Every instruction of `covers` but `result` is read only by instructions of `covers` and is
// not the root: the pattern's intermediates are its own.
bool IntermediatesArePrivate(const std::vector<const hlo::Instruction*>& covers, const hlo::Instruction* result,
                             const Users& users, const hlo::Instruction* root);

}  // namespace systole::compiler::detail
