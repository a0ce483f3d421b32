// VECTOR's transcendental functions as the HLS kernel computes them (the shared algorithms of
// arch/numerics/transcendental.hpp on the kernels' integer-only fp32) against the golden
// model's (the same algorithms on the host's IEEE arithmetic), bit for bit: every bf16 value
// (what `op=pass, math=…` sees) and random fp32 patterns (what a subtraction before the
// function gives: `op=sub, bcol, math=exp`), for every function. The seed is printed.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "hls/kernels/vector_ops.hpp"
#include "sim/model/transcendental.hpp"
#include "tests/util/fp32_operands.hpp"
#include "tests/util/test_seed.hpp"

namespace systole::hls {
namespace {

TEST(HlsMath, EveryFunctionMatchesTheGoldenModelBitForBit) {
  std::mt19937_64 rng(test::Seed());
  for (unsigned value = 1; value < isa::kNumVecMath; ++value) {
    const auto math = static_cast<MathFunction>(value);
    int mismatches = 0;
    const auto check = [&](std::uint32_t x) {
      const std::uint32_t got = KernelMath::Apply(math, x), want = model::ApplyMathF32(math, x);
      if (got != want && ++mismatches <= 5) {
        ADD_FAILURE() << "math " << value << " of 0x" << std::hex << x << ": kernel 0x" << got
                      << ", golden model 0x" << want;
      }
    };
    for (std::uint32_t bf16 = 0; bf16 <= 0xFFFF; ++bf16) check(bf16 << 16);
    for (int i = 0; i < 20000; ++i) check(test::RandomOperand(rng, 0x3F800000));
    EXPECT_EQ(mismatches, 0) << "math " << value;
  }
}

}  // namespace
}  // namespace systole::hls
