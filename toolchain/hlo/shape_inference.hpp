// Shape inference: the shape each instruction must have given its operands and attributes.
// The verifier compares it with the printed shape, so a dump whose shapes disagree with its
// own operations is rejected before anything runs on it.
#pragma once

#include "toolchain/hlo/ir.hpp"

namespace systole::hlo {

// The shape `instruction` must have. Throws HloError (at the instruction, naming it) when
// operands or attributes are inconsistent. Where HLO takes a result property from the printed
// shape alone (parameter, constant, iota, the element type of convert, dot and convolution,
// the dimensions of broadcast and reshape), that part is taken from `instruction.shape`.
Shape InferShape(const Instruction& instruction);

}  // namespace systole::hlo
