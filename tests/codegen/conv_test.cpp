// Convolution kernel: stride 1/2, padding, dilation, 1x1/3x3/7x7, grouped and depthwise,
// taps packed into k-steps for few input channels, bit-exact against reference.hpp (tap by
// tap) or conv_packed_reference.hpp (packed) on every practical configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "tests/codegen/codegen_test_util.hpp"
#include "tests/codegen/conv_packed_reference.hpp"
#include "tests/codegen/reference.hpp"
#include "toolchain/codegen/conv_internal.hpp"

namespace systole::codegen::testing {
namespace {

// The k-steps per output pixel and N tile: every k-step's MATMUL streams each row of its chunk
// once per N tile, so the MATMULs' rows add up to pixels × N tiles × k-steps, however the
// pixels are chunked. Tap by tap a convolution has KH·KW·⌈Cin/R⌉ k-steps, packed
// KH·⌈KW·Cin/R⌉ — how a test sees that taps really were packed.
std::uint64_t KSteps(const image::Program& program, std::uint64_t pixels, std::uint64_t n_tiles) {
  std::uint64_t rows = 0;
  for (const isa::Word& word : program.words) {
    const isa::Instruction insn = isa::DecodeOrThrow(word);
    if (insn.opcode == isa::Opcode::kMatmul) rows += insn[isa::Field::kRows];
  }
  EXPECT_EQ(rows % (pixels * n_tiles), 0u) << "MATMUL rows do not cover the pixels evenly";
  return rows / (pixels * n_tiles);
}

// Runs one convolution on the golden model against the reference of the order the code
// generator chose; returns whether it packed taps.
bool RunConvCase(const Config& config, const ConvShape& s, bool with_bias, bool raw,
                 std::mt19937_64& rng, bool blocked = false, bool out_blocked = false,
                 bool replicated_bias = false, bool with_start = false, bool element_start = false) {
  const ConvParams& p = s.params;
  SCOPED_TRACE(::testing::Message()
               << config.name << " in " << s.batch << "x" << s.h << "x" << s.w << "x" << s.cin
               << " k" << s.kh << "x" << s.kw << " cout " << s.cout << " stride " << p.stride_h
               << "/" << p.stride_w << " dil " << p.dilation_h << "/" << p.dilation_w << " pad "
               << p.pad_top << "," << p.pad_bottom << "," << p.pad_left << "," << p.pad_right
               << " groups " << p.groups << " bias " << with_bias << " raw " << raw
               << " blocked " << blocked << " out_blocked " << out_blocked << " replicated_bias "
               << replicated_bias << " start " << with_start << " element start " << element_start);
  ProgramBuilder builder(config);
  const bool bf16 = builder.IsBf16();
  const DataType element = builder.ElementType(), acc_type = builder.AccumulatorType();
  const Tensor in = builder.AddInput("in", element, {s.batch, s.h, s.w, s.cin});
  const std::uint64_t cols = config.cols;
  const Tensor w = blocked ? builder.AddInput("w", element, {(s.cout + cols - 1) / cols, s.kh, s.kw, s.cin, cols})
                           : builder.AddInput("w", element, {s.kh, s.kw, s.cin / p.groups, s.cout});
  std::optional<Tensor> bias;
  const std::uint64_t bias_rows = std::min<std::uint64_t>(s.OutH() * s.OutW(), config.AccRows());
  if (with_bias) {
    bias = replicated_bias ? builder.AddInput("bias", acc_type, {(s.cout + cols - 1) / cols, bias_rows, cols})
                           : builder.AddInput("bias", acc_type, {s.cout});
  }
  const DataType out_type = raw ? acc_type : element;
  const std::uint64_t pixels = s.batch * s.OutH() * s.OutW();
  const Tensor out = out_blocked ? builder.AddOutput("out", out_type, {(s.cout + cols - 1) / cols, s.batch, s.OutH(), s.OutW(), cols})
                                 : builder.AddOutput("out", out_type, {s.batch, s.OutH(), s.OutW(), s.cout});
  const OutputTransform transform =
      raw ? OutputTransform{}
          : (bf16 ? OutputTransform::Float(isa::ActFunc::kRelu6, 0.75f)
                  : OutputTransform::Quantized(3000, 14, -3, isa::ActFunc::kRelu));
  ConvParams params = p;
  params.out_channels = s.cout;
  // Laid out like out, in the accumulator type or (widened by its LOAD) the element type.
  if (with_start) params.start = builder.AddInput("start", element_start ? element : acc_type, out.shape);
  Conv2D(builder, in, w, bias, out, params, transform);
  const image::Program program = builder.Finish();
  bool packed = false;
  if (p.groups == 1) {  // packed or tap by tap, as the MATMULs show
    const std::uint64_t r = config.rows, steps = KSteps(program, s.batch * s.OutH() * s.OutW(), (s.cout + cols - 1) / cols);
    const std::uint64_t tap_by_tap = s.kh * s.kw * ((s.cin + r - 1) / r);
    packed = steps != tap_by_tap;
    if (packed) {
      EXPECT_EQ(steps, s.kh * ((s.kw * s.cin + r - 1) / r)) << "neither tap by tap nor packed";
    }
  }

  const double range = bf16 ? 2.0 : 127.0;
  const std::uint64_t w_rows = s.kh * s.kw * (s.cin / p.groups);
  const std::vector<std::uint32_t> w_bits = RandomBits(rng, element, w_rows * s.cout, range);  // HWIO
  std::vector<HostTensor> inputs = {{in, RandomBits(rng, element, in.Elements(), range)},
                                    {w, blocked ? BlockColumns(w_bits, w_rows, s.cout, cols) : w_bits}};
  std::optional<std::vector<std::uint32_t>> bias_bits;
  if (bias) {
    bias_bits = RandomBits(rng, acc_type, s.cout, bf16 ? 4.0 : 30000.0);
    inputs.push_back({*bias, replicated_bias ? ReplicateBias(*bias_bits, bias_rows, cols) : *bias_bits});
  }
  std::optional<std::vector<std::uint32_t>> start_bits;  // NHWC
  if (params.start) {
    EXPECT_FALSE(packed) << "the packed reference takes no starting tensor";
    start_bits = RandomBits(rng, element_start ? element : acc_type, pixels * s.cout,
                            element_start ? range : (bf16 ? 8.0 : 30000.0));
    inputs.push_back({*params.start, out_blocked ? BlockColumns(*start_bits, pixels, s.cout, cols) : *start_bits});
    if (element_start) {  // the reference starts from the same values in the accumulator type
      for (std::uint32_t& b : *start_bits) {
        b = bf16 ? b << 16 : static_cast<std::uint32_t>(std::int32_t{static_cast<std::int8_t>(b)});
      }
    }
  }
  auto device = RunOnModel(config, program, inputs);
  const auto expected =
      packed ? PackedConvReference(config, s, inputs[0].bits, w_bits, bias_bits, transform, raw)
             : ConvReference(config, s, inputs[0].bits, w_bits, bias_bits, transform, raw, start_bits);
  const std::vector<std::uint32_t> actual = ReadTensor(*device, out);
  ExpectSameBits(expected, out_blocked ? UnblockColumns(actual, pixels, s.cout, cols) : actual, "conv output");
  return packed;
}

ConvParams Params(std::uint32_t stride, std::uint32_t pad, std::uint32_t groups = 1,
                  std::uint32_t dilation = 1) {
  ConvParams p;
  p.stride_h = p.stride_w = stride;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = pad;
  p.dilation_h = p.dilation_w = dilation;
  p.groups = groups;
  return p;
}

class ConvTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvTest, DenseConvolutionsMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t r = config.rows, c = config.cols;
  const bool big = config.name == "v2";
  // 1x1, 3x3 stride 1 and 2 with padding, 7x7 stride 2 (ResNet's stem), dilation,
  // asymmetric padding, channels above R and C.
  RunConvCase(config, {1, 5, 6, r + 1, 1, 1, c + 2, Params(1, 0)}, true, false, rng);
  RunConvCase(config, {2, 6, 5, 3, 3, 3, c - 1 > 0 ? c - 1 : 1, Params(1, 1)}, true, false, rng);
  RunConvCase(config, {1, 7, 8, big ? 5 : 2 * r + 1, 3, 3, 5, Params(2, 1)}, false, true, rng);
  RunConvCase(config, {1, 11, 10, 3, 7, 7, big ? 8 : c + 1, Params(2, 3)}, true, false, rng);
  RunConvCase(config, {1, 9, 9, 4, 3, 3, 3, Params(1, 2, 1, 2)}, true, true, rng);
  ConvShape asymmetric{1, 8, 7, 5, 3, 2, 6, Params(2, 0)};
  asymmetric.params.pad_bottom = 1;
  asymmetric.params.pad_right = 1;
  asymmetric.params.stride_w = 1;
  RunConvCase(config, asymmetric, true, false, rng);
}

// A starting tensor (a residual added before the drain): the accumulators start from it, the
// k-steps add onto it, ACTIVATE adds the bias and applies the transform. Row-major and
// column-blocked outputs, one and several chunks, a grouped convolution.
TEST_P(ConvTest, StartingTensorIsTheAccumulatorsFirstValue) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t r = config.rows, c = config.cols;
  RunConvCase(config, {1, 5, 6, r + 1, 1, 1, c + 2, Params(1, 0)}, true, false, rng, false, false, false, true);
  RunConvCase(config, {1, 5, 6, r + 1, 1, 1, c + 2, Params(1, 0)}, false, false, rng, true, true, false, true);
  RunConvCase(config, {2, 14, 13, r, 3, 3, 2 * c, Params(1, 1)}, true, false, rng, true, true, false, true);
  RunConvCase(config, {1, 6, 6, 4, 3, 3, 8, Params(1, 1, 2)}, true, false, rng, false, false, false, true);
  // In the element type, widened into the accumulators by `load mem=acc widen`.
  RunConvCase(config, {1, 5, 6, r + 1, 1, 1, c + 2, Params(1, 0)}, true, false, rng, false, false, false, true, true);
  RunConvCase(config, {2, 14, 13, r, 3, 3, 2 * c, Params(1, 1)}, true, false, rng, true, true, false, true, true);
}

