// The CPU interpreter: evaluates HLO on Literals, the numerical reference for whole programs.
//
// Numerics (docs/HLO.md): every op computes in double and rounds its result to the result's
// element type (RNE for bf16/f16/f32), so bf16 tensors are rounded after every op as XLA
// would; dot and convolution accumulate in double and round once at the end; reductions fold
// in row-major order, rounding after every application of the reducer.
#pragma once

#include <vector>

#include "toolchain/hlo/ir.hpp"

namespace systole::hlo {

class Interpreter {
 public:
  explicit Interpreter(const Module& module) : module_(module) {}

  // Runs the entry computation; `arguments` are in parameter-number order and must match the
  // parameters' shapes (values are rounded to the parameter's element type).
  Literal Run(const std::vector<Literal>& arguments) const;
  Literal Run(const Computation& computation, const std::vector<const Literal*>& arguments) const;

 private:
  const Module& module_;
};

// Evaluates one instruction on the values of its operands (called computations are run by a
// nested interpreter). Constant folding uses this.
Literal EvaluateInstruction(const Instruction& instruction, const std::vector<const Literal*>& operands);

}  // namespace systole::hlo
