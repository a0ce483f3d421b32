// The fused LayerNorm kernel against a reference written from docs/ISA.md's REDUCE and VECTOR
// semantics — mean and var as scaled REDUCE sums (over W partials when a row spans k > 1 UB
// rows), each VECTOR rounding to bf16 — bit for bit on the golden model: rows shorter than W,
// of W, of several W, of several W plus a tail (whose padding must add nothing to either sum),
// more rows than two blocks, with and without γ and β; bf16 configurations.
#include <gtest/gtest.h>

#include "sim/model/transcendental.hpp"
#include "tests/codegen/codegen_test_util.hpp"
#include "tests/codegen/row_reference.hpp"

namespace systole::codegen::testing {
namespace {

std::uint32_t Round(std::uint32_t f32_bits) { return Widen(numerics::F32ToBf16(f32_bits)); }

struct Affine {
  std::vector<std::uint32_t> gamma, beta;  // bf16 bits, n each, or empty
};

std::vector<std::uint32_t> LayerNormReference(const std::vector<std::uint32_t>& in, std::uint64_t rows, std::uint64_t n,
                                              std::uint64_t width, std::uint32_t inverse_n, std::uint16_t epsilon,
                                              const Affine& affine) {
  std::vector<std::uint32_t> out;
  for (std::uint64_t r = 0; r < rows; ++r) {
    std::vector<std::uint32_t> x, d, q;
    for (std::uint64_t j = 0; j < n; ++j) x.push_back(Widen(in[r * n + j]));
    const std::uint32_t mean = ReduceRow(false, x, width, 0u, inverse_n);
    for (const std::uint32_t v : x) d.push_back(Round(model::SubF32(v, mean)));
    for (const std::uint32_t v : d) q.push_back(Round(model::MulF32(v, v)));
    const std::uint32_t var = ReduceRow(false, q, width, 0u, inverse_n);
    const std::uint32_t rs = Round(model::RsqrtF32(Round(model::AddF32(var, Widen(epsilon)))));
    for (std::uint64_t j = 0; j < n; ++j) {
      std::uint32_t y = Round(model::MulF32(d[j], rs));
      if (!affine.gamma.empty()) y = Round(model::MulF32(y, Widen(affine.gamma[j])));
      if (!affine.beta.empty()) y = Round(model::AddF32(y, Widen(affine.beta[j])));
      out.push_back(numerics::F32ToBf16(y));
    }
  }
  return out;
}

class LayerNormTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerNormTest, RowsOfAnyLengthMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t w = config.UbRowElems();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> shapes = {
      {5, w / 2 + 1}, {4, w}, {3, 4 * w}, {7, 3 * w + 5}, {2, 768}, {1, 1}};
  // Rows long enough that a block holds 4 of them, 2 blocks + 3 rows of them (small only).
  const std::uint64_t long_n = w * ((config.UbRows() / 8 - 3) / 3 - 2) + 5;
  const std::uint64_t long_rows = 2 * LayerNormRowsPerBlock(config, long_n) + 3;
  if (long_rows * long_n <= 500'000) shapes.emplace_back(long_rows, long_n);
  const std::uint16_t epsilon = 0x3727;  // bf16 ≈ 1e-5
  for (const auto& [rows, n] : shapes) {
    for (const bool affine : {false, true}) {
      SCOPED_TRACE(::testing::Message() << config.name << " rows " << rows << " n " << n << " affine " << affine);
      ProgramBuilder builder(config);
      const Tensor in = builder.AddInput("in", DataType::kBf16, {rows, n});
      const Tensor out = builder.AddOutput("out", DataType::kBf16, {rows, n});
      LayerNormParams params;
      params.inverse_n_bits = model::BitsFromFloat(static_cast<float>(1.0 / static_cast<double>(n)));
      params.epsilon_bits = epsilon;
      std::vector<HostTensor> inputs{{in, RandomBits(rng, DataType::kBf16, in.Elements(), 8.0)}};
      // The first row far from zero mean: a padding that is not +0 would move mean and var.
      for (std::uint64_t j = 0; j < n; ++j) inputs[0].bits[j] = numerics::F32ToBf16(model::BitsFromFloat(5.0f + float(j % 3)));
      Affine reference_affine;
      if (affine) {
        params.gamma = builder.AddInput("gamma", DataType::kBf16, {n});
        params.beta = builder.AddInput("beta", DataType::kBf16, {n});
        inputs.push_back({*params.gamma, RandomBits(rng, DataType::kBf16, n, 2.0)});
        inputs.push_back({*params.beta, RandomBits(rng, DataType::kBf16, n, 2.0)});
        reference_affine = {inputs[1].bits, inputs[2].bits};
      }
      LayerNorm(builder, in, out, params);
      const image::Program program = builder.Finish();
      auto device = RunOnModel(config, program, inputs);
      ExpectSameBits(LayerNormReference(inputs[0].bits, rows, n, w, params.inverse_n_bits, epsilon, reference_affine),
                     ReadTensor(*device, out), "layer norm output");
    }
  }
}

TEST_P(LayerNormTest, RowsComeOutWithZeroMeanAndUnitVariance) {
  // Independent of the reference: without γ and β each row has mean ≈ 0 and variance ≈ 1.
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t rows = 6, n = 3 * config.UbRowElems() + 7;
  ProgramBuilder builder(config);
  const Tensor in = builder.AddInput("in", DataType::kBf16, {rows, n});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {rows, n});
  LayerNormParams params;
  params.inverse_n_bits = model::BitsFromFloat(static_cast<float>(1.0 / static_cast<double>(n)));
  params.epsilon_bits = 0x3727;
  LayerNorm(builder, in, out, params);
  const image::Program program = builder.Finish();
  HostTensor h{in, RandomBits(rng, DataType::kBf16, in.Elements(), 4.0)};
  for (std::uint64_t i = 0; i < n; ++i) h.bits[i] = numerics::F32ToBf16(model::BitsFromFloat(3.0f + float(i % 5)));
  auto device = RunOnModel(config, program, {h});
  const std::vector<std::uint32_t> y = ReadTensor(*device, out);
  for (std::uint64_t r = 0; r < rows; ++r) {
    double sum = 0.0, squares = 0.0;
    for (std::uint64_t j = 0; j < n; ++j) {
      const double v = model::FloatFromBits(Widen(y[r * n + j]));
      sum += v;
      squares += v * v;
    }
    const double mean = sum / static_cast<double>(n);
    EXPECT_NEAR(mean, 0.0, 0.05) << "row " << r;
    EXPECT_NEAR(squares / static_cast<double>(n) - mean * mean, 1.0, 0.05) << "row " << r;
  }
}

TEST(LayerNormKernel, RefusesRowsThatDoNotFitAndInt8) {
  const Config small = LoadConfig("small");
  ProgramBuilder builder(small);
  const std::uint64_t n = small.UbRows() * small.UbRowElems() / 2;
  const Tensor in = builder.AddInput("in", DataType::kBf16, {1, n});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {1, n});
  EXPECT_EQ(LayerNormRowsPerBlock(small, n), 0u);
  EXPECT_THROW(LayerNorm(builder, in, out, {}), std::invalid_argument);
  ProgramBuilder tiny(LoadConfig("tiny"));
  const Tensor a = tiny.AddInput("in", DataType::kInt8, {2, 8});
  const Tensor b = tiny.AddOutput("out", DataType::kInt8, {2, 8});
  EXPECT_THROW(LayerNorm(tiny, a, b, {}), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Configs, LayerNormTest, ::testing::Values("small", "v2"), ConfigTestName);

}  // namespace
}  // namespace systole::codegen::testing