TEST(ConvErrors, StartingTensorNeedsTheOutputsShapeAndAnActivatedOutput) {
  const Config config = LoadConfig("small");
  ProgramBuilder builder(config);
  const Tensor in = builder.AddInput("in", DataType::kBf16, {1, 4, 4, 16});
  const Tensor w = builder.AddInput("w", DataType::kBf16, {1, 1, 16, 16});
  const Tensor wrong = builder.AddInput("start", DataType::kFp32, {1, 4, 4, 8});
  const Tensor start = builder.AddInput("start2", DataType::kFp32, {1, 4, 4, 16});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {1, 4, 4, 16});
  const Tensor raw = builder.AddOutput("raw", DataType::kFp32, {1, 4, 4, 16});
  ConvParams params;
  params.start = wrong;
  EXPECT_THROW(Conv2D(builder, in, w, std::nullopt, out, params), std::invalid_argument);
  params.start = start;
  EXPECT_THROW(Conv2D(builder, in, w, std::nullopt, raw, params), std::invalid_argument);
  // Neither the accumulator type nor the element type: no LOAD reads it.
  params.start = builder.AddInput("start3", DataType::kInt32, {1, 4, 4, 16});
  EXPECT_THROW(Conv2D(builder, in, w, std::nullopt, out, params), std::invalid_argument);
}

