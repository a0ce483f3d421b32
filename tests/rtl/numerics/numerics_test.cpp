// rtl/numerics/ against sim/model/numerics.hpp, bit for bit: directed corner cases (signed
// zeros, subnormals, min/max normal, infinities, NaNs, rounding ties, cancellation, exponent
// gaps, the underflow and overflow edges of products) and over a million random operand pairs
// per operator, mixing raw bit patterns with operands of nearby exponents so that every
// alignment, normalisation and rounding path runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "Vvl_numerics.h"
#include "sim/model/numerics.hpp"
#include "sim/rtl/harness.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"
#include "tests/util/fp32_operands.hpp"

namespace systole::rtl {
namespace {

namespace m = systole::model;
using systole::test::RandomOperand;
using systole::test::Specials;

// Evaluates the test top on one operand triple and compares every output with the model.
// Returns the number of mismatches (each one reported).
class NumericsBench {
 public:
  explicit NumericsBench(std::uint64_t seed) : sim_("numerics", {.trace_path = {}, .seed = seed}) {}

  int Check(std::uint32_t a, std::uint32_t b, unsigned shift) {
    sim_->a = a;
    sim_->b = b;
    sim_->shift = shift;
    sim_.Eval();
    int bad = 0;
    const auto expect = [&](const char* what, std::uint64_t got, std::uint64_t want) {
      if (got != want) {
        ++bad;
        if (reported_++ < 20) {
          ADD_FAILURE() << what << std::hex << ": a=0x" << a << " b=0x" << b << std::dec
                        << " shift=" << shift << std::hex << " rtl=0x" << got << " model=0x"
                        << want;
        }
      }
    };
    expect("add", sim_->add_y, m::AddF32(a, b));
    expect("sub", sim_->sub_y, m::SubF32(a, b));
    expect("mul", sim_->mul_y, m::MulF32(a, b));
    expect("max", sim_->max_y, m::MaxF32(a, b));
    expect("min", sim_->min_y, m::MinF32(a, b));
    expect("to_bf16", sim_->bf16_y, m::F32ToBf16(a));
    expect("bf16_to_fp32", sim_->widen_y, m::Bf16ToF32(static_cast<std::uint16_t>(a)));
    if (shift <= 62) {
      const std::int64_t q = m::Requantize(static_cast<std::int32_t>(a),
                                           static_cast<std::int32_t>(b), shift);
      expect("requant", sim_->requant_y, static_cast<std::uint64_t>(q));
      expect("requant_sat18", sim_->requant_sat18_y, SaturatedBits(q, 18));
      expect("requant_sat8", sim_->requant_sat8_y, SaturatedBits(q, 8));
    }
    const auto wide = static_cast<std::int64_t>(std::uint64_t{b} << 32 | a);
    expect("sat_int8", sim_->sat_y, static_cast<std::uint8_t>(m::SaturateInt8(wide)));
    ++checked_;
    return bad;
  }
  std::uint64_t checked() const { return checked_; }

  // q saturated to a bits-wide signed value, as its two's-complement bits (systole_requant_sat).
  static std::uint64_t SaturatedBits(std::int64_t q, unsigned bits) {
    const std::int64_t high = (std::int64_t{1} << (bits - 1)) - 1;
    const std::int64_t clamped = std::clamp(q, -high - 1, high);
    return static_cast<std::uint64_t>(clamped) & ((std::uint64_t{1} << bits) - 1);
  }

