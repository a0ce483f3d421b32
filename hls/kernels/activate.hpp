// ACTIVATE as an HLS kernel: an accumulator row to a unified-buffer row — bias, scale
// (requantization for int8), the activation function, the narrowing to the element type
// (docs/ISA.md, ACTIVATE; docs/NUMERICS.md, "requantization"). One row per clock when the
// caller pipelines the loop around `ActivateRow*` (the C lanes unroll).
#pragma once

#include <cstdint>

#include "arch/numerics/bf16.hpp"
#include "hls/numerics/fp32_bits.hpp"

namespace systole::hls {

// The function field of ACTIVATE, VECTOR and POOL (arch/isa: ActFunc).
enum class Function : std::uint8_t { kNone = 0, kRelu = 1, kRelu6 = 2, kClamp = 3 };

// The operands every row of one ACTIVATE shares.
struct ActivateParams {
  Function function = Function::kNone;
  std::uint32_t scale = 0;   // int32 multiplier (int8) or fp32 bits (bf16); 0 means 1
  std::uint8_t shift = 0;    // int8: right shift after the multiply, rounding half up
  std::int8_t zero_point = 0;
  std::uint16_t lo = 0, hi = 0;  // clamp bounds: int16 (int8 path) or bf16 bits (bf16 path)
};

inline constexpr std::uint32_t kF32One = 0x3F800000;  // an omitted scale (0) means 1.0

// (v * scale + 2^(shift-1)) >> shift with an arithmetic shift (rounds half towards +infinity),
// in 64 bits: |v * scale| <= 2^62 for int32 operands.
constexpr std::int64_t RequantizeBits(std::int64_t v, std::int32_t scale, unsigned shift) {
  const std::int64_t rounding = shift > 0 ? std::int64_t{1} << (shift - 1) : 0;
  return (v * scale + rounding) >> shift;
}

constexpr std::int64_t ApplyIntFunction(Function function, std::int64_t v, std::int16_t lo,
                                        std::int16_t hi) {
  // clamp(x, L, H) = min(max(x, L), H): with L > H the result is H, as on the device.
  const auto clamp = [](std::int64_t x, std::int64_t low, std::int64_t high) {
    const std::int64_t raised = x < low ? low : x;
    return raised > high ? high : raised;
  };
  switch (function) {
    case Function::kNone: return v;
    case Function::kRelu: return v < 0 ? 0 : v;
    case Function::kRelu6: return clamp(v, 0, 6);
    case Function::kClamp: return clamp(v, lo, hi);
  }
  return v;
}

constexpr std::uint32_t ApplyF32Function(Function function, std::uint32_t v, std::uint32_t lo,
                                         std::uint32_t hi) {
  switch (function) {
    case Function::kNone: return v;
    case Function::kRelu: return MaxF32Bits(v, numerics::kF32PositiveZero);
    case Function::kRelu6: return MinF32Bits(MaxF32Bits(v, numerics::kF32PositiveZero), numerics::kF32Six);
    case Function::kClamp: return MinF32Bits(MaxF32Bits(v, lo), hi);
  }
  return v;
}

constexpr std::int8_t SaturateToInt8(std::int64_t v) {
  return static_cast<std::int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
}

// int8 configurations: int32 accumulators -> int8.
template <unsigned kCols>
void ActivateRow(const std::int32_t acc[kCols], const std::int32_t* bias,
                     const ActivateParams& params, std::int8_t out[kCols]) {
  const auto scale = static_cast<std::int32_t>(params.scale != 0 ? params.scale : 1u);
  for (unsigned j = 0; j < kCols; ++j) {
#pragma HLS UNROLL
    std::uint32_t v = static_cast<std::uint32_t>(acc[j]);
    if (bias != nullptr) v += static_cast<std::uint32_t>(bias[j]);  // wraps, as int32 adds do
    std::int64_t r = RequantizeBits(static_cast<std::int32_t>(v), scale, params.shift);
    r = ApplyIntFunction(params.function, r, static_cast<std::int16_t>(params.lo),
                         static_cast<std::int16_t>(params.hi));
    out[j] = SaturateToInt8(r + params.zero_point);
  }
}

// bf16 configurations: fp32 accumulators (bits) -> bf16 (bits).
template <unsigned kCols>
void ActivateRow(const std::uint32_t acc[kCols], const std::uint32_t* bias,
                     const ActivateParams& params, std::uint16_t out[kCols]) {
  const std::uint32_t scale = params.scale != 0 ? params.scale : kF32One;
  const std::uint32_t lo = numerics::Bf16ToF32(params.lo), hi = numerics::Bf16ToF32(params.hi);
  for (unsigned j = 0; j < kCols; ++j) {
#pragma HLS UNROLL
    std::uint32_t v = acc[j];
    if (bias != nullptr) v = AddF32Bits(v, bias[j]);
    v = MulF32Bits(v, scale);
    out[j] = numerics::F32ToBf16(ApplyF32Function(params.function, v, lo, hi));
  }
}

}  // namespace systole::hls
