// VECTOR as an HLS kernel: elementwise add, sub, mul, max, min of two unified-buffer rows
// followed by the activation function (docs/ISA.md, VECTOR). One row per clock when the caller
// pipelines the loop around `VectorRow*` (the W lanes unroll).
#pragma once

#include <cstdint>

#include "arch/numerics/bf16.hpp"
#include "hls/kernels/activate.hpp"
#include "hls/numerics/fp32_bits.hpp"

namespace systole::hls {

// The op field of VECTOR (arch/isa: VecOp).
enum class VectorOp : std::uint8_t { kAdd = 0, kSub = 1, kMul = 2, kMax = 3, kMin = 4 };

struct VectorParams {
  VectorOp op = VectorOp::kAdd;
  Function function = Function::kNone;
  std::uint8_t shift = 0;        // int8 mul: (x*y + 2^(s-1)) >> s
  std::uint16_t lo = 0, hi = 0;  // clamp bounds: int16 (int8 path) or bf16 bits (bf16 path)
};

template <unsigned kWidth>
void VectorRow(const std::int8_t a[kWidth], const std::int8_t b[kWidth],
                   const VectorParams& params, std::int8_t out[kWidth]) {
  for (unsigned j = 0; j < kWidth; ++j) {
#pragma HLS UNROLL
    const std::int32_t x = a[j], y = b[j];
    std::int64_t v = 0;
    switch (params.op) {
      case VectorOp::kAdd: v = x + y; break;
      case VectorOp::kSub: v = x - y; break;
      case VectorOp::kMul: v = RequantizeBits(x, y, params.shift); break;
      case VectorOp::kMax: v = x > y ? x : y; break;
      case VectorOp::kMin: v = x < y ? x : y; break;
    }
    out[j] = SaturateToInt8(ApplyIntFunction(params.function, v,
                                             static_cast<std::int16_t>(params.lo),
                                             static_cast<std::int16_t>(params.hi)));
  }
}

template <unsigned kWidth>
void VectorRow(const std::uint16_t a[kWidth], const std::uint16_t b[kWidth],
                   const VectorParams& params, std::uint16_t out[kWidth]) {
  const std::uint32_t lo = numerics::Bf16ToF32(params.lo), hi = numerics::Bf16ToF32(params.hi);
  for (unsigned j = 0; j < kWidth; ++j) {
#pragma HLS UNROLL
    const std::uint32_t x = numerics::Bf16ToF32(a[j]), y = numerics::Bf16ToF32(b[j]);
    std::uint32_t v = 0;
    switch (params.op) {
      case VectorOp::kAdd: v = AddF32Bits(x, y); break;
      case VectorOp::kSub: v = AddF32Bits(x, y ^ kF32SignBit); break;
      case VectorOp::kMul: v = MulF32Bits(x, y); break;
      case VectorOp::kMax: v = MaxF32Bits(x, y); break;
      case VectorOp::kMin: v = MinF32Bits(x, y); break;
    }
    out[j] = numerics::F32ToBf16(ApplyF32Function(params.function, v, lo, hi));
  }
}

}  // namespace systole::hls
