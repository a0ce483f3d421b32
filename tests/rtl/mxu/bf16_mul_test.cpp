// systole_bf16_mul against the golden model's multiply: MulF32(Bf16ToF32(a), Bf16ToF32(b)),
// which is the MXU product of docs/NUMERICS.md. Every a against a random sample of b, and every
// pair of special values (zeros, subnormals, the extremes, infinities, NaNs).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <random>

#include "Vvl_bf16_mul.h"
#include "sim/model/numerics.hpp"
#include "tests/model/model_test_util.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl {
namespace {

class Bf16Mul {
 public:
  Bf16Mul() : context_(std::make_unique<VerilatedContext>()) {
    model_ = std::make_unique<Vvl_bf16_mul>(context_.get(), "bf16_mul");
  }
  ~Bf16Mul() { model_->final(); }
  std::uint32_t operator()(std::uint16_t a, std::uint16_t b) {
    model_->a = a;
    model_->b = b;
    model_->eval();
    return model_->y;
  }

 private:
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Vvl_bf16_mul> model_;
};

std::uint32_t Expected(std::uint16_t a, std::uint16_t b) {
  return model::MulF32(model::Bf16ToF32(a), model::Bf16ToF32(b));
}

TEST(Bf16Mul, EveryAAgainstRandomB) {
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  Bf16Mul mul;
  int failures = 0;
  for (std::uint32_t a = 0; a < 0x10000; ++a) {
    for (int i = 0; i < 256; ++i) {
      const auto b = static_cast<std::uint16_t>(rng());
      const std::uint32_t got = mul(static_cast<std::uint16_t>(a), b);
      const std::uint32_t want = Expected(static_cast<std::uint16_t>(a), b);
      if (got != want && failures++ < 10) {
        ADD_FAILURE() << fmt::format("{:04x} x {:04x}: rtl {:08x}, golden {:08x}", a, b, got, want);
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(Bf16Mul, SpecialPairsAndProductsNearTheExponentLimits) {
  Bf16Mul mul;
  std::vector<std::uint16_t> values = model::testing::SpecialBf16();
  // Exponents whose sums land around underflow (2^-126) and overflow (2^128).
  for (std::uint16_t e : {1, 2, 63, 64, 65, 126, 127, 128, 190, 191, 192, 253, 254}) {
    for (std::uint16_t f : {0x00, 0x01, 0x40, 0x7F}) {
      values.push_back(static_cast<std::uint16_t>(e << 7 | f));
      values.push_back(static_cast<std::uint16_t>(0x8000 | e << 7 | f));
    }
  }
  for (std::uint16_t a : values) {
    for (std::uint16_t b : values) {
      ASSERT_EQ(mul(a, b), Expected(a, b)) << fmt::format("{:04x} x {:04x}", a, b);
    }
  }
}

}  // namespace
}  // namespace systole::rtl