TEST_P(ConvTest, GroupedAndDepthwiseConvolutionsMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t r = config.rows;
  // Depthwise 3x3 (packed block-diagonal), depthwise with a channel multiplier, grouped with
  // several channels per group, and groups too wide to pack.
  RunConvCase(config, {1, 6, 7, 2 * r + 3, 3, 3, 2 * r + 3, Params(1, 1, static_cast<std::uint32_t>(2 * r + 3))}, true,
              false, rng);
  RunConvCase(config, {1, 5, 5, 6, 3, 3, 12, Params(2, 1, 6)}, true, true, rng);
  RunConvCase(config, {1, 5, 6, 8, 3, 3, 4, Params(1, 1, 2)}, false, false, rng);
  RunConvCase(config, {1, 4, 4, 2 * r + 2, 1, 1, 4, Params(1, 0, 2)}, true, false, rng);
}

// Few input channels: taps packed into k-steps (conv_packed.cpp), with and without a padded
// copy of the input, every weight and output layout. Each case states whether it must pack, so
// the test fails if packing silently stops (or starts where it cannot apply).
TEST_P(ConvTest, PackedTapsMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t c = config.cols;
  struct Case {
    ConvShape shape;
    bool packs;
    bool blocked = false, out_blocked = false, raw = false;
  };
  ConvShape asymmetric{1, 9, 11, 3, 3, 5, 4, Params(1, 0)};
  asymmetric.params.pad_left = 2;
  asymmetric.params.pad_top = 1;
  asymmetric.params.stride_w = 2;
  const std::vector<Case> cases = {
      {{1, 16, 16, 3, 7, 7, c + 1, Params(2, 3)}, true},             // ResNet's stem, small
      {{2, 9, 10, 3, 7, 7, 5, Params(2, 3)}, true, true, true},      // batch 2, blocked
      {{1, 8, 9, 1, 3, 3, 6, Params(1, 1)}, true, false, false, true},
      {{1, 7, 7, 1, 5, 5, 3, Params(1, 0)}, true},                   // no padding: no copy
      {{1, 10, 8, 5, 3, 3, c + 2, Params(2, 1)}, true, false, true},
      {{2, 6, 7, 8, 3, 3, 4, Params(1, 1)}, config.rows > 8, true, false, true},
      {{1, 9, 9, 3, 3, 3, 3, Params(1, 2, 1, 2)}, false},            // dilation 2: not contiguous
      {{1, 6, 6, 3, 1, 1, 5, Params(1, 0)}, false},                  // 1x1: nothing to pack
      {{1, 6, 7, 6, 3, 3, 6, Params(1, 1, 3)}, false},               // groups
      {asymmetric, true},
  };
  for (const Case& k : cases) {
    // The packed scheme needs fewer k-steps: KH·⌈KW·Cin/R⌉ < KH·KW·⌈Cin/R⌉.
    const bool fewer_steps = k.shape.params.groups == 1 && k.shape.params.dilation_w == 1 && k.shape.kw > 1 &&
                             (k.shape.kw * k.shape.cin + config.rows - 1) / config.rows <
                                 k.shape.kw * ((k.shape.cin + config.rows - 1) / config.rows);
    const bool packed = RunConvCase(config, k.shape, true, k.raw, rng, k.blocked, k.out_blocked);
    // Where packing applies the faster scheme wins: on R = 16 and wider arrays that is packing
    // by far (a third to a seventh of the k-steps); tiny's 4 rows gain less than the copy costs
    // in some cases, so there either scheme may win (and is checked against its reference).
    if (!(k.packs && fewer_steps)) {
      EXPECT_FALSE(packed) << "cin " << k.shape.cin << " k" << k.shape.kh << "x" << k.shape.kw;
    } else if (config.rows >= 16) {
      EXPECT_TRUE(packed) << "cin " << k.shape.cin << " k" << k.shape.kh << "x" << k.shape.kw;
    }
  }
}

