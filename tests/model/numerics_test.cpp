// docs/NUMERICS.md corner cases, pinned with literal bit patterns, plus sweeps of the model's
// scalar functions against the independent reference in model_test_util.hpp.
#include "sim/model/numerics.hpp"

#include <gtest/gtest.h>

#include <random>

#include "tests/model/model_test_util.hpp"

namespace systole::model {
namespace {

namespace ref = testing::ref;

TEST(Bf16Conversion, RoundsToNearestEven) {
  EXPECT_EQ(F32ToBf16(0x3F800000), 0x3F80);  // 1.0 exactly
  EXPECT_EQ(F32ToBf16(0x3F807FFF), 0x3F80);  // below half: down
  EXPECT_EQ(F32ToBf16(0x3F808001), 0x3F81);  // above half: up
  EXPECT_EQ(F32ToBf16(0x3F808000), 0x3F80);  // tie, even below: down
  EXPECT_EQ(F32ToBf16(0x3F818000), 0x3F82);  // tie, odd below: up to even
  EXPECT_EQ(F32ToBf16(0xBF818000), 0xBF82);  // negative tie: magnitude to even
  EXPECT_EQ(F32ToBf16(0x3FFF8000), 0x4000);  // carry into the exponent
}

TEST(Bf16Conversion, OverflowBecomesInfinity) {
  EXPECT_EQ(F32ToBf16(0x7F7F7FFF), 0x7F7F);  // largest value that stays finite
  EXPECT_EQ(F32ToBf16(0x7F7F8000), 0x7F80);  // tie at the top rounds to even: infinity
  EXPECT_EQ(F32ToBf16(0xFF7FFFFF), 0xFF80);
  EXPECT_EQ(F32ToBf16(0x7F800000), 0x7F80);
  EXPECT_EQ(F32ToBf16(0xFF800000), 0xFF80);
}

TEST(Bf16Conversion, NanIsCanonical) {
  EXPECT_EQ(F32ToBf16(0x7FC00000), 0x7FC0);
  EXPECT_EQ(F32ToBf16(0xFFC00001), 0x7FC0);  // sign and payload dropped
  EXPECT_EQ(F32ToBf16(0x7F800001), 0x7FC0);  // signalling NaN whose payload would truncate to inf
  EXPECT_EQ(F32ToBf16(0x7FFFFFFF), 0x7FC0);
}

TEST(Bf16Conversion, FlushesSubnormals) {
  EXPECT_EQ(F32ToBf16(0x007FFFFF), 0x0000);  // would round up to the smallest normal without FTZ
  EXPECT_EQ(F32ToBf16(0x807FFFFF), 0x8000);
  EXPECT_EQ(F32ToBf16(0x00800000), 0x0080);  // smallest normal survives
  EXPECT_EQ(Bf16ToF32(0x0001), 0x00000000u);
  EXPECT_EQ(Bf16ToF32(0x807F), 0x80000000u);
  EXPECT_EQ(Bf16ToF32(0x0080), 0x00800000u);
  EXPECT_EQ(Bf16ToF32(0xFFC1), 0xFFC10000u);  // widening is exact; NaNs are canonical on output
}

TEST(Bf16Conversion, MatchesReferenceOnRandomBits) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int i = 0; i < 200000; ++i) {
    auto bits = static_cast<std::uint32_t>(rng());
    if (i % 4 == 0) bits = (bits & 0xFFFF0000u) | 0x8000u;  // many exact ties
    ASSERT_EQ(F32ToBf16(bits), ref::ToBf16(bits)) << std::hex << bits;
  }
}

TEST(Fp32Add, SignedZeroAndFlush) {
  EXPECT_EQ(AddF32(0x00000000, 0x80000000), 0x00000000u);  // (+0) + (-0) = +0
  EXPECT_EQ(AddF32(0x80000000, 0x80000000), 0x80000000u);  // (-0) + (-0) = -0
  EXPECT_EQ(AddF32(0x3F800000, 0xBF800000), 0x00000000u);  // x - x = +0
  EXPECT_EQ(AddF32(0x00000001, 0x00000001), 0x00000000u);  // subnormal inputs are zeros
  EXPECT_EQ(AddF32(0x80000001, 0x80000000), 0x80000000u);  // flushed with their sign
  // 1.5 * 2^-126 - 2^-126 is exactly 0.5 * 2^-126, a subnormal: the result flushes, keeping the sign.
  EXPECT_EQ(AddF32(0x00C00000, 0x80800000), 0x00000000u);
  EXPECT_EQ(AddF32(0x80C00000, 0x00800000), 0x80000000u);
  EXPECT_EQ(SubF32(0x3F800000, 0x3F800000), 0x00000000u);
}

