// fp32 operands for randomized tests of floating-point hardware and kernels: the values at
// every boundary of the format, and random patterns biased towards the paths that are hard to
// get right (alignment, cancellation, rounding ties, the underflow and overflow edges of
// products). Used by the RTL numerics test and the HLS kernels' tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace systole::test {

// Values at every boundary of the format.
inline std::vector<std::uint32_t> Specials() {
  std::vector<std::uint32_t> v = {
      0x00000000, 0x80000000,              // zeros
      0x00000001, 0x80000001, 0x007FFFFF,  // subnormals
      0x807FFFFF, 0x00400000,
      0x00800000, 0x80800000, 0x00800001,  // min normal and next
      0x00FFFFFF, 0x01000000,
      0x7F7FFFFF, 0xFF7FFFFF, 0x7F7FFFFE,  // max normal
      0x7F000000, 0x7E800000,
      0x7F800000, 0xFF800000,              // infinities
      0x7FC00000, 0xFFC00000, 0x7F800001,  // NaNs
      0xFFFFFFFF, 0x7FBFFFFF,
      0x3F800000, 0xBF800000, 0x3F800001,  // 1, -1, 1 + ulp
      0x3F7FFFFF, 0x40000000, 0x40C00000,  // 1 - ulp/2, 2, 6
      0x33800000, 0x33800001, 0x34000000,  // 2^-24 (half an ulp of 1), 2^-23
      0x3F808000, 0x3F818000, 0x3F80FFFF,  // bf16 ties
      0x1F800000, 0x20000000, 0x5F800000,  // 2^-64, 2^-63, 2^64: products at the edges
      0x00FFFFFE, 0x3F000000, 0x3EFFFFFF,
  };
  return v;
}

// A random fp32 pattern of one of several kinds.
inline std::uint32_t RandomOperand(std::mt19937_64& rng, std::uint32_t other) {
  static const std::vector<std::uint32_t> specials = Specials();
  switch (rng() % 8) {
    case 0: return specials[rng() % specials.size()];
    case 1:
    case 2: {  // exponent within ±26 of the other operand: alignment, cancellation, ties
      const int e = static_cast<int>((other >> 23) & 0xFF) + static_cast<int>(rng() % 53) - 26;
      const auto exponent = static_cast<std::uint32_t>(e < 0 ? 0 : (e > 255 ? 255 : e));
      std::uint32_t frac = static_cast<std::uint32_t>(rng()) & 0x7FFFFF;
      if (rng() % 4 == 0) frac = (other & 0x7FFFFF) ^ (static_cast<std::uint32_t>(rng()) & 0xF);
      if (rng() % 8 == 0) frac &= ~0xFFFu;  // short fractions: exact sums and ties
      return static_cast<std::uint32_t>(rng() & 1) << 31 | exponent << 23 | frac;
    }
    case 3: {  // exponent such that the product lands near 2^-126 or 2^128
      const int target = rng() % 2 ? 127 + 1 : 127 + 128;
      const int e = target - static_cast<int>((other >> 23) & 0xFF) + static_cast<int>(rng() % 5) - 2;
      const auto exponent = static_cast<std::uint32_t>(e < 1 ? 1 : (e > 254 ? 254 : e));
      std::uint32_t frac = static_cast<std::uint32_t>(rng()) & 0x7FFFFF;
      if (rng() % 2) frac |= 0x7FFF00;
      return static_cast<std::uint32_t>(rng() & 1) << 31 | exponent << 23 | frac;
    }
    case 4: {  // small integers (requant, saturation) and low-bit patterns
      return static_cast<std::uint32_t>(static_cast<std::int32_t>(rng() % 1024) - 512);
    }
    default: return static_cast<std::uint32_t>(rng());
  }
}

}  // namespace systole::test