// Column-blocked weights (each tile one contiguous block) compute the same bits.
TEST_P(ConvTest, ColumnBlockedWeightsMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t r = config.rows, c = config.cols;
  RunConvCase(config, {1, 5, 6, r + 1, 1, 1, c + 2, Params(1, 0)}, true, false, rng, true);
  RunConvCase(config, {1, 7, 8, 2 * r + 1, 3, 3, 2 * c + 5, Params(2, 1)}, false, true, rng, true);
  RunConvCase(config, {1, 11, 10, 3, 7, 7, c + 1, Params(2, 3)}, true, false, rng, true);
  // Column-blocked output, with and without blocked weights, raw and activated.
  RunConvCase(config, {2, 6, 5, r + 3, 3, 3, 2 * c + 1, Params(1, 1)}, true, true, rng, true, true);
  RunConvCase(config, {1, 7, 6, 5, 3, 3, c + 3, Params(2, 1)}, true, false, rng, false, true);
  // A replicated bias: the starting values of raw outputs, ACTIVATE's bias row otherwise.
  RunConvCase(config, {2, 9, 8, r + 1, 3, 3, 2 * c + 3, Params(1, 1)}, true, true, rng, true, true, true);
  RunConvCase(config, {1, 6, 6, 4, 1, 1, c + 1, Params(1, 0)}, true, false, rng, true, true, true);
}

