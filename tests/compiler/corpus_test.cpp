// Every file of the shared HLO corpus (ResNet-50 aside: see resnet_test.cpp) and the int8
// examples compile for their configuration, run on the golden model and match the CPU
// interpreter within the tolerance of docs/COMPILER.md:
//   float models on bf16 configurations: max |device - interpreter| <= 2^-6 x max |interpreter|
//   (dot / convolution operands rounded to bf16, fp32 accumulation: the TPU's default precision);
//   s8 models on int8 configurations: exact.
#include <gmock/gmock.h>

#include <cmath>
#include <cstdio>

#include "tests/compiler/compiler_test_util.hpp"
#include "tests/hlo/jax_fixture.hpp"

namespace systole::compiler {
namespace {

using testing::CompileRunCompare;
using testing::CorpusFile;
using testing::ExampleFile;
using testing::ReadText;

constexpr double kFloatTolerance = 1.0 / 64;

struct Case {
  std::string file;
  std::size_t device_steps;  // dots / convolutions on the MXU, bf16 elementwise ops on the vector unit
};

// ctest shows the parameter: the file name, not gtest's byte dump of the struct.
void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

class Corpus : public ::testing::TestWithParam<Case> {};

TEST_P(Corpus, MatchesTheInterpreterOnTheGoldenModel) {
  const Case& c = GetParam();
  const auto module = PrepareModule(ReadText(CorpusFile(c.file)), c.file);
  const auto inputs = hlo::RandomInputs(*module, 2024);
  const auto result = CompileRunCompare(CorpusFile(c.file), "small", "ref", inputs);
  EXPECT_EQ(result.run.stats.device_steps, c.device_steps);
  EXPECT_LE(result.error, kFloatTolerance) << c.file;
  if (c.device_steps > 0) {
    EXPECT_GT(result.run.stats.cycles, 0u);
  }
}

// Attention (its softmax: REDUCE max, subtract, exponential, REDUCE sum, divide), layer norm
// (means, square, rsqrt through sqrt and divide) and the mean compute nothing on the host: what
// stays there moves data (reshapes, the broadcasts of row results). The mean is one REDUCE step
// (sum with scale 1/1024, the convert to bf16 included) and no host step at all.
TEST(VectorMath, AttentionLayerNormAndMeanHaveNoHostComputeStep) {
  for (const char* file : {"07_mha_softmax_attention_bf16.hlo", "08_layer_norm_bf16.hlo", "10_mean_reduce_bf16.hlo"}) {
    SCOPED_TRACE(file);
    const auto module = PrepareModule(ReadText(CorpusFile(file)), file);
    const auto result = CompileRunCompare(CorpusFile(file), "small", "ref", hlo::RandomInputs(*module, 2024));
    EXPECT_EQ(result.model.HostStepCount(HostWork::kCompute), 0u);
    std::printf("%s on ref: %zu device steps, %llu cycles, error %.2e vs the interpreter\n", file,
                result.model.DeviceStepCount(), static_cast<unsigned long long>(result.run.stats.cycles),
                result.error);
    EXPECT_LE(result.error, kFloatTolerance);
  }
  const std::string mean = "10_mean_reduce_bf16.hlo";
  EXPECT_EQ(Compile(ReadText(CorpusFile(mean)), mean, LoadConfig("small")).steps.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Hlo, Corpus,
    ::testing::Values(Case{"01_mlp_fc_relu_tf.hlo", 1}, Case{"03_conv7x7s2_bias_nhwc.hlo", 1},
                      Case{"05_depthwise_conv3x3_nchw_bf16.hlo", 1}, Case{"07_mha_softmax_attention_bf16.hlo", 4},
                      Case{"08_layer_norm_bf16.hlo", 1}, Case{"10_mean_reduce_bf16.hlo", 1},
                      Case{"13_add_dot_legacy_operand_shapes.hlo", 1}),
    [](const ::testing::TestParamInfo<Case>& param) { return "f" + param.param.file.substr(0, 2); });

// JAX functions as XLA's CPU compiler prints them after optimization (tests/hlo/data/
// jax_dumps.py): the fusions inline and the same dots and convolutions reach the MXU as from the
// unoptimized dump of the same function.
class JaxOptimized : public ::testing::TestWithParam<Case> {};

TEST_P(JaxOptimized, MatchesTheInterpreterOnTheGoldenModel) {
  const Case& c = GetParam();
  const auto path = std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests" / "hlo" / "data" / c.file;
  const auto module = PrepareModule(ReadText(path), c.file);
  const auto result = CompileRunCompare(path, "small", "ref", hlo::RandomInputs(*module, 7));
  EXPECT_EQ(result.run.stats.device_steps, c.device_steps);
  EXPECT_LE(result.error, kFloatTolerance) << c.file;
}

INSTANTIATE_TEST_SUITE_P(
    Hlo, JaxOptimized,
    ::testing::Values(Case{"jax_mlp_optimized.hlo", 2}, Case{"jax_cnn_optimized.hlo", 4},
                      Case{"jax_layer_norm_optimized.hlo", 0}, Case{"jax_attention_optimized.hlo", 10}),
    [](const ::testing::TestParamInfo<Case>& param) {
      return param.param.file.substr(4, param.param.file.find("_optimized") - 4);
    });

// f8 (f8e4m3fn, f8e5m2) runs on the host: the converts and the f8 dot there, with the reason;
// the f32 dot beside them on the MXU; an int8 configuration refuses the floating-point dot.
TEST(F8, ConvertsAndF8DotsRunOnTheHost) {
  const auto path = std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests/hlo/data/f8_dot.hlo";
  const auto module = PrepareModule(ReadText(path), "f8_dot.hlo");
  const auto result = CompileRunCompare(path, "small", "ref", hlo::RandomInputs(*module, 3));
  EXPECT_EQ(result.run.stats.device_steps, 1u);
  EXPECT_LE(result.error, kFloatTolerance);
  const CompiledModel model = Compile(ReadText(path), "f8_dot.hlo", LoadConfig("small"));
  std::string dot_reason;
  for (const Step& step : model.steps) {
    if (step.instruction == "d") dot_reason = step.reason;
  }
  EXPECT_EQ(dot_reason, "the bf16 MXU takes f32 / bf16 operands and results, not f8e4m3fn x f8e5m2 -> f32");
  EXPECT_THROW(Compile(ReadText(path), "f8_dot.hlo", LoadConfig("small-int8")), std::runtime_error);
}

// JAX control flow (lax.fori_loop: while; lax.cond, lax.switch: conditional): the fori_loop's
// body has a dot (and f32 elementwise work on an inference path), which run on the device each
// iteration, within the f32 programs' tolerance of the interpreter; the branches of the cond and
// the switch have none, so each conditional stays one host step with its reason and the result
// is the interpreter's. The interpreter matches JAX (tests/hlo/control_flow_test.cpp).
TEST(ControlFlow, LoopBodiesRunTheirDotsOnTheDeviceAndHostOnlyBranchesStayWhole) {
  for (const char* name : {"jax_fori_loop.hlo", "jax_cond.hlo", "jax_switch.hlo"}) {
    SCOPED_TRACE(name);
    const auto path = std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests/hlo/data" / name;
    const auto module = PrepareModule(ReadText(path), name);
    const auto result = CompileRunCompare(path, "small", "ref", hlo::RandomInputs(*module, 5));
    const bool loop = std::string(name) == "jax_fori_loop.hlo";
    EXPECT_EQ(result.model.HasControlSteps(), loop);
    if (loop) {
      EXPECT_EQ(result.model.DeviceStepCount(), 3u);  // the dot, the tanh and the add of its body
      EXPECT_GT(result.run.stats.device_steps, 3u);   // every iteration
      EXPECT_LE(result.error, kFloatTolerance);
      continue;
    }
    EXPECT_EQ(result.error, 0.0);  // the same interpreter computes both
    bool found = false;
    for (const Step& step : result.model.steps) {
      if (step.reason == "control flow whose computations have no device work: the interpreter runs it whole") {
        found = true;
      }
    }
    EXPECT_TRUE(found);
  }
}

// gather, scatter, sort and dynamic-update-slice run on the host from a compiled model: on ref
// with the JAX fixtures' inputs, the outputs are JAX's, bit for bit (every one is exact).
TEST(IndexedOps, RunOnTheHostAndGiveJaxsResults) {
  for (const char* name : {"jax_take", "jax_take_grad", "jax_batched_take_grad", "jax_sort_rows",
                           "jax_argsort_columns", "jax_scan_cumsum", "jax_update_slice"}) {
    SCOPED_TRACE(name);
    const auto path = hlo::testing::kJaxData / (std::string(name) + ".hlo");
    const auto module = PrepareModule(ReadText(path), name);
    const std::vector<npy::Array> arrays = npy::ReadNpz(hlo::testing::kJaxData / (std::string(name) + ".npz"));
    const std::vector<hlo::Instruction*> parameters = module->entry->Parameters();
    std::vector<hlo::Literal> inputs;
    for (std::size_t k = 0; k < parameters.size(); ++k) {
      inputs.push_back(hlo::testing::LiteralFromNpy(arrays[k], parameters[k]->shape));
    }
    const auto result = CompileRunCompare(path, "small", "ref", inputs);
    const std::vector<double>& expected = arrays[parameters.size()].values;
    ASSERT_EQ(result.run.result.values.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
      const double got = result.run.result.values[k];
      EXPECT_TRUE(std::isnan(expected[k]) ? std::isnan(got) : got == expected[k]) << k << ": " << got;
    }
  }
}

class Int8 : public ::testing::TestWithParam<std::string> {};

TEST_P(Int8, S8ProgramsAreExactOnSmallInt8) {
  const std::string file = GetParam();
  const auto module = PrepareModule(ReadText(ExampleFile(file)), file);
  const auto inputs = hlo::RandomInputs(*module, 5);
  const auto result = CompileRunCompare(ExampleFile(file), "small-int8", "ref", inputs);
  EXPECT_GE(result.run.stats.device_steps, 1u);
  for (const Step& step : result.model.steps) {
    if (step.kind == Step::Kind::kHost) {
      const auto opcode = result.model.module->entry->Find(step.instruction)->opcode;
      EXPECT_NE(opcode, hlo::Opcode::kDot) << step.reason;
      EXPECT_NE(opcode, hlo::Opcode::kConvolution) << step.reason;
    }
  }
  EXPECT_EQ(result.error, 0.0) << file;
}

INSTANTIATE_TEST_SUITE_P(Examples, Int8, ::testing::Values("s8_dense_bias.hlo", "s8_conv3x3.hlo", "s8_conv_requant.hlo",
                                                           "s8_dense_requant_host.hlo"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param.substr(0, param.param.find('.'));
                         });

}  // namespace
}  // namespace systole::compiler
