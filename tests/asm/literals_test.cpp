// Number literals: integer parsing, fp32 / bf16 conversion as NUMERICS.md specifies, and the
// shortest-literal formatting the disassembler relies on for exact round trips.
#include "arch/numerics/bf16.hpp"
#include "toolchain/asm/literals.hpp"

#include <gtest/gtest.h>

#include <random>

#include "tests/asm/asm_test_util.hpp"

namespace systole::assembly {
namespace {

TEST(Literals, ClassifiesTokens) {
  EXPECT_EQ(ClassifyLiteral("42"), LiteralKind::kInteger);
  EXPECT_EQ(ClassifyLiteral("0x2A"), LiteralKind::kInteger);
  EXPECT_EQ(ClassifyLiteral("0xdead_beef"), LiteralKind::kInteger);
  EXPECT_EQ(ClassifyLiteral("1.5"), LiteralKind::kFloat);
  EXPECT_EQ(ClassifyLiteral(".5"), LiteralKind::kFloat);
  EXPECT_EQ(ClassifyLiteral("1e-3"), LiteralKind::kFloat);
  EXPECT_EQ(ClassifyLiteral("1e+10"), LiteralKind::kFloat);
  for (const char* bad :
       {"", "0x", "0x_1", "0x1_", "0x1__2", "0x1g", "1.2.3", "1e", "12ab", "inf", "nan", "1_000"}) {
    EXPECT_EQ(ClassifyLiteral(bad), LiteralKind::kBad) << bad;
  }
}

TEST(Literals, ParsesIntegers) {
  EXPECT_EQ(ParseInteger("0"), 0);
  EXPECT_EQ(ParseInteger("1234567"), 1234567);
  EXPECT_EQ(ParseInteger("0xFF"), 255);
  EXPECT_EQ(ParseInteger("0x7fff_ffff_ffff_ffff"), INT64_MAX);
  std::string why;
  EXPECT_FALSE(ParseInteger("0x8000000000000000", &why));
  EXPECT_NE(why.find("too large"), std::string::npos) << why;
  EXPECT_FALSE(ParseInteger("99999999999999999999"));
  EXPECT_FALSE(ParseInteger("1.0"));
}

TEST(Literals, Fp32IsCorrectlyRounded) {
  EXPECT_EQ(ParseFp32("1.0", false), 0x3F800000u);
  EXPECT_EQ(ParseFp32("1.0", true), 0xBF800000u);
  EXPECT_EQ(ParseFp32("0.0", true), 0x80000000u);
  EXPECT_EQ(ParseFp32("0.1", false), 0x3DCCCCCDu);
  EXPECT_EQ(ParseFp32("3.4028235e38", false), 0x7F7FFFFFu);
  std::string why;
  EXPECT_FALSE(ParseFp32("1e39", false, &why));
  EXPECT_NE(why.find("too large"), std::string::npos) << why;
  EXPECT_FALSE(ParseFp32("1e-50", false, &why));
  EXPECT_NE(why.find("too small"), std::string::npos) << why;
}

TEST(Literals, Bf16FollowsNumerics) {
  EXPECT_EQ(ParseBf16("1.0", false), 0x3F80);
  EXPECT_EQ(ParseBf16("2.5", true), 0xC020);
  // 1 + 2^-8 is exactly halfway between bf16 1.0 and 1.0078125: ties to even -> 1.0.
  EXPECT_EQ(ParseBf16("1.00390625", false), 0x3F80);
  // 1 + 3*2^-8 is halfway between 1.0078125 (odd) and 1.015625 (even): rounds up.
  EXPECT_EQ(ParseBf16("1.01171875", false), 0x3F82);
  // Subnormal results are flushed to zero (NUMERICS.md ToBf16).
  EXPECT_EQ(ParseBf16("1e-39", false), 0x0000);
  EXPECT_EQ(ParseBf16("1e-39", true), 0x8000);
  std::string why;
  EXPECT_FALSE(ParseBf16("3.4e38", false, &why));  // fits fp32, rounds to bf16 infinity
  EXPECT_NE(why.find("infinity"), std::string::npos) << why;
  EXPECT_EQ(numerics::F32ToBf16(0x7F800001u), 0x7FC0);  // any NaN -> canonical
  EXPECT_EQ(numerics::F32ToBf16(0x7F7FFFFFu), 0x7F80);  // overflow -> infinity
}

TEST(Literals, FormatsTheShortestLiteral) {
  EXPECT_EQ(FormatFp32(0x3F800000u), "1.0");
  EXPECT_EQ(FormatFp32(0xBF800000u), "-1.0");
  EXPECT_EQ(FormatFp32(0x80000000u), "-0.0");
  EXPECT_EQ(FormatFp32(0x3DCCCCCDu), "0.1");
  EXPECT_EQ(FormatFp32(0x3E000000u), "0.125");
  EXPECT_EQ(FormatBf16(0x3DCD), "0.1");  // bf16(0.1) prints as 0.1, not 0.10009765625
  EXPECT_EQ(FormatBf16(0xC020), "-2.5");
  EXPECT_EQ(FormatBf16(0x4B18), "9961472.0");  // plain notation below 10^9
  EXPECT_EQ(FormatBf16(0x4120), "10.0");
  EXPECT_EQ(FormatFp32(0x501502F9u), "1e+10");
  EXPECT_FALSE(FormatFp32(0x7F800000u));  // infinity
  EXPECT_FALSE(FormatFp32(0x7FC00000u));  // NaN
  EXPECT_FALSE(FormatBf16(0x0001));       // subnormal: ToBf16 would flush it
  EXPECT_FALSE(FormatBf16(0xFF80));
}

// Every bf16 pattern either formats to a literal that converts back exactly, or is one the
// conversion cannot produce (NaN, infinity, subnormal).
TEST(Literals, EveryBf16RoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto bf16 = static_cast<std::uint16_t>(bits);
    const bool special = (bf16 & 0x7F80) == 0x7F80 || ((bf16 & 0x7F80) == 0 && (bf16 & 0x7F) != 0);
    const auto text = FormatBf16(bf16);
    ASSERT_EQ(text.has_value(), !special) << std::hex << bits;
    if (!text) continue;
    const bool negative = text->front() == '-';
    ASSERT_EQ(ParseBf16(std::string_view(*text).substr(negative ? 1 : 0), negative), bf16) << *text;
  }
}

TEST(Literals, RandomFp32RoundTrips) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int i = 0; i < 100000; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng());
    const auto text = FormatFp32(bits);
    if (!text) {
      // Only infinities, NaNs and subnormals too small for a literal have none.
      EXPECT_TRUE((bits & 0x7F800000u) == 0x7F800000u || (bits & 0x7F800000u) == 0)
          << std::hex << bits;
      continue;
    }
    const bool negative = text->front() == '-';
    ASSERT_EQ(ParseFp32(std::string_view(*text).substr(negative ? 1 : 0), negative), bits) << *text;
  }
}

}  // namespace
}  // namespace systole::assembly