 private:
  Harness<Vvl_numerics> sim_;
  std::uint64_t checked_ = 0;
  int reported_ = 0;
};

TEST(Numerics, DirectedCornerCases) {
  const std::uint64_t seed = test::Seed();
  NumericsBench bench(seed);
  const auto specials = Specials();
  int bad = 0;
  for (std::uint32_t a : specials) {
    for (std::uint32_t b : specials) {
      for (unsigned shift : {0u, 1u, 31u, 62u}) bad += bench.Check(a, b, shift);
    }
  }
  // Named cases from docs/NUMERICS.md, so a reader sees them pinned.
  EXPECT_EQ(bench.Check(0x00000000, 0x80000000, 0), 0);  // (+0) + (-0) = +0
  EXPECT_EQ(bench.Check(0x3F800000, 0xBF800000, 0), 0);  // x + (-x) = +0
  EXPECT_EQ(bench.Check(0x7F800000, 0xFF800000, 0), 0);  // inf + -inf = NaN
  EXPECT_EQ(bench.Check(0x7F800000, 0x00000000, 0), 0);  // inf × 0 = NaN
  EXPECT_EQ(bench.Check(0x7F800000, 0x00000001, 0), 0);  // inf × subnormal (flushed) = NaN
  // Products just below 2^-126: 1.f × 2^-127 with f all ones rounds up to 2^-126 (kept),
  // one ulp less is flushed.
  for (std::uint32_t frac : {0x7FFFFFu, 0x7FFFFEu, 0x400000u, 0u}) {
    for (std::uint32_t ea = 1; ea < 127; ea += 5) {
      const std::uint32_t a = ea << 23 | frac;
      const std::uint32_t b = (127 - ea) << 23;  // a × b = 1.f × 2^-127 exactly
      bad += bench.Check(a, b, 0);
      bad += bench.Check(a, b | 1, 0);
      bad += bench.Check(a | 0x80000000, b, 0);
      bad += bench.Check(a, (128 - ea) << 23, 0);  // exactly min-normal range
    }
  }
  // Rounding ties of addition: 1 + k × 2^-24 for small k, both signs.
  for (std::uint32_t k = 0; k < 64; ++k) {
    for (std::uint32_t gap = 20; gap < 30; ++gap) {
      const std::uint32_t small = (127 - gap) << 23 | (k << 17);
      bad += bench.Check(0x3F800000 | k, small, 0);
      bad += bench.Check(0x3F800000 | k, small | 0x80000000, 0);
    }
  }
  // Requantization: half-up rounding of negative and positive values at every shift.
  for (unsigned shift = 0; shift <= 62; ++shift) {
    for (std::uint32_t v : {0u, 1u, 3u, 0xFFFFFFFDu, 0x80000000u, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
      for (std::uint32_t s : {1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 3u}) {
        bad += bench.Check(v, s, shift);
      }
    }
  }
  // Saturated requantization (systole_requant_sat): products whose rounded, shifted value is
  // at and around the 18- and 8-bit limits, at every shift, both signs; s = 1 and s = 2^k·3.
  for (unsigned shift = 0; shift <= 62; ++shift) {
    for (int bits : {8, 18}) {
      const std::int64_t top = (std::int64_t{1} << (bits - 1)) - 1;
      for (std::int64_t edge : {top, -top - 1}) {
        for (std::int64_t d = -2; d <= 2; ++d) {
          for (std::int64_t half : {std::int64_t{0}, std::int64_t{1}}) {
            // target value (edge + d), minus half a step, so that rounding decides the edge.
            if (shift > 31) continue;  // |v| < 2^31 with s = 1
            const std::int64_t round = half && shift > 0 ? std::int64_t{1} << (shift - 1) : 0;
            const std::int64_t v = ((edge + d) << shift) - round;
            if (v < INT32_MIN || v > INT32_MAX) continue;
            bad += bench.Check(static_cast<std::uint32_t>(v), 1u, shift);
            bad += bench.Check(static_cast<std::uint32_t>(v - 1), 1u, shift);
          }
        }
      }
    }
    for (std::uint32_t v : {0x7FFFFFFFu, 0x80000000u, 0x00012345u, 0xFFFEDCBAu}) {
      for (unsigned k = 0; k < 31; k += 3) bad += bench.Check(v, 3u << k, shift);
    }
  }
  EXPECT_EQ(bad, 0);
  std::cout << "[ checked  ] " << bench.checked() << " operand sets\n";
}

TEST(Numerics, RandomRequantizationNearTheSaturationEdges) {
  // Operands of random magnitudes (1 to 32 significant bits each) and shifts near the product's
  // own bit length, so that the saturated 18- and 8-bit results land on both sides of the edge.
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  NumericsBench bench(seed);
  const auto operand = [&rng] {
    const unsigned len = 1 + static_cast<unsigned>(rng() % 32);
    const std::int64_t x =
        static_cast<std::int64_t>(rng() >> (64 - len)) - (std::int64_t{1} << (len - 1));
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(x));
  };
  int bad = 0;
  for (int i = 0; i < 400'000 && bad < 100; ++i) {
    const std::uint32_t v = operand(), s = operand();
    const auto product = static_cast<std::int64_t>(static_cast<std::int32_t>(v)) *
                         static_cast<std::int32_t>(s);
    const unsigned len = 64 - static_cast<unsigned>(std::countl_zero(static_cast<std::uint64_t>(
                                   product < 0 ? ~product : product)));
    const int jitter = static_cast<int>(rng() % 24) - 20;  // shifts around len − 18 and len − 8
    const int shift = std::clamp(static_cast<int>(len) + jitter, 0, 62);
    bad += bench.Check(v, s, static_cast<unsigned>(shift));
  }
  EXPECT_EQ(bad, 0);
  std::cout << "[ checked  ] " << bench.checked() << " operand sets near the edges (seed " << seed
            << ")\n";
}

TEST(Numerics, RandomOperandsMatchTheModel) {
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  NumericsBench bench(seed);
  constexpr int kPairs = 1'500'000;  // every operand set checks every operator
  int bad = 0;
  for (int i = 0; i < kPairs && bad < 100; ++i) {
    const std::uint32_t a = RandomOperand(rng, static_cast<std::uint32_t>(rng()));
    const std::uint32_t b = RandomOperand(rng, a);
    const auto shift = static_cast<unsigned>(rng() % 63);
    bad += rng() % 2 ? bench.Check(a, b, shift) : bench.Check(b, a, shift);
  }
  EXPECT_EQ(bad, 0);
  std::cout << "[ checked  ] " << bench.checked() << " random operand sets\n";
}

}  // namespace
}  // namespace systole::rtl
