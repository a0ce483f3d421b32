// fp32 arithmetic on bit patterns, written with integer operations only, for the HLS kernels.
//
// The golden model (sim/model/numerics.hpp) defines Systole's floating point by the host's
// IEEE-754 operations followed by flush-to-zero and a canonical NaN (docs/NUMERICS.md). A
// synthesized kernel has no host FPU, and a vendor's floating-point cores may treat subnormals
// their own way, so the kernels spell every step out on integers instead: unpack, align, add or
// multiply the significands, normalise, round to nearest even on the subnormal grid the host
// uses, then flush. tests/hls/fp32_bits_test.cpp checks these against the golden model's
// functions bit for bit (every bf16 product, 10^7 random fp32 pairs, the edge cases).
//
// Style for HLS: fixed-width integers, no loops with data-dependent bounds, no recursion, no
// dynamic memory. The leading-zero count is a loop of constant trip count that unrolls.
#pragma once

#include <cstdint>

#include "arch/numerics/bf16.hpp"

namespace systole::hls {

using numerics::kCanonicalNanF32;
using numerics::kF32ExponentMask;
using numerics::kF32SignBit;
using numerics::FlushF32;
using numerics::IsNanF32;

inline constexpr std::uint32_t kF32Infinity = 0x7F800000;
inline constexpr std::uint32_t kF32HiddenBit = 0x00800000;
inline constexpr std::uint32_t kF32FractionMask = 0x007FFFFF;

constexpr std::uint32_t ExponentOf(std::uint32_t bits) { return (bits >> 23) & 0xFFu; }
constexpr bool IsInfF32(std::uint32_t bits) { return (bits & 0x7FFFFFFFu) == kF32Infinity; }
// After FlushF32 an exponent field of zero can only be a zero.
constexpr bool IsZeroFlushed(std::uint32_t bits) { return (bits & kF32ExponentMask) == 0; }

// Right shift that keeps a "sticky" bit: any 1 shifted out sets bit 0 of the result, so that a
// later rounding step still sees that the value was above the tie.
constexpr std::uint64_t ShiftRightSticky(std::uint64_t value, unsigned shift) {
  if (shift == 0) return value;
  if (shift >= 64) return value != 0 ? 1 : 0;
  const std::uint64_t lost = value & ((std::uint64_t{1} << shift) - 1);
  return (value >> shift) | (lost != 0 ? 1 : 0);
}

// Index of the highest set bit of a non-zero value below 2^56.
constexpr unsigned LeadingOnePosition(std::uint64_t value) {
  unsigned position = 0;
  for (unsigned bit = 0; bit < 56; ++bit) {  // constant trip count: unrolls into a priority encoder
    if ((value >> bit) & 1u) position = bit;
  }
  return position;
}

// Rounds and packs a finite non-zero result. `significand` holds the value's bits with its
// leading one at bit 47 (bits 23..0 are below the fp32 precision, bit 0 sticky), and the value
// is significand * 2^-47 * 2^(exponent - 127): `exponent` is the biased exponent the result
// would have with unbounded range. Round to nearest, ties to even, on the grid IEEE-754 uses
// (the subnormal grid below 2^-126, so that a value just below the smallest normal rounds as the
// host rounds it), then overflow to infinity and flush a subnormal result to a signed zero.
constexpr std::uint32_t RoundAndPack(std::uint32_t sign, int exponent, std::uint64_t significand) {
  // Bits kept: 24 for a normal result; for exponent <= 0 the grid is 2^-149, which keeps
  // 24 - (1 - exponent) bits of the significand.
  const int dropped = exponent >= 1 ? 24 : 25 - exponent;
  if (dropped >= 49) return sign;  // below half the smallest subnormal: rounds to zero
  const auto shift = static_cast<unsigned>(dropped);
  std::uint64_t kept = significand >> shift;
  const std::uint64_t remainder = significand & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (remainder > half || (remainder == half && (kept & 1u) != 0)) ++kept;
  if (exponent < 1) {
    // On the subnormal grid: only a carry into bit 23 makes the result normal (2^-126).
    return kept >= kF32HiddenBit ? (sign | kF32HiddenBit) : sign;
  }
  if (kept >> 24) {  // rounding carried out: 1.111...1 became 10.000...0
    kept >>= 1;
    ++exponent;
  }
  if (exponent >= 255) return sign | kF32Infinity;
  return sign | (static_cast<std::uint32_t>(exponent) << 23) |
         (static_cast<std::uint32_t>(kept) & kF32FractionMask);
}

// a * b, as MulF32 of the golden model.
constexpr std::uint32_t MulF32Bits(std::uint32_t a, std::uint32_t b) {
  a = FlushF32(a);
  b = FlushF32(b);
  const std::uint32_t sign = (a ^ b) & kF32SignBit;
  if (IsNanF32(a) || IsNanF32(b)) return kCanonicalNanF32;
  if (IsInfF32(a) || IsInfF32(b)) {
    return IsZeroFlushed(a) || IsZeroFlushed(b) ? kCanonicalNanF32 : (sign | kF32Infinity);
  }
  if (IsZeroFlushed(a) || IsZeroFlushed(b)) return sign;
  const std::uint64_t product = std::uint64_t{(a & kF32FractionMask) | kF32HiddenBit} *
                                std::uint64_t{(b & kF32FractionMask) | kF32HiddenBit};
  // product in [2^46, 2^48): the value is product * 2^-46 * 2^(ea + eb - 254).
  int exponent = static_cast<int>(ExponentOf(a)) + static_cast<int>(ExponentOf(b)) - 127;
  std::uint64_t significand = product;
  if (product >> 47) {
    ++exponent;  // product >= 2: its leading one is already at bit 47
  } else {
    significand <<= 1;
  }
  return RoundAndPack(sign, exponent, significand);
}

// a + b, as AddF32 of the golden model.
constexpr std::uint32_t AddF32Bits(std::uint32_t a, std::uint32_t b) {
  a = FlushF32(a);
  b = FlushF32(b);
  if (IsNanF32(a) || IsNanF32(b)) return kCanonicalNanF32;
  if (IsInfF32(a) || IsInfF32(b)) {
    if (IsInfF32(a) && IsInfF32(b) && ((a ^ b) & kF32SignBit) != 0) return kCanonicalNanF32;
    return IsInfF32(a) ? a : b;
  }
  if (IsZeroFlushed(a) && IsZeroFlushed(b)) return a & b & kF32SignBit;  // -0 only if both are
  if (IsZeroFlushed(a)) return b;
  if (IsZeroFlushed(b)) return a;
  // Both normal. `large` has the larger magnitude; the result takes its sign.
  const bool swap = (b & 0x7FFFFFFFu) > (a & 0x7FFFFFFFu);
  const std::uint32_t large = swap ? b : a, small = swap ? a : b;
  const std::uint32_t sign = large & kF32SignBit;
  const std::uint32_t large_exponent = ExponentOf(large);
  // Significands with their leading one at bit 53: 30 bits below fp32's precision, so that the
  // aligned smaller operand loses nothing but its sticky bit.
  const std::uint64_t large_significand = std::uint64_t{(large & kF32FractionMask) | kF32HiddenBit} << 30;
  const std::uint64_t small_significand = ShiftRightSticky(
      std::uint64_t{(small & kF32FractionMask) | kF32HiddenBit} << 30,
      large_exponent - ExponentOf(small));
  const bool subtract = ((a ^ b) & kF32SignBit) != 0;
  const std::uint64_t sum = subtract ? large_significand - small_significand
                                     : large_significand + small_significand;
  if (sum == 0) return 0;  // exact cancellation is +0 when rounding to nearest
  // Bring the leading one to bit 47 (a carry puts it at 54, a cancellation lower than 53).
  const unsigned leading = LeadingOnePosition(sum);
  const int exponent = static_cast<int>(large_exponent) + static_cast<int>(leading) - 53;
  const std::uint64_t significand =
      leading >= 47 ? ShiftRightSticky(sum, leading - 47) : sum << (47 - leading);
  return RoundAndPack(sign, exponent, significand);
}

// max and min as MaxF32/MinF32 of the golden model: NaN wins; of two zeros +0 for max and -0
// for min; otherwise an ordered compare of sign-magnitude values.
constexpr bool LessF32Ordered(std::uint32_t a, std::uint32_t b) {  // a < b, neither NaN nor both zero
  const bool a_negative = (a & kF32SignBit) != 0, b_negative = (b & kF32SignBit) != 0;
  const std::uint32_t a_magnitude = a & 0x7FFFFFFFu, b_magnitude = b & 0x7FFFFFFFu;
  if (a_negative != b_negative) return a_negative;
  return a_negative ? a_magnitude > b_magnitude : a_magnitude < b_magnitude;
}

constexpr std::uint32_t MaxF32Bits(std::uint32_t a, std::uint32_t b) {
  a = FlushF32(a);
  b = FlushF32(b);
  if (IsNanF32(a) || IsNanF32(b)) return kCanonicalNanF32;
  if (IsZeroFlushed(a) && IsZeroFlushed(b)) return a & b & kF32SignBit;
  return LessF32Ordered(b, a) ? a : b;
}

constexpr std::uint32_t MinF32Bits(std::uint32_t a, std::uint32_t b) {
  a = FlushF32(a);
  b = FlushF32(b);
  if (IsNanF32(a) || IsNanF32(b)) return kCanonicalNanF32;
  if (IsZeroFlushed(a) && IsZeroFlushed(b)) return (a | b) & kF32SignBit;
  return LessF32Ordered(a, b) ? a : b;
}

}  // namespace systole::hls
