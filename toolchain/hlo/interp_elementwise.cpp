// Elementwise kernels. Values are computed in double and rounded to the result type once.
// Integer arithmetic wraps like two's complement (as XLA's does); integer division by zero
// gives -1 (all ones) and remainder by zero gives the dividend, XLA's defined results.
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "toolchain/hlo/interp_kernels.hpp"

namespace systole::hlo::detail {

namespace {

int BitWidth(ElementType type) {
  switch (type) {
    case ElementType::kS8:
    case ElementType::kU8: return 8;
    case ElementType::kS16:
    case ElementType::kU16: return 16;
    case ElementType::kS32:
    case ElementType::kU32: return 32;
    default: return 64;
  }
}

// Two's-complement wrap of an integer result to the width of `type`.
double WrapInteger(ElementType type, double value) {
  if (!std::isfinite(value)) return RoundToType(type, value);
  const int bits = BitWidth(type);
  if (bits == 64) return RoundToType(type, value);
  const std::int64_t modulus = std::int64_t{1} << bits;
  auto v = static_cast<std::int64_t>(std::fmod(std::trunc(value), static_cast<double>(modulus)));
  if (v < 0) v += modulus;
  if (IsSigned(type) && v >= modulus / 2) v -= modulus;
  return static_cast<double>(v);
}

std::int64_t AsInt(double value) {
  if (!(value > -9.2e18 && value < 9.2e18)) return 0;
  return static_cast<std::int64_t>(value);
}

double IntegerDivide(ElementType type, double a, double b) {
  if (b == 0) return IsSigned(type) ? -1.0 : RoundToType(type, 1.8446744073709552e19);
  const double quotient = std::trunc(a / b);
  return WrapInteger(type, quotient);  // INT_MIN / -1 wraps back to INT_MIN
}

double IntegerRemainder(ElementType type, double a, double b) {
  if (b == 0) return a;
  return WrapInteger(type, std::fmod(a, b));
}

double ApplyUnary(const Instruction& instruction, ElementType type, double x) {
  switch (instruction.opcode) {
    case Opcode::kAbs: return std::fabs(x);
    case Opcode::kCeil: return std::ceil(x);
    case Opcode::kConvert:
    case Opcode::kCopy: return x;
    case Opcode::kCosine: return std::cos(x);
    case Opcode::kErf: return std::erf(x);
    case Opcode::kExp: return std::exp(x);
    case Opcode::kExpm1: return std::expm1(x);
    case Opcode::kFloor: return std::floor(x);
    case Opcode::kIsFinite: return std::isfinite(x) ? 1.0 : 0.0;
    case Opcode::kLog: return std::log(x);
    case Opcode::kLog1p: return std::log1p(x);
    case Opcode::kLogistic: return 1.0 / (1.0 + std::exp(-x));
    case Opcode::kNegate: return -x;
    case Opcode::kNot:
      if (type == ElementType::kPred) return x != 0 ? 0.0 : 1.0;
      return static_cast<double>(~AsInt(x));
    case Opcode::kReducePrecision:
      return RoundToPrecision(x, static_cast<int>(instruction.exponent_bits), static_cast<int>(instruction.mantissa_bits));
    case Opcode::kRoundNearestAfz: return std::round(x);
    case Opcode::kRoundNearestEven: return std::nearbyint(x);
    case Opcode::kRsqrt: return 1.0 / std::sqrt(x);
    case Opcode::kSign: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;  // keeps ±0 and NaN
    case Opcode::kSine: return std::sin(x);
    case Opcode::kSqrt: return std::sqrt(x);
    case Opcode::kTanh: return std::tanh(x);
    default: Unsupported(instruction, "is not a unary op");
  }
}

// A key whose signed-integer order is IEEE-754's total order on the value's bits:
// -NaN < -inf < … < -0 < +0 < … < inf < NaN. Negative values have their magnitude bits flipped,
// so a larger magnitude sorts lower. Elements are held as doubles; the conversion from any
// narrower float type preserves this order, NaN signs included.
std::int64_t TotalOrderKey(double x) {
  const auto bits = std::bit_cast<std::int64_t>(x);
  return bits ^ ((bits >> 63) & std::numeric_limits<std::int64_t>::max());
}

bool Compare(ComparisonDirection direction, double a, double b, bool total_order) {
  if (total_order) {
    const std::int64_t ka = TotalOrderKey(a);
    const std::int64_t kb = TotalOrderKey(b);
    switch (direction) {
      case ComparisonDirection::kEq: return ka == kb;
      case ComparisonDirection::kNe: return ka != kb;
      case ComparisonDirection::kLt: return ka < kb;
      case ComparisonDirection::kLe: return ka <= kb;
      case ComparisonDirection::kGt: return ka > kb;
      case ComparisonDirection::kGe: return ka >= kb;
    }
  }
  switch (direction) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kLt: return a < b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kGe: return a >= b;
  }
  return false;
}

}  // namespace

