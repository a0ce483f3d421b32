// bf16 and fp32 at the bit level: the conversions and flushing rules of docs/NUMERICS.md that
// every part of Systole shares — the golden model's arithmetic, the assembler's float literals,
// the host's conversion of inputs and outputs. One definition, so they cannot disagree.
#pragma once

#include <cstdint>

namespace systole::numerics {

inline constexpr std::uint32_t kCanonicalNanF32 = 0x7FC00000;
inline constexpr std::uint16_t kCanonicalNanBf16 = 0x7FC0;
inline constexpr std::uint32_t kF32SignBit = 0x80000000;
inline constexpr std::uint32_t kF32ExponentMask = 0x7F800000;
inline constexpr std::uint32_t kF32PositiveZero = 0x00000000;
inline constexpr std::uint32_t kF32Six = 0x40C00000;  // 6.0f, the relu6 ceiling

constexpr bool IsNanF32(std::uint32_t bits) {
  return (bits & kF32ExponentMask) == kF32ExponentMask && (bits & 0x007FFFFF) != 0;
}

// Flush to zero: a subnormal (exponent field zero) becomes a zero of the same sign.
constexpr std::uint32_t FlushF32(std::uint32_t bits) {
  return (bits & kF32ExponentMask) == 0 ? (bits & kF32SignBit) : bits;
}

// bf16 -> fp32: the 16 bits become the top half of the word, then FTZ.
constexpr std::uint32_t Bf16ToF32(std::uint16_t bf16) {
  return FlushF32(std::uint32_t{bf16} << 16);
}

// fp32 -> bf16: NaN -> canonical; FTZ the input; round the low half to nearest, ties to even;
// FTZ the result. Overflow carries into the exponent and becomes infinity, as RNE requires.
constexpr std::uint16_t F32ToBf16(std::uint32_t bits) {
  if (IsNanF32(bits)) return kCanonicalNanBf16;
  bits = FlushF32(bits);
  const std::uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
  const auto bf16 = static_cast<std::uint16_t>(rounded >> 16);
  return (bf16 & 0x7F80u) == 0 ? static_cast<std::uint16_t>(bf16 & 0x8000u) : bf16;
}

}  // namespace systole::numerics
