// Inputs and outputs as NumPy arrays (toolchain/npy), with the conventions every Systole tool
// shares: entry parameters in parameter-number order are arr_0, arr_1, …; outputs are the
// root's tuple elements flattened depth-first as arr_0, …; bf16 and f16 travel as float32,
// pred as uint8.
#pragma once

#include <cstdint>
#include <vector>

#include "toolchain/hlo/ir.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::hlo {

// Deterministic inputs for the entry computation, so that other tools reproduce them exactly.
// One std::mt19937_64 seeded with `seed` is drawn in parameter order, each array in row-major
// order, one draw per element:
//   floating types: u = (draw >> 11) * 2^-53 in [0, 1), value = 2u - 1 in [-1, 1), then rounded
//                   to the parameter's type (RNE);
//   signed integers: (draw % 17) - 8, in [-8, 8];  unsigned: draw % 17;  pred: draw & 1.
std::vector<Literal> RandomInputs(const Module& module, std::uint64_t seed);

// Entry arguments from arrays; shapes must match exactly, values are rounded to the type.
std::vector<Literal> InputsFromArrays(const Module& module, const std::vector<npy::Array>& arrays);

// The result's arrays, tuples flattened depth-first.
std::vector<npy::Array> OutputArrays(const Literal& result);

npy::ElementType NpyTypeFor(ElementType type);

}  // namespace systole::hlo
