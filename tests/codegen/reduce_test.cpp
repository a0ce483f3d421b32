// The REDUCE kernels against references written from docs/ISA.md: RowReduce along the last
// dimension (rows of any length: a W multiple, shorter than W, and a multiple plus a tail whose
// missing elements are op's identity) and ColumnReduce across the middle dimension (a global
// average pool), bit for bit on the golden model, bf16 configurations.
#include <gtest/gtest.h>

#include "tests/codegen/codegen_test_util.hpp"

namespace systole::codegen::testing {
namespace {

constexpr std::uint32_t kMinusInf = 0xFF800000u;

// REDUCE's combining (docs/ISA.md): max starts from the first element, sum from +0; fp32.
struct Combiner {
  bool max;
  std::uint32_t value = 0;
  bool first = true;
  void Add(std::uint32_t v) {
    value = max ? (first ? v : model::MaxF32(value, v)) : model::AddF32(value, v);
    first = false;
  }
  // The REDUCE's result: the sum's scale (0 means 1), then bf16.
  std::uint32_t Result(std::uint32_t scale_bits) const {
    const std::uint32_t v = max ? value : model::MulF32(value, model::EffectiveScale(scale_bits, true));
    return Widen(numerics::F32ToBf16(v));
  }
};

// RowReduce as docs/CODEGEN.md and reduce.cpp describe it: k UB rows per row of n elements
// (the last padded with the identity), folded over rows into W partials rounded to bf16, then
// over the partials' elements (or, for a single UB row, over its n elements directly).
std::vector<std::uint32_t> RowReference(const std::vector<std::uint32_t>& in, std::uint64_t rows, std::uint64_t n,
                                        std::uint64_t width, bool max, std::uint32_t scale_bits) {
  const std::uint64_t k = (n + width - 1) / width;
  const std::uint32_t identity = max ? kMinusInf : 0u;
  std::vector<std::uint32_t> out;
  for (std::uint64_t r = 0; r < rows; ++r) {
    std::vector<std::uint32_t> partials;
    std::uint64_t elems = n;
    if (k == 1) {
      for (std::uint64_t j = 0; j < n; ++j) partials.push_back(Widen(in[r * n + j]));
    } else {
      elems = width;
      for (std::uint64_t j = 0; j < width; ++j) {
        Combiner c{max};
        for (std::uint64_t u = 0; u < k; ++u) c.Add(u * width + j < n ? Widen(in[r * n + u * width + j]) : identity);
        partials.push_back(c.Result(0));
      }
    }
    Combiner c{max};
    for (std::uint64_t j = 0; j < elems; ++j) c.Add(partials[j]);
    out.push_back(numerics::F32ToBf16(c.Result(scale_bits)));
  }
  return out;
}

class ReduceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReduceTest, RowsOfAnyLengthMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t w = config.UbRowElems();
  const std::uint32_t third = model::BitsFromFloat(1.0f / 3.0f);
  // n: a multiple of W, shorter than W, W plus a tail, 1000 (a classifier's logits).
  for (const std::uint64_t n : {2 * w, w / 2 + 1, 3 * w + 5, std::uint64_t{1000}}) {
    for (const std::uint64_t rows : {std::uint64_t{1}, std::uint64_t{7}}) {
      for (const bool max : {true, false}) {
        SCOPED_TRACE(::testing::Message() << config.name << " n " << n << " rows " << rows << " max " << max);
        ProgramBuilder builder(config);
        const Tensor in = builder.AddInput("in", DataType::kBf16, {rows, n});
        const Tensor out = builder.AddOutput("out", DataType::kBf16, {rows});
        RowReduceParams params;
        params.op = max ? isa::PoolOp::kMax : isa::PoolOp::kSum;
        params.scale_bits = max ? 0 : third;
        RowReduce(builder, in, out, params);
        const image::Program program = builder.Finish();
        HostTensor h{in, RandomBits(rng, DataType::kBf16, in.Elements(), 8.0)};
        // Every value of the first row negative: a zero standing in for missing elements would
        // win the max.
        for (std::uint64_t j = 0; j < n; ++j) h.bits[j] |= 0x8000u;
        auto device = RunOnModel(config, program, {h});
        ExpectSameBits(RowReference(h.bits, rows, n, w, max, params.scale_bits), ReadTensor(*device, out),
                       "row reduce output");
      }
    }
  }
}

TEST_P(ReduceTest, AcrossRowsMatchesTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t w = config.UbRowElems();
  const std::uint32_t mean49 = model::BitsFromFloat(1.0f / 49.0f);
  // [outer, m, n]: ResNet-50's global pool shape with fewer channels, a channel count with a
  // tail, and more channel blocks than one slot's group holds (several groups, both slots).
  // Whole UB rows of channels take one LOAD and one POOL per image (two slots: 3x49x8W; one
  // slot on small: 2x200x50W; REDUCE again where an image does not fit, on tiny), the others
  // and windows over 255 pixels (1x256x2W) REDUCE.
  const std::uint64_t rows = 100, group = config.UbRows() / (2 * (rows + 1));
  const std::vector<std::array<std::uint64_t, 3>> shapes = {{1, 49, 4 * w}, {2, 9, 2 * w + 3},
                                                            {1, rows, (group + 3) * w + 7}, {3, 49, 8 * w},
                                                            {2, 200, 50 * w}, {1, 256, 2 * w}};
  for (const auto& [outer, m, n] : shapes) {
    for (const bool max : {true, false}) {
      SCOPED_TRACE(::testing::Message() << config.name << " " << outer << "x" << m << "x" << n << " max " << max);
      ProgramBuilder builder(config);
      const Tensor in = builder.AddInput("in", DataType::kBf16, {outer, m, n});
      const Tensor out = builder.AddOutput("out", DataType::kBf16, {outer, n});
      RowReduceParams params;
      params.op = max ? isa::PoolOp::kMax : isa::PoolOp::kSum;
      params.scale_bits = max ? 0 : mean49;
      ColumnReduce(builder, in, out, params);
      const image::Program program = builder.Finish();
      const HostTensor h{in, RandomBits(rng, DataType::kBf16, in.Elements(), 8.0)};
      auto device = RunOnModel(config, program, {h});
      std::vector<std::uint32_t> expected;
      for (std::uint64_t o = 0; o < outer; ++o) {
        for (std::uint64_t c = 0; c < n; ++c) {
          Combiner acc{max};
          for (std::uint64_t r = 0; r < m; ++r) acc.Add(Widen(h.bits[(o * m + r) * n + c]));
          expected.push_back(numerics::F32ToBf16(acc.Result(params.scale_bits)));
        }
      }
      ExpectSameBits(expected, ReadTensor(*device, out), "column reduce output");
    }
  }
}

TEST(ReduceKernel, RefusesRowsThatDoNotFitTheBufferTwice) {
  const Config config = LoadConfig("small");
  ProgramBuilder builder(config);
  const std::uint64_t m = config.UbRows();  // one column block of m rows per slot: too many
  const Tensor in = builder.AddInput("in", DataType::kBf16, {1, m, config.UbRowElems()});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {1, config.UbRowElems()});
  EXPECT_THROW(ColumnReduce(builder, in, out, {}), std::invalid_argument);
}

// REDUCE and its fp32 scale exist on bf16 configurations.
INSTANTIATE_TEST_SUITE_P(Configs, ReduceTest, ::testing::Values("small", "v2"), ConfigTestName);

}  // namespace
}  // namespace systole::codegen::testing
