// The verifier: structural rules (roots, parameters, operands inside their computation, no
// cycles, no recursion) and shape inference for every instruction, whose result must match the
// printed shape. Run after parsing and after every pass (pass.hpp).
#pragma once

#include "toolchain/hlo/ir.hpp"

namespace systole::hlo {

// Throws HloError naming the instruction and, for a shape mismatch, both shapes.
void Verify(const Module& module);

}  // namespace systole::hlo
