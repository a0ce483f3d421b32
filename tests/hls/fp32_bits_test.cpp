// The HLS kernels' integer-only fp32 arithmetic (hls/numerics/fp32_bits.hpp) against the golden
// model's definition (sim/model/numerics.hpp), bit for bit: every bf16 value against a spread
// of partners (what the MXU multiplies and adds), the format's boundary values against each
// other, the rounding and underflow edges, and 10^7 random fp32 pairs per operation.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "hls/numerics/fp32_bits.hpp"
#include "sim/model/numerics.hpp"
#include "tests/util/fp32_operands.hpp"
#include "tests/util/test_seed.hpp"

namespace systole::hls {
namespace {

namespace m = systole::model;

// Compares the four operations on one pair; returns the number of mismatches (the first few
// are printed with their operands).
class Checker {
 public:
  int Check(std::uint32_t a, std::uint32_t b) {
    ++checked_;
    return Compare("add", a, b, AddF32Bits(a, b), m::AddF32(a, b)) +
           Compare("mul", a, b, MulF32Bits(a, b), m::MulF32(a, b)) +
           Compare("max", a, b, MaxF32Bits(a, b), m::MaxF32(a, b)) +
           Compare("min", a, b, MinF32Bits(a, b), m::MinF32(a, b));
  }
  std::uint64_t checked() const { return checked_; }

 private:
  int Compare(const char* op, std::uint32_t a, std::uint32_t b, std::uint32_t got,
              std::uint32_t want) {
    if (got == want) return 0;
    if (++reported_ <= 20) {
      ADD_FAILURE() << std::hex << op << "(0x" << a << ", 0x" << b << "): hls 0x" << got
                    << ", model 0x" << want;
    }
    return 1;
  }
  std::uint64_t checked_ = 0;
  int reported_ = 0;
};

TEST(HlsFp32, EveryBf16AgainstASpreadOfPartnersMatchesTheModel) {
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> partners;
  for (std::uint32_t special : test::Specials()) partners.push_back(special & 0xFFFF0000u);
  while (partners.size() < 160) {
    partners.push_back(numerics::Bf16ToF32(static_cast<std::uint16_t>(rng())));
  }
  Checker checker;
  int bad = 0;
  for (std::uint32_t bits = 0; bits <= 0xFFFF && bad < 100; ++bits) {
    const std::uint32_t a = bits << 16;  // the raw bf16 widened: subnormals are flushed inside
    for (std::uint32_t b : partners) bad += checker.Check(a, b) + checker.Check(b, a);
  }
  EXPECT_EQ(bad, 0);
  std::cout << "[ checked  ] " << checker.checked() << " bf16 pairs\n";
}

TEST(HlsFp32, DirectedCornerCasesMatchTheModel) {
  const std::vector<std::uint32_t> specials = test::Specials();
  Checker checker;
  int bad = 0;
  for (std::uint32_t a : specials) {
    for (std::uint32_t b : specials) bad += checker.Check(a, b);
  }
  // Products around 2^-126: 1.f × 2^-127 rounds up to the smallest normal or is flushed,
  // decided on the subnormal grid as IEEE-754 rounds.
  for (std::uint32_t frac : {0x7FFFFFu, 0x7FFFFEu, 0x7FFFFDu, 0x400000u, 0x400001u, 0u}) {
    for (std::uint32_t ea = 1; ea < 127; ++ea) {
      const std::uint32_t a = ea << 23 | frac;
      const std::uint32_t b = (127 - ea) << 23;
      bad += checker.Check(a, b) + checker.Check(a, b | 1) + checker.Check(a | 0x80000000u, b);
      bad += checker.Check(a, (128 - ea) << 23) + checker.Check(a, (126 - ea) << 23 | 0x7FFFFF);
    }
  }
  // Products at the top: just below, at and above the largest finite value.
  for (std::uint32_t ea = 128; ea < 255; ++ea) {
    for (std::uint32_t frac : {0x7FFFFFu, 0x7FFFF0u, 0u}) {
      const std::uint32_t a = ea << 23 | frac, b = (254 + 127 - ea) << 23 | frac;
      bad += checker.Check(a, b) + checker.Check(a, b - (1u << 23));
    }
  }
  // Ties and cancellation in addition: 1 + k × 2^-24, and x - (x ± ulps).
  for (std::uint32_t k = 0; k < 64; ++k) {
    for (std::uint32_t gap = 18; gap < 32; ++gap) {
      const std::uint32_t small = (127 - gap) << 23 | (k << 17);
      bad += checker.Check(0x3F800000u | k, small) + checker.Check(0x3F800000u | k, small | 0x80000000u);
    }
    bad += checker.Check(0x00800000u + k, 0x80800000u + 2 * k);  // results below 2^-126: flushed
    bad += checker.Check(0x3F800000u + k, 0xBF800000u + k + 1);
  }
  EXPECT_EQ(bad, 0);
  std::cout << "[ checked  ] " << checker.checked() << " directed pairs\n";
}

TEST(HlsFp32, TenMillionRandomPairsMatchTheModel) {
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  Checker checker;
  constexpr int kPairs = 10'000'000;
  int bad = 0;
  for (int i = 0; i < kPairs && bad < 100; ++i) {
    const std::uint32_t a = test::RandomOperand(rng, static_cast<std::uint32_t>(rng()));
    const std::uint32_t b = test::RandomOperand(rng, a);
    bad += checker.Check(a, b);
  }
  EXPECT_EQ(bad, 0);
  std::cout << "[ checked  ] " << checker.checked() << " random pairs\n";
}

}  // namespace
}  // namespace systole::hls
