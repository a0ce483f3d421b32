// The MXU row kernels (hls/kernels/mxu_tile.hpp) at several array shapes — square, tall, wide,
// one element — against the matrix unit's definition written with the golden model's scalar
// functions (docs/NUMERICS.md: psum = +0, then psum = add(psum, mul(x[t], W[t][j])) for
// t = 0..R-1, x[t] = 0 beyond k). The configurations' own shapes are checked against the golden
// model itself, through the ref device, in hls_tops_*_tests.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>

#include "hls/kernels/mxu_tile.hpp"
#include "sim/model/numerics.hpp"
#include "tests/util/fp32_operands.hpp"
#include "tests/util/test_seed.hpp"

namespace systole::hls {
namespace {

namespace m = systole::model;

// A bf16 drawn from the fp32 operand mix (boundary values, nearby exponents, raw patterns).
std::uint16_t RandomBf16(std::mt19937_64& rng, std::uint32_t other) {
  return static_cast<std::uint16_t>(test::RandomOperand(rng, other) >> 16);
}

template <unsigned R, unsigned C>
void CheckShape(std::mt19937_64& rng, int trials) {
  SCOPED_TRACE(testing::Message() << R << "x" << C);
  for (int trial = 0; trial < trials; ++trial) {
    const auto k = static_cast<unsigned>(1 + rng() % R);
    const bool accumulate = rng() % 2 != 0;
    // int8
    std::int8_t x8[R], w8[R][C];
    std::int32_t acc8[C], want8[C];
    for (unsigned t = 0; t < R; ++t) {
      x8[t] = static_cast<std::int8_t>(rng());
      for (unsigned j = 0; j < C; ++j) w8[t][j] = static_cast<std::int8_t>(rng());
    }
    for (unsigned j = 0; j < C; ++j) {
      acc8[j] = static_cast<std::int32_t>(rng());
      std::int32_t sum = accumulate ? acc8[j] : 0;
      for (unsigned t = 0; t < k; ++t) sum = m::WrapAddInt32(sum, x8[t] * w8[t][j]);
      want8[j] = sum;
    }
    MxuRow<R, C>(x8, w8, k, accumulate, acc8);
    for (unsigned j = 0; j < C; ++j) ASSERT_EQ(acc8[j], want8[j]) << "int8 column " << j << " k " << k;
    // bf16
    std::uint16_t x16[R], w16[R][C];
    std::uint32_t acc16[C], want16[C];
    std::uint32_t previous = 0x3F800000;
    for (unsigned t = 0; t < R; ++t) {
      x16[t] = RandomBf16(rng, previous);
      previous = std::uint32_t{x16[t]} << 16;
      for (unsigned j = 0; j < C; ++j) w16[t][j] = RandomBf16(rng, previous);
    }
    for (unsigned j = 0; j < C; ++j) {
      acc16[j] = test::RandomOperand(rng, previous);
      std::uint32_t psum = 0;
      for (unsigned t = 0; t < R; ++t) {
        const std::uint32_t input = t < k ? m::Bf16ToF32(x16[t]) : 0u;
        psum = m::AddF32(psum, m::MulF32(input, m::Bf16ToF32(w16[t][j])));
      }
      want16[j] = accumulate ? m::AddF32(acc16[j], psum) : psum;
    }
    MxuRow<R, C>(x16, w16, k, accumulate, acc16);
    for (unsigned j = 0; j < C; ++j) {
      ASSERT_EQ(acc16[j], want16[j]) << std::hex << "bf16 column " << std::dec << j << " k " << k;
    }
  }
}

TEST(HlsMxuTile, RowKernelsMatchTheDefinitionAtEveryShape) {
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  CheckShape<1, 1>(rng, 2000);
  CheckShape<2, 3>(rng, 2000);
  CheckShape<3, 2>(rng, 2000);
  CheckShape<4, 4>(rng, 2000);
  CheckShape<5, 8>(rng, 1000);
  CheckShape<16, 16>(rng, 500);
  CheckShape<32, 8>(rng, 200);
}

}  // namespace
}  // namespace systole::hls
