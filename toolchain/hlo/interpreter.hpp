// The CPU interpreter: evaluates HLO on Literals, the numerical reference for whole programs.
//
// Numerics (docs/HLO.md): every op computes in double and rounds its result to the result's
// element type (RNE for bf16/f16/f32), so bf16 tensors are rounded after every op as XLA
// would; dot and convolution accumulate in double and round once at the end; reductions fold
// in row-major order, rounding after every application of the reducer.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "toolchain/hlo/ir.hpp"

namespace systole::hlo {

class Interpreter {
 public:
  // A while loop still running after this many iterations is an error (HloError naming the
  // loop), not a hang: the interpreter is the compiler's reference and the host half of every
  // model.
  static constexpr std::int64_t kDefaultWhileIterationLimit = 1'000'000;

  explicit Interpreter(const Module& module, std::int64_t while_iteration_limit = kDefaultWhileIterationLimit)
      : module_(module), while_iteration_limit_(while_iteration_limit) {}

  // Runs the entry computation; `arguments` are in parameter-number order and must match the
  // parameters' shapes (values are rounded to the parameter's element type).
  Literal Run(const std::vector<Literal>& arguments) const;
  Literal Run(const Computation& computation, const std::vector<const Literal*>& arguments) const;

 private:
  const Module& module_;
  std::int64_t while_iteration_limit_;
};

// Runs a `while` or `conditional` by the interpreter's rules — a while's condition first and
// the iteration limit (an HloError naming the loop past it); a conditional's pred selecting
// branch 0 or 1, its s32 index branch i, out of range the last (XLA's rule) — with every call
// of a called computation made through `run`. The runtime runs loops with device work by it.
using CalledComputationRunner = std::function<Literal(const Computation&, const std::vector<const Literal*>&)>;
Literal EvaluateControlFlow(const Instruction& instruction, const std::vector<const Literal*>& operands,
                            const CalledComputationRunner& run, std::int64_t while_iteration_limit);

// Evaluates one instruction on the values of its operands (called computations are run by a
// nested interpreter). Constant folding uses this.
Literal EvaluateInstruction(const Instruction& instruction, const std::vector<const Literal*>& operands);

}  // namespace systole::hlo