TEST(Fp32Add, InfinityAndNan) {
  EXPECT_EQ(AddF32(0x7F800000, 0xFF800000), kCanonicalNanF32);  // inf - inf
  EXPECT_EQ(AddF32(0x7F7FFFFF, 0x7F7FFFFF), 0x7F800000u);       // overflow
  EXPECT_EQ(AddF32(0xFFC12345, 0x3F800000), kCanonicalNanF32);
  EXPECT_EQ(SubF32(0x3F800000, 0x7FC00001), kCanonicalNanF32);
  EXPECT_EQ(AddF32(0x3F800000, 0x33800000), 0x3F800000u);  // 1 + 2^-24: tie to even, stays 1
  EXPECT_EQ(AddF32(0x3F800001, 0x33800000), 0x3F800002u);  // tie to even, rounds up
}

TEST(Fp32Mul, RoundsFlushesAndCanonicalises) {
  EXPECT_EQ(MulF32(0x00000000, 0x7F800000), kCanonicalNanF32);  // 0 x inf
  EXPECT_EQ(MulF32(0x00000001, 0x7F800000), kCanonicalNanF32);  // subnormal is 0: 0 x inf
  EXPECT_EQ(MulF32(0x00800000, 0x3F000000), 0x00000000u);       // 2^-126 / 2 underflows
  EXPECT_EQ(MulF32(0x80800000, 0x3F000000), 0x80000000u);
  EXPECT_EQ(MulF32(0x7F000000, 0x40000000), 0x7F800000u);       // overflow
  EXPECT_EQ(MulF32(0xBF800000, 0x00000000), 0x80000000u);       // -1 x +0 = -0
  EXPECT_EQ(MulF32(0x3FC00000, 0x40000000), 0x40400000u);       // 1.5 x 2 = 3
}

TEST(Fp32MaxMin, ZerosAndNans) {
  EXPECT_EQ(MaxF32(0x00000000, 0x80000000), 0x00000000u);
  EXPECT_EQ(MaxF32(0x80000000, 0x00000000), 0x00000000u);
  EXPECT_EQ(MaxF32(0x80000000, 0x80000000), 0x80000000u);
  EXPECT_EQ(MinF32(0x00000000, 0x80000000), 0x80000000u);
  EXPECT_EQ(MinF32(0x80000000, 0x00000000), 0x80000000u);
  EXPECT_EQ(MinF32(0x00000000, 0x00000000), 0x00000000u);
  EXPECT_EQ(MaxF32(0x7FC00001, 0x3F800000), kCanonicalNanF32);
  EXPECT_EQ(MinF32(0x3F800000, 0xFF800001), kCanonicalNanF32);
  EXPECT_EQ(MaxF32(0x80000001, 0x00000000), 0x00000000u);  // -subnormal is -0
  EXPECT_EQ(MaxF32(0xFF800000, 0xBF800000), 0xBF800000u);
  EXPECT_EQ(MinF32(0xFF800000, 0xBF800000), 0xFF800000u);
}

TEST(Fp32Functions, ReluRelu6Clamp) {
  using isa::ActFunc;
  EXPECT_EQ(ApplyFunctionF32(ActFunc::kRelu, 0xBF800000, 0, 0), 0x00000000u);
  EXPECT_EQ(ApplyFunctionF32(ActFunc::kRelu, 0x80000000, 0, 0), 0x00000000u);  // relu(-0) = +0
  EXPECT_EQ(ApplyFunctionF32(ActFunc::kRelu, 0x7FC00000, 0, 0), kCanonicalNanF32);
  EXPECT_EQ(ApplyFunctionF32(ActFunc::kRelu6, 0x41000000, 0, 0), 0x40C00000u);  // 8 -> 6
  EXPECT_EQ(ApplyFunctionF32(ActFunc::kRelu6, 0x3F800000, 0, 0), 0x3F800000u);
  EXPECT_EQ(ApplyFunctionF32(ActFunc::kClamp, 0x40400000, 0xBF800000, 0x40000000), 0x40000000u);
  EXPECT_EQ(ApplyFunctionF32(ActFunc::kClamp, 0xC0400000, 0xBF800000, 0x40000000), 0xBF800000u);
  EXPECT_EQ(ApplyFunctionF32(ActFunc::kNone, 0x80000001, 0, 0), 0x80000001u);  // untouched
}

