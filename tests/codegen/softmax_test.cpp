// The fused Softmax kernel against a reference written from docs/ISA.md's REDUCE and VECTOR
// semantics: the row's max (over W partials when a row spans k > 1 UB rows), e^(x − M) in fp32
// rounded once, the sum of those (partials rounded to bf16 when k > 1), its reciprocal, and the
// product — bit for bit on the golden model, for rows shorter than W, of exactly W, of several
// W, and of several W plus a tail (whose padding must add nothing), bf16 configurations.
#include <gtest/gtest.h>

#include "sim/model/transcendental.hpp"
#include "tests/codegen/codegen_test_util.hpp"
#include "tests/codegen/row_reference.hpp"

namespace systole::codegen::testing {
namespace {

std::uint32_t Bf16(std::uint32_t f32_bits) { return numerics::F32ToBf16(f32_bits); }

std::vector<std::uint32_t> SoftmaxReference(const std::vector<std::uint32_t>& in, std::uint64_t rows, std::uint64_t n,
                                            std::uint64_t width, bool round_difference) {
  constexpr std::uint32_t minus_infinity = 0xFF800000u;  // -inf in fp32
  std::vector<std::uint32_t> out;
  for (std::uint64_t r = 0; r < rows; ++r) {
    std::vector<std::uint32_t> x;
    for (std::uint64_t j = 0; j < n; ++j) x.push_back(Widen(in[r * n + j]));
    const std::uint32_t m = ReduceRow(true, x, width, minus_infinity);
    std::vector<std::uint32_t> e;
    for (const std::uint32_t v : x) {
      std::uint32_t d = model::SubF32(v, m);
      if (round_difference) d = Widen(Bf16(d));
      e.push_back(Widen(Bf16(model::ExpF32(d))));
    }
    // The padding is −∞ in x, so e^(−∞ − M) = +0 in E.
    const std::uint32_t s = ReduceRow(false, e, width, 0u);
    const std::uint32_t reciprocal = Widen(Bf16(model::ReciprocalF32(s)));
    for (const std::uint32_t v : e) out.push_back(Bf16(model::MulF32(v, reciprocal)));
  }
  return out;
}

class SoftmaxTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SoftmaxTest, RowsOfAnyLengthMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t w = config.UbRowElems();
  // Rows long enough that a block holds 4 of them, and 2 blocks + 3 rows of them, so both slots
  // are used and reused (on small; v2's 16 MiB buffer would need 5 M elements for that).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> shapes = {
      {5, w / 2 + 1}, {4, w}, {3, 4 * w}, {7, 3 * w + 5}, {2, 1000}, {1, 1}};
  const std::uint64_t long_n = w * ((config.UbRows() / 8 - 3) / 2 - 1) + 5;
  const std::uint64_t long_rows = 2 * SoftmaxRowsPerBlock(config, long_n) + 3;
  if (long_rows * long_n <= 500'000) shapes.emplace_back(long_rows, long_n);
  for (const auto& [rows, n] : shapes) {
    for (const bool round_difference : {false, true}) {
      SCOPED_TRACE(::testing::Message() << config.name << " rows " << rows << " n " << n << " round_difference "
                                        << round_difference);
      ProgramBuilder builder(config);
      const Tensor in = builder.AddInput("in", DataType::kBf16, {rows, n});
      const Tensor out = builder.AddOutput("out", DataType::kBf16, {rows, n});
      Softmax(builder, in, out, round_difference);
      const image::Program program = builder.Finish();
      HostTensor h{in, RandomBits(rng, DataType::kBf16, in.Elements(), 8.0)};
      // The first row all negative: a padding of 0 instead of −∞ would win its max.
      for (std::uint64_t j = 0; j < n; ++j) h.bits[j] |= 0x8000u;
      auto device = RunOnModel(config, program, {h});
      ExpectSameBits(SoftmaxReference(h.bits, rows, n, w, round_difference), ReadTensor(*device, out),
                     "softmax output");
    }
  }
}

TEST_P(SoftmaxTest, EachRowSumsToOneWithinBf16Rounding) {
  // Independent of the reference: a softmax row sums to 1, every value in [0, 1], the largest
  // input gets the largest value.
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t rows = 6, n = 3 * config.UbRowElems() + 7;
  ProgramBuilder builder(config);
  const Tensor in = builder.AddInput("in", DataType::kBf16, {rows, n});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {rows, n});
  Softmax(builder, in, out);
  const image::Program program = builder.Finish();
  const HostTensor h{in, RandomBits(rng, DataType::kBf16, in.Elements(), 4.0)};
  auto device = RunOnModel(config, program, {h});
  const std::vector<std::uint32_t> y = ReadTensor(*device, out);
  for (std::uint64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    std::uint64_t arg_x = 0, arg_y = 0;
    for (std::uint64_t j = 0; j < n; ++j) {
      const float v = model::FloatFromBits(Widen(y[r * n + j]));
      EXPECT_GE(v, 0.0f);
      EXPECT_LE(v, 1.0f);
      sum += v;
      const auto x_at = [&](std::uint64_t c) { return model::FloatFromBits(Widen(h.bits[r * n + c])); };
      if (x_at(j) > x_at(arg_x)) arg_x = j;
      if (v > model::FloatFromBits(Widen(y[r * n + arg_y]))) arg_y = j;
    }
    EXPECT_NEAR(sum, 1.0, static_cast<double>(n) / 256) << "row " << r;
    EXPECT_EQ(model::FloatFromBits(Widen(y[r * n + arg_x])), model::FloatFromBits(Widen(y[r * n + arg_y])))
        << "row " << r << ": the largest input's value is not the largest output";
  }
}

TEST(SoftmaxKernel, RefusesRowsThatDoNotFitTheBufferTwice) {
  const Config config = LoadConfig("small");
  ProgramBuilder builder(config);
  const std::uint64_t n = config.UbRows() * config.UbRowElems();  // one row fills the whole UB
  const Tensor in = builder.AddInput("in", DataType::kBf16, {1, n});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {1, n});
  EXPECT_EQ(SoftmaxRowsPerBlock(config, n), 0u);
  EXPECT_THROW(Softmax(builder, in, out), std::invalid_argument);
}

TEST(SoftmaxKernel, RefusesInt8Configurations) {
  const Config config = LoadConfig("tiny");
  ProgramBuilder builder(config);
  const Tensor in = builder.AddInput("in", DataType::kInt8, {2, 8});
  const Tensor out = builder.AddOutput("out", DataType::kInt8, {2, 8});
  EXPECT_THROW(Softmax(builder, in, out), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Configs, SoftmaxTest, ::testing::Values("small", "v2"), ConfigTestName);

}  // namespace
}  // namespace systole::codegen::testing
