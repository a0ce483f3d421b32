// VECTOR as an HLS kernel: elementwise add, sub, mul, max, min of two unified-buffer rows, or
// `pass` (a alone), then the transcendental step `math` (bf16 configurations) and the activation
// function (docs/ISA.md, VECTOR). With `bcol`, element 0 of b's row stands for every element.
// One row per clock when the caller pipelines the loop around `VectorRow*` (the W lanes unroll);
// a `math` function is a fixed sequence of fp32 operations (arch/numerics/transcendental.hpp,
// shared with the golden model), so it unrolls into a deep pipeline of adders and multipliers.
#pragma once

#include <cstdint>

#include "arch/numerics/bf16.hpp"
#include "arch/numerics/transcendental.hpp"
#include "hls/kernels/activate.hpp"
#include "hls/numerics/fp32_bits.hpp"

namespace systole::hls {

// The op field of VECTOR (arch/isa: VecOp; tests/hls/enums_test.cpp checks the values).
enum class VectorOp : std::uint8_t { kAdd = 0, kSub = 1, kMul = 2, kMax = 3, kMin = 4, kPass = 5 };
using numerics::MathFunction;

struct VectorParams {
  VectorOp op = VectorOp::kAdd;
  Function function = Function::kNone;
  std::uint8_t shift = 0;        // int8 mul: (x*y + 2^(s-1)) >> s
  std::uint16_t lo = 0, hi = 0;  // clamp bounds: int16 (int8 path) or bf16 bits (bf16 path)
  bool bcol = false;             // b's element 0 for every element
  MathFunction math = MathFunction::kNone;  // bf16 only (the ISA refuses it on int8)
};

// The HLS kernels' fp32 arithmetic (on integers) as the transcendental algorithms' arithmetic.
struct KernelFp {
  static constexpr std::uint32_t Add(std::uint32_t a, std::uint32_t b) { return AddF32Bits(a, b); }
  static constexpr std::uint32_t Sub(std::uint32_t a, std::uint32_t b) { return AddF32Bits(a, b ^ kF32SignBit); }
  static constexpr std::uint32_t Mul(std::uint32_t a, std::uint32_t b) { return MulF32Bits(a, b); }
  static constexpr std::uint32_t Max(std::uint32_t a, std::uint32_t b) { return MaxF32Bits(a, b); }
  static constexpr std::uint32_t Min(std::uint32_t a, std::uint32_t b) { return MinF32Bits(a, b); }
};
using KernelMath = numerics::Transcendental<KernelFp>;

template <unsigned kWidth>
void VectorRow(const std::int8_t a[kWidth], const std::int8_t b[kWidth],
                   const VectorParams& params, std::int8_t out[kWidth]) {
  for (unsigned j = 0; j < kWidth; ++j) {
#pragma HLS UNROLL
    const std::int32_t x = a[j], y = b[params.bcol ? 0 : j];
    std::int64_t v = 0;
    switch (params.op) {
      case VectorOp::kAdd: v = x + y; break;
      case VectorOp::kSub: v = x - y; break;
      case VectorOp::kMul: v = RequantizeBits(x, y, params.shift); break;
      case VectorOp::kMax: v = x > y ? x : y; break;
      case VectorOp::kMin: v = x < y ? x : y; break;
      case VectorOp::kPass: v = x; break;
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
    const std::uint32_t x = numerics::Bf16ToF32(a[j]), y = numerics::Bf16ToF32(b[params.bcol ? 0 : j]);
    std::uint32_t v = 0;
    switch (params.op) {
      case VectorOp::kAdd: v = KernelFp::Add(x, y); break;
      case VectorOp::kSub: v = KernelFp::Sub(x, y); break;
      case VectorOp::kMul: v = KernelFp::Mul(x, y); break;
      case VectorOp::kMax: v = KernelFp::Max(x, y); break;
      case VectorOp::kMin: v = KernelFp::Min(x, y); break;
      case VectorOp::kPass: v = x; break;
    }
    v = KernelMath::Apply(params.math, v);
    out[j] = numerics::F32ToBf16(ApplyF32Function(params.function, v, lo, hi));
  }
}

}  // namespace systole::hls
