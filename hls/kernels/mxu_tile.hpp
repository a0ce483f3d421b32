// The matrix unit as an HLS kernel: one weight-stationary R x C tile, and the rows that stream
// through it (docs/ISA.md, MATMUL; docs/NUMERICS.md, "matrix unit").
//
// For every input row x and output column j the device computes
//     psum = +0;  for t in 0..R-1:  psum = add(psum, mul(x[t], W[t][j]))
//     acc[j] = accumulate ? add(acc[j], psum) : psum
// with x[t] = 0 for t >= k. In the systolic array each processing element (t, j) holds W[t][j],
// multiplies the x[t] that passes it and adds the partial sum arriving from element (t-1, j):
// the order of the additions is the array's geometry, so floating-point results depend on it.
// The kernels keep exactly that order. For HLS, `MxuRow` is the body of a pipelined loop
// (one input row per clock, II=1): with the tile fully partitioned into registers, the t and j
// loops unroll into R x C multipliers and C adder chains of depth R, which the scheduler
// pipelines — the same structure as rtl/mxu/systole_systolic_array.sv, without the skew.
#pragma once

#include <cstdint>

#include "arch/numerics/bf16.hpp"
#include "hls/numerics/fp32_bits.hpp"

namespace systole::hls {

// int8 x int8 -> int32. Products are exact and the sums wrap modulo 2^32 (unsigned arithmetic,
// so that the wrap is defined), so the order of the additions cannot change the result.
template <unsigned kRows, unsigned kCols>
void MxuRow(const std::int8_t x[kRows], const std::int8_t weights[kRows][kCols], unsigned k,
                bool accumulate, std::int32_t acc[kCols]) {
  for (unsigned j = 0; j < kCols; ++j) {
#pragma HLS UNROLL
    std::uint32_t psum = 0;
    for (unsigned t = 0; t < kRows; ++t) {
#pragma HLS UNROLL
      const std::int32_t input = t < k ? x[t] : 0;
      psum += static_cast<std::uint32_t>(input * std::int32_t{weights[t][j]});
    }
    const std::uint32_t previous = accumulate ? static_cast<std::uint32_t>(acc[j]) : 0u;
    acc[j] = static_cast<std::int32_t>(previous + psum);
  }
}

// bf16 x bf16 -> fp32 (bit patterns): every product and every partial sum rounds to nearest
// even and flushes subnormals, in the order t = 0, 1, ..., R-1 of the array's rows.
template <unsigned kRows, unsigned kCols>
void MxuRow(const std::uint16_t x[kRows], const std::uint16_t weights[kRows][kCols], unsigned k,
                bool accumulate, std::uint32_t acc[kCols]) {
  for (unsigned j = 0; j < kCols; ++j) {
#pragma HLS UNROLL
    std::uint32_t psum = numerics::kF32PositiveZero;
    for (unsigned t = 0; t < kRows; ++t) {
#pragma HLS UNROLL
      const std::uint32_t input = t < k ? numerics::Bf16ToF32(x[t]) : numerics::kF32PositiveZero;
      psum = AddF32Bits(psum, MulF32Bits(input, numerics::Bf16ToF32(weights[t][j])));
    }
    acc[j] = accumulate ? AddF32Bits(acc[j], psum) : psum;
  }
}

}  // namespace systole::hls