TEST(Fp32Operations, MatchReferenceOnSpecialValues) {
  std::vector<std::uint32_t> values;
  for (std::uint16_t bf16 : testing::SpecialBf16()) values.push_back(std::uint32_t{bf16} << 16);
  for (std::uint32_t extra : {0x00000001u, 0x807FFFFFu, 0x3F800001u, 0x33800000u, 0x7F7FFFFFu}) {
    values.push_back(extra);
  }
  for (std::uint32_t a : values) {
    for (std::uint32_t b : values) {
      EXPECT_EQ(AddF32(a, b), ref::Add(a, b)) << std::hex << a << " + " << b;
      EXPECT_EQ(MulF32(a, b), ref::Mul(a, b)) << std::hex << a << " * " << b;
      EXPECT_EQ(MaxF32(a, b), ref::Max(a, b)) << std::hex << a << " max " << b;
      EXPECT_EQ(MinF32(a, b), ref::Min(a, b)) << std::hex << a << " min " << b;
    }
  }
}

TEST(Int8Numerics, RequantizeRoundsHalfUp) {
  EXPECT_EQ(Requantize(5, 1, 1), 3);    // 2.5 -> 3
  EXPECT_EQ(Requantize(-5, 1, 1), -2);  // -2.5 -> -2 (towards +inf)
  EXPECT_EQ(Requantize(-7, 1, 2), -2);  // -1.75 -> -2
  EXPECT_EQ(Requantize(-6, 1, 2), -1);  // -1.5 -> -1
  EXPECT_EQ(Requantize(7, 3, 0), 21);   // no rounding term without a shift
  EXPECT_EQ(Requantize(-1, 1, 62), 0);
  // The extremes stay inside int64: |v * S| <= 2^62.
  EXPECT_EQ(Requantize(INT32_MIN, INT32_MIN, 62), 1);
  EXPECT_EQ(Requantize(INT32_MIN, INT32_MAX, 31), -(std::int64_t{1} << 31) + 1);
}

TEST(Int8Numerics, RequantizeMatchesFloorDivision) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<std::int32_t>(rng());
    const auto scale = static_cast<std::int32_t>(rng());
    const auto shift = static_cast<unsigned>(rng() % 63);
    ASSERT_EQ(Requantize(v, scale, shift), ref::Requantize(v, scale, shift))
        << v << " " << scale << " " << shift;
  }
}

TEST(Int8Numerics, SaturationAndWrapping) {
  EXPECT_EQ(SaturateInt8(127), 127);
  EXPECT_EQ(SaturateInt8(128), 127);
  EXPECT_EQ(SaturateInt8(-128), -128);
  EXPECT_EQ(SaturateInt8(-129), -128);
  EXPECT_EQ(SaturateInt8(INT64_MAX), 127);
  EXPECT_EQ(WrapAddInt32(INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(WrapAddInt32(INT32_MIN, -1), INT32_MAX);
}

TEST(Int8Numerics, Functions) {
  using isa::ActFunc;
  EXPECT_EQ(ApplyFunctionInt(ActFunc::kRelu, -5, 0, 0), 0);
  EXPECT_EQ(ApplyFunctionInt(ActFunc::kRelu6, 9, 0, 0), 6);
  EXPECT_EQ(ApplyFunctionInt(ActFunc::kRelu6, -9, 0, 0), 0);
  EXPECT_EQ(ApplyFunctionInt(ActFunc::kClamp, -300, -200, 100), -200);
  EXPECT_EQ(ApplyFunctionInt(ActFunc::kClamp, 300, -200, 100), 100);
  EXPECT_EQ(ApplyFunctionInt(ActFunc::kClamp, 5, 10, 3), 3);  // min(max(5, 10), 3)
  EXPECT_EQ(ApplyFunctionInt(ActFunc::kNone, 1000, 0, 0), 1000);
}

}  // namespace
}  // namespace systole::model