TEST_P(ConvTest, WideImagesSplitRowsIntoChunks) {
  const Config config = LoadConfig(GetParam());
  if (config.name != "tiny") GTEST_SKIP() << "only tiny's accumulators are small enough";
  std::mt19937_64 rng(TestSeed());
  RunConvCase(config, {1, 3, 45, 3, 3, 3, 5, Params(1, 1)}, true, false, rng);
}

INSTANTIATE_TEST_SUITE_P(Configs, ConvTest, ::testing::ValuesIn(TestConfigs()), ConfigTestName);

// Where the analytic estimate cannot tell the candidate schemes apart (ResNet-50's 3x3 layers
// on 14x14: one A slot of 98-row chunks or two of 56), Conv2D keeps the one the timing model
// finds fastest: its program costs exactly the cheapest candidate's scratch program.
TEST(ConvPlan, TakesTheCandidateTheTimingModelFindsFastest) {
  const Config config = LoadConfig("small");
  const std::uint64_t c = config.cols, blocks = 256 / c;
  ProgramBuilder builder(config);
  const Tensor in = builder.AddInput("in", DataType::kBf16, {1, 14, 14, 256});
  const Tensor w = builder.AddInput("w", DataType::kBf16, {blocks, 3, 3, 256, c});
  const std::optional<Tensor> bias = builder.AddInput("bias", DataType::kFp32, {256});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {blocks, 1, 14, 14, c});
  ConvParams params = Params(1, 1);
  params.out_channels = 256;
  const OutputTransform transform = OutputTransform::Float(isa::ActFunc::kRelu);
  Conv2D(builder, in, w, bias, out, params, transform);
  builder.Finish();

  const conv::Geometry g{1, 14, 14, 256, 3, 3, 256, 256, 14, 14, 1, params};
  const std::vector<conv::DenseScheme> candidates = conv::DenseCandidates(config, g, 256, false);
  ASSERT_GT(candidates.size(), 1u) << "the case no longer needs a trial: pick another";
  std::uint64_t fastest = std::numeric_limits<std::uint64_t>::max();
  for (const conv::DenseScheme& scheme : candidates) {
    fastest = std::min(fastest, conv::TrialCycles(config, g, in, w, bias, out, transform, scheme));
  }
  EXPECT_EQ(builder.Estimates().back().cycles, fastest);
}

TEST(ConvErrors, RejectsBadShapes) {
  ProgramBuilder builder(LoadConfig("small"));
  const Tensor in = builder.AddInput("in", DataType::kBf16, {1, 4, 4, 6});
  const Tensor w = builder.AddInput("w", DataType::kBf16, {3, 3, 4, 8});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {1, 2, 2, 8});
  EXPECT_THROW(Conv2D(builder, in, w, std::nullopt, out, Params(1, 0)), std::invalid_argument);
  const Tensor w_ok = builder.AddInput("w_ok", DataType::kBf16, {3, 3, 6, 8});
  const Tensor out_bad = builder.AddOutput("out_bad", DataType::kBf16, {1, 3, 3, 8});
  EXPECT_THROW(Conv2D(builder, in, w_ok, std::nullopt, out_bad, Params(1, 0)),
               std::invalid_argument);
  // Column-blocked weights: the block count must fit Cout, and groups are not blocked.
  const Tensor out_ok = builder.AddOutput("out_ok", DataType::kBf16, {1, 2, 2, 8});
  const Tensor w_blocked_bad = builder.AddInput("wbb", DataType::kBf16, {2, 3, 3, 6, 16});
  EXPECT_THROW(Conv2D(builder, in, w_blocked_bad, std::nullopt, out_ok, Params(1, 0)), std::invalid_argument);
  const Tensor w_blocked = builder.AddInput("wb", DataType::kBf16, {1, 3, 3, 6, 16});
  EXPECT_NO_THROW(Conv2D(builder, in, w_blocked, std::nullopt, out_ok, Params(1, 0)));
  const Tensor in_g = builder.AddInput("in_g", DataType::kBf16, {1, 4, 4, 12});
  EXPECT_THROW(Conv2D(builder, in_g, w_blocked, std::nullopt, out_ok, Params(1, 0, 2)), std::invalid_argument);
}

}  // namespace
}  // namespace systole::codegen::testing
