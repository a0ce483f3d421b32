// Systole's bit-exact arithmetic: docs/NUMERICS.md written as code.
//
// These scalar functions are the definition the RTL is checked against, so each one is short and
// follows the document line by line. Floating-point values travel as their bit patterns
// (std::uint32_t for fp32, std::uint16_t for bf16): that keeps NaN payloads, signed zeros and
// flushed subnormals explicit, and no compiler flag can change them. The arithmetic inside uses
// the host's IEEE-754 binary32 operations, which round to nearest even; the build passes
// -ffp-contract=off so that no multiply and add are fused.
//
// The MXU has its own vectorised kernels (mxu.cpp); a test proves they agree with these.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "arch/isa/isa.hpp"
#include "arch/numerics/bf16.hpp"

namespace systole::model {

static_assert(std::endian::native == std::endian::little,
              "the model stores device data in host order and assumes a little-endian host");

// The shared bit-level rules (constants, IsNanF32, FlushF32, Bf16ToF32, F32ToBf16).
using numerics::kCanonicalNanBf16;
using numerics::kCanonicalNanF32;
using numerics::kF32ExponentMask;
using numerics::kF32PositiveZero;
using numerics::kF32SignBit;
using numerics::kF32Six;
using numerics::Bf16ToF32;
using numerics::F32ToBf16;
using numerics::FlushF32;
using numerics::IsNanF32;

constexpr float FloatFromBits(std::uint32_t bits) { return std::bit_cast<float>(bits); }
constexpr std::uint32_t BitsFromFloat(float value) { return std::bit_cast<std::uint32_t>(value); }

// The final step of every fp32 operation: canonical NaN, then flush the result.
constexpr std::uint32_t FinishF32(float result) {
  const std::uint32_t bits = BitsFromFloat(result);
  return IsNanF32(bits) ? kCanonicalNanF32 : FlushF32(bits);
}

constexpr std::uint32_t AddF32(std::uint32_t a, std::uint32_t b) {
  return FinishF32(FloatFromBits(FlushF32(a)) + FloatFromBits(FlushF32(b)));
}

// x - y is x + (-y): flip the sign bit of y (a NaN stays a NaN and becomes canonical).
constexpr std::uint32_t SubF32(std::uint32_t a, std::uint32_t b) {
  return AddF32(a, b ^ kF32SignBit);
}

constexpr std::uint32_t MulF32(std::uint32_t a, std::uint32_t b) {
  return FinishF32(FloatFromBits(FlushF32(a)) * FloatFromBits(FlushF32(b)));
}

// max: NaN if either is NaN; of two zeros, +0 if either is +0; otherwise the larger.
constexpr std::uint32_t MaxF32(std::uint32_t a, std::uint32_t b) {
  a = FlushF32(a);
  b = FlushF32(b);
  if (IsNanF32(a) || IsNanF32(b)) return kCanonicalNanF32;
  const float x = FloatFromBits(a), y = FloatFromBits(b);
  if (x == 0.0f && y == 0.0f) return (a & b) & kF32SignBit;  // -0 only if both are -0
  return x > y ? a : b;
}

// min: NaN if either is NaN; of two zeros, -0 if either is -0; otherwise the smaller.
constexpr std::uint32_t MinF32(std::uint32_t a, std::uint32_t b) {
  a = FlushF32(a);
  b = FlushF32(b);
  if (IsNanF32(a) || IsNanF32(b)) return kCanonicalNanF32;
  const float x = FloatFromBits(a), y = FloatFromBits(b);
  if (x == 0.0f && y == 0.0f) return (a | b) & kF32SignBit;  // -0 if either is -0
  return x < y ? a : b;
}

// The activation functions of ACTIVATE and VECTOR. `lo`/`hi` are the clamp bounds as fp32
// bits (the instruction's bf16 bounds widened with Bf16ToF32).
constexpr std::uint32_t ApplyFunctionF32(isa::ActFunc func, std::uint32_t v, std::uint32_t lo,
                                         std::uint32_t hi) {
  switch (func) {
    case isa::ActFunc::kNone: return v;
    case isa::ActFunc::kRelu: return MaxF32(v, kF32PositiveZero);
    case isa::ActFunc::kRelu6: return MinF32(MaxF32(v, kF32PositiveZero), kF32Six);
    case isa::ActFunc::kClamp: return MinF32(MaxF32(v, lo), hi);
  }
  return v;
}

// The scale of ACTIVATE and POOL as applied: a raw field of 0 (what an omitted `scale=`
// assembles to) means 1 — fp32 1.0 or the integer multiplier 1 — so that a forgotten scale
// cannot silently zero a layer (docs/ISA.md).
constexpr std::uint32_t EffectiveScale(std::uint32_t raw, bool is_fp32) {
  constexpr std::uint32_t kF32OneBits = 0x3F800000;
  return raw != 0 ? raw : (is_fp32 ? kF32OneBits : 1u);
}

// ---- ACCVEC: IEEE-754 binary32 on accumulator rows ------------------------------------------
// Unlike the bf16 path above, nothing is flushed: these are the host interpreter's f32
// elementwise operations (toolchain/hlo, bit-identical to JAX on the CPU) bit for bit —
// round to nearest even, gradual underflow, and the NaN rules of x86-64's SSE arithmetic, which
// the interpreter inherits by computing in double and rounding once (docs/NUMERICS.md,
// "ACCVEC"). A NaN operand is returned quieted (a's if a is one, else b's); an invalid operation
// (inf - inf, 0 x inf, 0 / 0, inf / inf, sqrt of a negative) gives the x86 default NaN
// 0xFFC00000; max and min give the canonical 0x7FC00000 for any NaN, and otherwise
// `a > b ? a : b` / `a < b ? a : b` (so max(+0, -0) is -0: b), as the interpreter does.
inline constexpr std::uint32_t kF32QuietBit = 0x00400000;
inline constexpr std::uint32_t kDefaultNanF32 = 0xFFC00000;

constexpr std::uint32_t AccFinishF32(float result) {
  const std::uint32_t bits = BitsFromFloat(result);
  return IsNanF32(bits) ? kDefaultNanF32 : bits;  // only an invalid operation makes a new NaN
}

inline std::uint32_t AccOpF32(isa::AccOp op, std::uint32_t a, std::uint32_t b) {
  const float x = FloatFromBits(a), y = FloatFromBits(b);
  if (op == isa::AccOp::kMax || op == isa::AccOp::kMin) {
    if (IsNanF32(a) || IsNanF32(b)) return kCanonicalNanF32;
    return (op == isa::AccOp::kMax ? x > y : x < y) ? a : b;
  }
  if (IsNanF32(a)) return a | kF32QuietBit;
  if (op != isa::AccOp::kSqrt && IsNanF32(b)) return b | kF32QuietBit;
  switch (op) {
    case isa::AccOp::kAdd: return AccFinishF32(x + y);
    case isa::AccOp::kSub: return AccFinishF32(x - y);
    case isa::AccOp::kMul: return AccFinishF32(x * y);
    case isa::AccOp::kDiv: return AccFinishF32(x / y);
    case isa::AccOp::kSqrt: return AccFinishF32(std::sqrt(x));
    default: return kDefaultNanF32;  // max/min handled above
  }
}

// ---- integers ------------------------------------------------------------------------------

// int32 addition that wraps modulo 2^32 (signed overflow would be undefined in C++).
constexpr std::int32_t WrapAddInt32(std::int32_t a, std::int32_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

// (v * S + (s > 0 ? 2^(s-1) : 0)) >> s in int64 with an arithmetic shift: rounds half towards
// +infinity. Callers keep |v * S| <= 2^62 (v at most int32, S an int32) and s <= 62.
constexpr std::int64_t Requantize(std::int64_t v, std::int32_t scale, unsigned shift) {
  const std::int64_t rounding = shift > 0 ? std::int64_t{1} << (shift - 1) : 0;
  return (v * scale + rounding) >> shift;  // C++20: >> of a negative value is arithmetic
}

constexpr std::int64_t ApplyFunctionInt(isa::ActFunc func, std::int64_t v, std::int16_t lo,
                                        std::int16_t hi) {
  const auto clamp = [](std::int64_t x, std::int64_t low, std::int64_t high) {
    return x < low ? (low > high ? high : low) : (x > high ? high : x);  // min(max(x, L), H)
  };
  switch (func) {
    case isa::ActFunc::kNone: return v;
    case isa::ActFunc::kRelu: return v < 0 ? 0 : v;
    case isa::ActFunc::kRelu6: return clamp(v, 0, 6);
    case isa::ActFunc::kClamp: return clamp(v, lo, hi);
  }
  return v;
}

constexpr std::int8_t SaturateInt8(std::int64_t v) {
  return static_cast<std::int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
}

}  // namespace systole::model
