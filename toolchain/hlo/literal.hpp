// Literal: a value of an HLO shape. Array elements are stored as doubles in row-major order,
// which hold every pred, s8…s32, u8…u32, bf16, f16 and f32 value exactly (s64/u64 beyond 2^53
// lose precision — documented in docs/HLO.md); the element type says how they round.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolchain/hlo/shape.hpp"

namespace systole::hlo {

struct Literal {
  Shape shape;
  std::vector<double> values;    // arrays: shape.Elements() values, row-major
  std::vector<Literal> elements; // tuples: one literal per tuple element

  Literal() = default;
  explicit Literal(Shape literal_shape);  // zero-filled
  static Literal Scalar(ElementType type, double value);

  std::string ToString(std::size_t max_values = 8) const;  // `f32[3] {1, 2, 3}`
};

// Rounds `value` to what an element of `type` can hold: RNE to bf16/f16/f32 (keeping
// subnormals), integers truncated toward zero and saturated to their range (NaN -> 0),
// pred -> 0 or 1. f64 is returned unchanged.
double RoundToType(ElementType type, double value);
void RoundAll(ElementType type, std::vector<double>& values);
// reduce-precision: RNE to a float with the given exponent and mantissa widths.
double RoundToPrecision(double value, int exponent_bits, int mantissa_bits);

}  // namespace systole::hlo
