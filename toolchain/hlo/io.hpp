// Inputs and outputs as NumPy arrays (toolchain/npy), with the conventions every Systole tool
// shares: entry parameters in parameter-number order are arr_0, arr_1, …; outputs are the
// root's tuple elements flattened depth-first as arr_0, …; bf16 and f16 travel as float32,
// pred as uint8.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "toolchain/hlo/error.hpp"
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

// How InputsFromArrays treats a value its parameter's type cannot hold.
enum class InputConversion {
  kExact,  // refuse it: an integer or pred parameter takes only exact in-range integers (never
           // NaN), a floating one any value that does not overflow to infinity (rounded RNE:
           // bf16 and f16 arrive as float32). What `.s` programs accept, too.
  kLossy,  // convert it as XLA's convert would: integers truncate and saturate, NaN becomes 0,
           // pred is value != 0, floats overflow to infinity (systole run --lossy-inputs).
};

// A value that InputConversion::kExact refuses (shape and count errors are plain HloErrors).
class LossyInputError : public HloError {
 public:
  using HloError::HloError;
};

// Entry arguments from arrays; shapes must match exactly. `origin` (the .npz) starts every
// error, which names the array, its dtype, the parameter, its type and the element.
std::vector<Literal> InputsFromArrays(const Module& module, const std::vector<npy::Array>& arrays,
                                      InputConversion conversion = InputConversion::kExact,
                                      std::string_view origin = "inputs");

// The result's arrays, tuples flattened depth-first.
std::vector<npy::Array> OutputArrays(const Literal& result);

npy::ElementType NpyTypeFor(ElementType type);

}  // namespace systole::hlo
