#include "toolchain/hlo/literal.hpp"

#include <fmt/core.h>

#include <cmath>
#include <limits>

namespace systole::hlo {

namespace {

// Rounds to a binary float with `mantissa_bits` explicit fraction bits and minimum normal
// exponent `min_exponent`, to nearest with ties to even, keeping subnormals. Values beyond the
// largest finite number become infinities (RNE overflow).
double RoundToFloat(double value, int mantissa_bits, int min_exponent, double max_finite) {
  if (!std::isfinite(value) || value == 0.0) return value;
  int exponent = 0;
  std::frexp(value, &exponent);  // value = m * 2^exponent, 0.5 <= |m| < 1
  exponent -= 1;                 // now value = M * 2^exponent with 1 <= |M| < 2
  if (exponent < min_exponent) exponent = min_exponent;  // subnormal: fixed quantum
  const int shift = mantissa_bits - exponent;
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(value, shift)), -shift);
  if (std::fabs(rounded) > max_finite) return std::copysign(INFINITY, value);
  return rounded;
}

double SaturateInteger(double value, double lo, double hi) {
  if (std::isnan(value)) return 0;
  value = std::trunc(value);
  if (value < lo) return lo;
  if (value > hi) return hi;
  return value;
}

}  // namespace

double RoundToType(ElementType type, double value) {
  switch (type) {
    case ElementType::kPred: return value != 0.0 ? 1.0 : 0.0;
    case ElementType::kS8: return SaturateInteger(value, -128, 127);
    case ElementType::kS16: return SaturateInteger(value, -32768, 32767);
    case ElementType::kS32: return SaturateInteger(value, -2147483648.0, 2147483647.0);
    case ElementType::kS64: return SaturateInteger(value, -9223372036854775808.0, 9223372036854774784.0);
    case ElementType::kU8: return SaturateInteger(value, 0, 255);
    case ElementType::kU16: return SaturateInteger(value, 0, 65535);
    case ElementType::kU32: return SaturateInteger(value, 0, 4294967295.0);
    case ElementType::kU64: return SaturateInteger(value, 0, 18446744073709549568.0);
    case ElementType::kBf16: return RoundToFloat(value, 7, -126, 3.3895313892515355e38);
    case ElementType::kF16: return RoundToFloat(value, 10, -14, 65504.0);
    case ElementType::kF32: return static_cast<double>(static_cast<float>(value));
    case ElementType::kF8E5M2: return RoundToFloat(value, 2, -14, 57344.0);
    case ElementType::kF8E4M3FN: {
      // No infinities in this format: what rounds beyond 448, and ±inf, become NaN (ml_dtypes,
      // XLA's convert).
      const double rounded = RoundToFloat(value, 3, -6, 448.0);
      return std::isinf(rounded) ? std::numeric_limits<double>::quiet_NaN() : rounded;
    }
    case ElementType::kF64:
    case ElementType::kTuple:
    case ElementType::kToken: return value;
  }
  return value;
}

double RoundToPrecision(double value, int exponent_bits, int mantissa_bits) {
  if (std::isnan(value)) return value;
  const int max_exponent = (1 << (exponent_bits - 1)) - 1;
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), max_exponent);
  return RoundToFloat(value, mantissa_bits, 1 - max_exponent, max_finite);
}

void RoundAll(ElementType type, std::vector<double>& values) {
  if (type == ElementType::kF64) return;
  if (type == ElementType::kF32) {
    for (double& v : values) v = static_cast<double>(static_cast<float>(v));
    return;
  }
  for (double& v : values) v = RoundToType(type, v);
}

Literal::Literal(Shape literal_shape) : shape(std::move(literal_shape)) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple) elements.emplace_back(element);
  } else {
    values.assign(static_cast<std::size_t>(shape.Elements()), 0.0);
  }
}

Literal Literal::Scalar(ElementType type, double value) {
  Literal literal(Shape(type, {}));
  literal.values[0] = RoundToType(type, value);
  return literal;
}

std::string Literal::ToString(std::size_t max_values) const {
  if (shape.IsTuple()) {
    std::string text = "(";
    for (std::size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) text += ", ";
      text += elements[i].ToString(max_values);
    }
    return text + ")";
  }
  std::string text = shape.ToString() + " {";
  for (std::size_t i = 0; i < values.size() && i < max_values; ++i) {
    if (i > 0) text += ", ";
    text += fmt::format("{:g}", values[i]);
  }
  if (values.size() > max_values) text += ", …";
  return text + "}";
}

}  // namespace systole::hlo
