// The interpreter's kernels, one family per file. Internal to the interpreter.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "toolchain/hlo/ir.hpp"

namespace systole::hlo::detail {

using Operands = std::vector<const Literal*>;
// Runs a called computation on scalar or array arguments.
using ComputationRunner = std::function<Literal(const Computation&, const Operands&)>;

// interp_elementwise.cpp: unary, binary, compare, select, clamp, convert.
Literal EvalElementwise(const Instruction& instruction, const Operands& operands);
double ApplyBinary(Opcode opcode, ElementType type, double lhs, double rhs);

// interp_data.cpp: broadcast, reshape, transpose, slice, pad, concatenate, dynamic-slice,
// reverse, iota, tuple, get-tuple-element.
Literal EvalDataMovement(const Instruction& instruction, const Operands& operands);
// out[i] = in[base + Σ index_d * strides[d]] over the row-major indices of `out_dims`.
std::vector<double> StridedGather(const std::vector<double>& in, std::int64_t base,
                                  const std::vector<std::int64_t>& out_dims,
                                  const std::vector<std::int64_t>& strides);
// The operand's values with its dimensions reordered: result dimension k is operand dimension
// order[k].
std::vector<double> Permute(const Literal& operand, const std::vector<std::int64_t>& order);

// interp_dot_conv.cpp
Literal EvalDot(const Instruction& instruction, const Operands& operands);
Literal EvalConvolution(const Instruction& instruction, const Operands& operands);

// interp_reduce.cpp
// Folds values into accumulators: acc[k] = reducer(acc[k], x[k]) for N parallel reductions. A
// reducer that is one binary op of its two parameters (add, max, …: every reducer in real
// dumps) runs directly; any other is interpreted per call.
class Folder {
 public:
  Folder(const Computation& reducer, const std::vector<ElementType>& types, const ComputationRunner& run);
  void Fold(std::vector<double>& acc, const std::vector<double>& x) const;

 private:
  const Computation& reducer_;
  std::vector<ElementType> types_;
  const ComputationRunner& run_;
  std::optional<Opcode> simple_;
  bool swapped_ = false;
};
Literal EvalReduce(const Instruction& instruction, const Operands& operands, const ComputationRunner& run);
Literal EvalReduceWindow(const Instruction& instruction, const Operands& operands, const ComputationRunner& run);
Literal EvalSelectAndScatter(const Instruction& instruction, const Operands& operands, const ComputationRunner& run);

// interp_batch_norm.cpp: batch-norm-training, -inference and -grad.
Literal EvalBatchNorm(const Instruction& instruction, const Operands& operands);

// interp_indexed.cpp: gather, scatter, sort, dynamic-update-slice.
Literal EvalIndexed(const Instruction& instruction, const Operands& operands, const ComputationRunner& run);

[[noreturn]] void Unsupported(const Instruction& instruction, const std::string& what);

}  // namespace systole::hlo::detail
