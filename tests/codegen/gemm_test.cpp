// GEMM kernel: random and ragged shapes on every practical configuration, bit-exact against
// the reference of reference.hpp, through both epilogues (ACTIVATE and raw accumulators).
#include <gtest/gtest.h>

#include "tests/codegen/codegen_test_util.hpp"
#include "tests/codegen/reference.hpp"

namespace systole::codegen::testing {
namespace {

struct GemmCase {
  std::uint64_t m, k, n;
  bool bias, raw;
};

OutputTransform RandomTransform(std::mt19937_64& rng, bool bf16) {
  std::uniform_int_distribution<int> func(0, 3);
  const auto f = static_cast<isa::ActFunc>(func(rng));
  if (bf16) {
    constexpr float kScales[] = {1.0f, 0.5f, 0.3f, -1.25f};
    return OutputTransform::Float(f, kScales[func(rng)], -1.0f, 2.5f);
  }
  std::uniform_int_distribution<std::int32_t> multiplier(1, 1 << 14);
  std::uniform_int_distribution<int> shift(8, 16), zp(-20, 20);
  return OutputTransform::Quantized(multiplier(rng), static_cast<std::uint8_t>(shift(rng)),
                                    static_cast<std::int8_t>(zp(rng)), f, -50, 90);
}

void RunGemmCase(const Config& config, const GemmCase& c, std::mt19937_64& rng, bool blocked = false,
                 bool out_blocked = false, bool replicated_bias = false) {
  SCOPED_TRACE(::testing::Message() << config.name << " M=" << c.m << " K=" << c.k
                                    << " N=" << c.n << " bias=" << c.bias << " raw=" << c.raw
                                    << " blocked=" << blocked << " out_blocked=" << out_blocked << " replicated_bias=" << replicated_bias);
  ProgramBuilder builder(config);
  const bool bf16 = builder.IsBf16();
  const DataType element = builder.ElementType(), acc_type = builder.AccumulatorType();
  const Tensor a = builder.AddInput("A", element, {c.m, c.k});
  const std::uint64_t cols = config.cols;
  const Tensor b = blocked ? builder.AddInput("B", element, {(c.n + cols - 1) / cols, c.k, cols})
                           : builder.AddInput("B", element, {c.k, c.n});
  std::optional<Tensor> bias;
  const std::uint64_t bias_rows = std::min<std::uint64_t>(c.m, config.AccRows());
  if (c.bias) {
    bias = replicated_bias ? builder.AddInput("bias", acc_type, {(c.n + cols - 1) / cols, bias_rows, cols})
                           : builder.AddInput("bias", acc_type, {c.n});
  }
  const DataType out_type = c.raw ? acc_type : element;
  const Tensor out = out_blocked ? builder.AddOutput("out", out_type, {(c.n + cols - 1) / cols, c.m, cols})
                                 : builder.AddOutput("out", out_type, {c.m, c.n});
  const OutputTransform transform = c.raw ? OutputTransform{} : RandomTransform(rng, bf16);
  Gemm(builder, a, b, bias, out, transform, c.n);
  const image::Program program = builder.Finish();

  const double range = bf16 ? 2.0 : 127.0;
  const std::vector<std::uint32_t> b_bits = RandomBits(rng, element, c.k * c.n, range);  // [K, N]
  std::vector<HostTensor> inputs = {{a, RandomBits(rng, element, a.Elements(), range)},
                                    {b, blocked ? BlockColumns(b_bits, c.k, c.n, cols) : b_bits}};
  std::optional<std::vector<std::uint32_t>> bias_bits;
  if (bias) {
    bias_bits = RandomBits(rng, acc_type, c.n, bf16 ? 4.0 : 30000.0);
    inputs.push_back({*bias, replicated_bias ? ReplicateBias(*bias_bits, bias_rows, cols) : *bias_bits});
  }
  auto device = RunOnModel(config, program, inputs);
  const auto expected = GemmReference(config, inputs[0].bits, b_bits, bias_bits, c.m, c.k,
                                      c.n, transform, c.raw);
  const std::vector<std::uint32_t> actual = ReadTensor(*device, out);
  ExpectSameBits(expected, out_blocked ? UnblockColumns(actual, c.m, c.n, cols) : actual, "gemm output");
}

class GemmTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmTest, RaggedShapesMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t r = config.rows, c = config.cols;
  // Directed ragged shapes: K and N not multiples of the array, K > R, N > C.
  std::vector<GemmCase> cases = {
      {1, 1, 1, false, false},
      {3, r + 1, c + 3, true, false},
      {7, 2 * r + 5, 2 * c - 1, true, true},
      {5, r - 1 > 0 ? r - 1 : 1, c, false, true},
  };
  // M larger than one chunk (the accumulators of tiny hold 64 rows).
  if (config.name == "tiny") cases.push_back({150, 9, 6, true, false});
  std::uniform_int_distribution<std::uint64_t> dim(1, config.name == "v2" ? 2 * r + 20 : 3 * r + 7);
  std::uniform_int_distribution<int> coin(0, 1);
  for (int i = 0; i < 4; ++i) {
    cases.push_back({dim(rng), dim(rng), dim(rng), coin(rng) == 1, coin(rng) == 1});
  }
  for (const GemmCase& gemm_case : cases) RunGemmCase(config, gemm_case, rng);
}

TEST_P(GemmTest, ManyChunksAndTilesMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  if (config.name == "v2") GTEST_SKIP() << "kept small on v2 (RaggedShapes covers it)";
  std::mt19937_64 rng(TestSeed());
  RunGemmCase(config, {300, 5 * config.rows + 3, 4 * config.cols + 1, true, false}, rng);
}

// Column-blocked weights (each tile one contiguous block) compute the same bits.
TEST_P(GemmTest, ColumnBlockedWeightsMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t r = config.rows, c = config.cols;
  RunGemmCase(config, {37, 3 * r + 5, 2 * c + 3, true, false}, rng, true);
  RunGemmCase(config, {20, r, c, false, true}, rng, true);
  RunGemmCase(config, {9, 2 * r - 1, c - 1 > 0 ? c - 1 : 1, true, true}, rng, true);
  // Column-blocked output, with and without blocked weights, raw and activated.
  RunGemmCase(config, {300, 2 * r + 3, 3 * c + 1, true, false}, rng, true, true);
  RunGemmCase(config, {41, r + 2, 2 * c - 1, true, true}, rng, false, true);
  // A replicated bias: the starting values of raw outputs, ACTIVATE's bias row otherwise.
  RunGemmCase(config, {300, r + 3, 2 * c + 1, true, true}, rng, true, true, true);
  RunGemmCase(config, {45, 2 * r, c + 5, true, false}, rng, true, true, true);
}

// Few rows and many N tiles: the first chunk's tiles run as one group (k-step outer, each tile
// in its own accumulator slot) with its gathers cut into short LOADs, biases load a tile ahead,
// and the remaining tiles follow one by one. Every output element must still sum its k-steps
// in order (bit-exact with the reference), raw outputs starting from the bias.
TEST_P(GemmTest, GroupedTilesMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  if (config.name == "v2") GTEST_SKIP() << "kept small on v2 (RaggedShapes covers it)";
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t r = config.rows, c = config.cols;
  RunGemmCase(config, {49, 9 * r, 24 * c + 3, true, false}, rng, true, true);
  RunGemmCase(config, {49, 5 * r + 1, 24 * c + 3, true, true}, rng, true, true, true);
  RunGemmCase(config, {30, 3 * r, 6 * c, false, false}, rng);
}

// A reduction long enough that only one A slot fits: every chunk loads its own rows inside its
// first group (none is prefetched), after the previous chunk's MATMULs have freed the slot.
TEST_P(GemmTest, OneASlotChunksMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  if (config.name != "small" && config.name != "small-int8") GTEST_SKIP() << "sized for small's UB";
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t r = config.rows, c = config.cols, steps = config.UbRows() / 256 + 4;
  const GemmBuffers plan = PlanGemmBuffers(config, static_cast<std::uint32_t>(steps), 500, false);
  ASSERT_EQ(plan.a_buffers, 1u) << "pick a longer reduction";
  RunGemmCase(config, {500, steps * r, 3 * c + 1, true, false}, rng);
  RunGemmCase(config, {500, steps * r - 3, 2 * c, true, true}, rng, true, true, true);
  // Chunks of one group each (7 tiles, 7/8 of the 8 accumulator slots): the next chunk's first
  // group may only take the slot the previous one leaves (BuildGroups), or its bias loads would
  // overwrite slots whose epilogues are not yet in the program (the builder throws).
  const GemmBuffers wide = PlanGemmBuffers(config, static_cast<std::uint32_t>(steps), 3 * 230, false);
  ASSERT_EQ(config.AccRows() / (wide.chunk_rows + 1), 8u) << "pick a reduction with 8 accumulator slots";
  RunGemmCase(config, {3 * std::uint64_t{wide.chunk_rows}, steps * r, 7 * c, true, false}, rng);
}

// One N tile and a reduction too long for a chunk of all M rows to hold every k-step (a GEMV
// with swapped operands, like ResNet-50's classifier): the GEMM takes a ring of step slots
// (PlanRingBuffers), so one chunk covers M and each slot is reloaded once its MATMUL has read it.
TEST_P(GemmTest, RingOfStepSlotsMatchesTheReference) {
  const Config config = LoadConfig(GetParam());
  if (config.name != "small" && config.name != "small-int8") GTEST_SKIP() << "sized for small's UB";
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t r = config.rows, c = config.cols, steps = config.UbRows() / 64;
  const GemmBuffers plain = PlanGemmBuffers(config, static_cast<std::uint32_t>(steps), 700, true);
  ASSERT_LT(plain.chunk_rows, 700u) << "pick a longer reduction";
  const GemmBuffers ring = PlanRingBuffers(config, static_cast<std::uint32_t>(steps), 4, 700, true);
  EXPECT_EQ(ring.chunk_rows, 700u);
  EXPECT_EQ(ring.ring_steps, 4u);
  RunGemmCase(config, {700, steps * r - 5, 1, false, true}, rng);
  RunGemmCase(config, {700, steps * r, c, true, false}, rng);
  RunGemmCase(config, {1021, steps * r + 3, c - 3, true, true}, rng);
}

TEST(GemmPlans, RingNeedsTwoSlots) {
  const Config config = LoadConfig("small");
  EXPECT_THROW(PlanRingBuffers(config, 64, 1, 100, true), std::invalid_argument);
  EXPECT_EQ(PlanRingBuffers(config, 3, 4, 100, true).ring_steps, 3u) << "no more slots than steps";
}

INSTANTIATE_TEST_SUITE_P(Configs, GemmTest, ::testing::ValuesIn(TestConfigs()), ConfigTestName);

TEST(GemmErrors, RejectsMismatchedShapesAndTypes) {
  ProgramBuilder builder(LoadConfig("small"));
  const Tensor a = builder.AddInput("A", DataType::kBf16, {4, 8});
  const Tensor b = builder.AddInput("B", DataType::kBf16, {9, 8});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {4, 8});
  EXPECT_THROW(Gemm(builder, a, b, std::nullopt, out), std::invalid_argument);
  const Tensor b8 = builder.AddInput("B8", DataType::kInt8, {8, 8});
  EXPECT_THROW(Gemm(builder, a, b8, std::nullopt, out), std::invalid_argument);
  const Tensor raw = builder.AddOutput("raw", DataType::kFp32, {4, 8});
  const Tensor b_ok = builder.AddInput("Bok", DataType::kBf16, {8, 8});
  EXPECT_THROW(Gemm(builder, a, b_ok, std::nullopt, raw,
                    OutputTransform::Float(isa::ActFunc::kRelu)),
               std::invalid_argument);
}

}  // namespace
}  // namespace systole::codegen::testing