double ApplyBinary(Opcode opcode, ElementType type, double a, double b) {
  const bool integer = IsInteger(type);
  switch (opcode) {
    case Opcode::kAdd: return a + b;
    case Opcode::kSubtract: return a - b;
    case Opcode::kMultiply: return a * b;
    case Opcode::kDivide: return integer ? IntegerDivide(type, a, b) : a / b;
    case Opcode::kRemainder: return integer ? IntegerRemainder(type, a, b) : std::fmod(a, b);
    case Opcode::kMaximum:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
      return a > b ? a : b;
    case Opcode::kMinimum:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
      return a < b ? a : b;
    case Opcode::kPower:
      if (integer && b < 0) return a == 1 ? 1.0 : (a == -1 ? (std::fmod(b, 2.0) == 0 ? 1.0 : -1.0) : 0.0);
      return std::pow(a, b);
    case Opcode::kAtan2: return std::atan2(a, b);
    case Opcode::kAnd:
      if (type == ElementType::kPred) return (a != 0 && b != 0) ? 1.0 : 0.0;
      return static_cast<double>(AsInt(a) & AsInt(b));
    case Opcode::kOr:
      if (type == ElementType::kPred) return (a != 0 || b != 0) ? 1.0 : 0.0;
      return static_cast<double>(AsInt(a) | AsInt(b));
    case Opcode::kXor:
      if (type == ElementType::kPred) return ((a != 0) != (b != 0)) ? 1.0 : 0.0;
      return static_cast<double>(AsInt(a) ^ AsInt(b));
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

Literal EvalElementwise(const Instruction& instruction, const Operands& operands) {
  const Opcode op = instruction.opcode;
  const ElementType type = instruction.shape.type;
  Literal result(instruction.shape);
  std::vector<double>& out = result.values;
  const auto round = [&](double value) {
    return IsInteger(type) ? WrapInteger(type, value) : RoundToType(type, value);
  };
  if (IsElementwiseUnary(op)) {
    const std::vector<double>& x = operands[0]->values;
    const ElementType in_type = operands[0]->shape.type;
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = ApplyUnary(instruction, in_type, x[i]);
    if (op == Opcode::kConvert) {
      RoundAll(type, out);  // float -> int truncates and saturates, NaN -> 0
    } else if (op != Opcode::kCopy) {
      for (double& v : out) v = round(v);
    }
    return result;
  }
  if (op == Opcode::kCompare) {
    const std::vector<double>& a = operands[0]->values;
    const std::vector<double>& b = operands[1]->values;
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = Compare(instruction.comparison, a[i], b[i], instruction.total_order) ? 1.0 : 0.0;
    return result;
  }
  if (IsElementwiseBinary(op)) {
    const std::vector<double>& a = operands[0]->values;
    const std::vector<double>& b = operands[1]->values;
    if (type == ElementType::kF32) {  // the common case, kept tight
      for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = static_cast<double>(static_cast<float>(ApplyBinary(op, type, a[i], b[i])));
      }
      return result;
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = round(ApplyBinary(op, type, a[i], b[i]));
    return result;
  }
  const auto at = [](const Literal& literal, std::size_t i) {
    return literal.values.size() == 1 ? literal.values[0] : literal.values[i];
  };
  if (op == Opcode::kSelect) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = at(*operands[0], i) != 0 ? operands[1]->values[i] : operands[2]->values[i];
    }
    return result;
  }
  if (op == Opcode::kClamp) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double low = at(*operands[0], i);
      const double high = at(*operands[2], i);
      const double x = operands[1]->values[i];
      out[i] = std::isnan(x) ? x : std::min(std::max(x, low), high);
    }
    return result;
  }
  Unsupported(instruction, "is not elementwise");
}

void Unsupported(const Instruction& instruction, const std::string& what) {
  throw HloError(instruction.location,
                 fmt::format("instruction '{}' ({}) {}", instruction.name, OpcodeName(instruction.opcode), what));
}

}  // namespace systole::hlo::detail
