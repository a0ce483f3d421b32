// The shared corpus of real HLO dumps: every file parses and verifies, the front end's
// pipeline keeps results identical, and the interpreter gives the right numbers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/io.hpp"
#include "toolchain/hlo/parser.hpp"
#include "toolchain/hlo/pass.hpp"
#include "toolchain/hlo/verifier.hpp"

namespace systole::hlo {
namespace {

namespace fs = std::filesystem;

fs::path CorpusFile(const std::string& name) { return fs::path(SYSTOLE_SHARED_DIR) / "corpus" / "hlo" / name; }

Module Load(const std::string& name) {
  std::vector<Module> modules = ParseModuleFile(CorpusFile(name));
  EXPECT_EQ(modules.size(), 1u);
  Verify(modules.front());
  return std::move(modules.front());
}

TEST(HloCorpus, EveryFileParsesAndVerifies) {
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(SYSTOLE_SHARED_DIR) / "corpus" / "hlo")) {
    if (entry.path().extension() != ".hlo") continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(Load(entry.path().filename().string()));
    ++files;
  }
  EXPECT_GE(files, 8u);
}

TEST(HloCorpus, ResNet50Structure) {
  const auto start = std::chrono::steady_clock::now();
  const Module module = Load("06_resnet50_inference_f32.hlo");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_EQ(module.name, "jit_predict_step");
  EXPECT_EQ(module.computations.size(), 16u);
  EXPECT_EQ(module.entry->name, "main.16");
  EXPECT_EQ(module.entry->Parameters().size(), 321u);
  EXPECT_EQ(module.entry->root->shape.tuple.size(), 321u);
  std::size_t convolutions = 0;
  for (const auto& instruction : module.entry->instructions) {
    if (instruction->opcode == Opcode::kConvolution) ++convolutions;
  }
  EXPECT_EQ(convolutions, 53u);
}

TEST(HloCorpus, AddDotGivesTheScalarByHand) {
  const Module module = Load("13_add_dot_legacy_operand_shapes.hlo");
  Literal x{Shape(ElementType::kF32, {4})};
  Literal y = x;
  x.values = {1, 2, 3, 4};
  y.values = {0.5, -1, 2, 3};
  const Literal result = Interpreter(module).Run({x, y});
  ASSERT_TRUE(result.shape.IsTuple());
  // dot(x + y, y) = 1.5*0.5 + 1*-1 + 5*2 + 7*3
  EXPECT_EQ(result.elements[0].values, (std::vector<double>{0.75 - 1 + 10 + 21}));
}

TEST(HloCorpus, MlpMatchesAHandWrittenForwardPass) {
  const Module module = Load("01_mlp_fc_relu_tf.hlo");
  const std::vector<Literal> inputs = RandomInputs(module, 5);
  const Literal result = Interpreter(module).Run(inputs);
  const Instruction* weights = module.entry->Find("constant.35");
  ASSERT_NE(weights, nullptr);
  const std::vector<double>& w = weights->literal->values;  // [3, 5]
  const std::vector<double>& x = inputs[1].values;          // [1, 300, 3, 1]
  ASSERT_EQ(result.elements[0].values.size(), 1500u);
  for (std::size_t row = 0; row < 300; ++row) {
    for (std::size_t col = 0; col < 5; ++col) {
      double sum = 0;
      for (std::size_t k = 0; k < 3; ++k) sum += x[row * 3 + k] * w[k * 5 + col];
      const double relu = std::max(0.0, static_cast<double>(static_cast<float>(sum)));
      // The file's select() zeroes rows where its first input is positive.
      const double expected = inputs[0].values[row] > 0 ? 0.0 : relu;
      ASSERT_EQ(result.elements[0].values[row * 5 + col], expected) << row << "," << col;
    }
  }
}

TEST(HloCorpus, MeanReduceIsTheMean) {
  const Module module = Load("10_mean_reduce_bf16.hlo");
  const std::vector<Literal> inputs = RandomInputs(module, 3);
  const Literal result = Interpreter(module).Run(inputs);
  ASSERT_EQ(result.values.size(), 4096u);
  for (std::size_t row = 0; row < 4096; row += 511) {
    const auto begin = inputs[0].values.begin() + static_cast<std::ptrdiff_t>(row * 1024);
    const double mean = std::accumulate(begin, begin + 1024, 0.0) / 1024;
    EXPECT_NEAR(result.values[row], mean, std::fabs(mean) * 0x1.0p-7 + 1e-6);
    EXPECT_EQ(result.values[row], RoundToType(ElementType::kBf16, result.values[row]));
  }
}

TEST(HloCorpus, LayerNormRowsHaveZeroMeanAndUnitVariance) {
  const Module module = Load("08_layer_norm_bf16.hlo");
  const Literal result = Interpreter(module).Run(RandomInputs(module, 11));
  for (std::size_t row = 0; row < 4096; row += 1023) {
    double sum = 0;
    double squares = 0;
    for (std::size_t i = 0; i < 768; ++i) {
      sum += result.values[row * 768 + i];
      squares += result.values[row * 768 + i] * result.values[row * 768 + i];
    }
    EXPECT_NEAR(sum / 768, 0.0, 0.02);
    EXPECT_NEAR(squares / 768, 1.0, 0.03);
  }
}

TEST(HloCorpus, AttentionRowsAreConvexCombinationsOfValues) {
  const Module module = Load("07_mha_softmax_attention_bf16.hlo");
  const std::vector<Literal> inputs = RandomInputs(module, 9);
  const Literal result = Interpreter(module).Run(inputs);
  ASSERT_EQ(result.values.size(), 12u * 128 * 64);
  // Softmax weights sum to ~1, so each output lies within the range of its value column.
  for (std::size_t head = 0; head < 12; head += 5) {
    for (std::size_t col = 0; col < 64; col += 13) {
      double low = INFINITY;
      double high = -INFINITY;
      for (std::size_t t = 0; t < 128; ++t) {
        low = std::min(low, inputs[2].values[(head * 128 + t) * 64 + col]);
        high = std::max(high, inputs[2].values[(head * 128 + t) * 64 + col]);
      }
      const double out = result.values[(head * 128 + 17) * 64 + col];
      EXPECT_GE(out, low - 0.05);
      EXPECT_LE(out, high + 0.05);
    }
  }
}

TEST(HloCorpus, DepthwiseBf16ConvolutionOfOnesIsTheTapCount) {
  const Module module = Load("05_depthwise_conv3x3_nchw_bf16.hlo");
  Literal ones{module.entry->Parameters()[0]->shape};
  std::fill(ones.values.begin(), ones.values.end(), 1.0);
  const Literal result = Interpreter(module).Run({ones});
  const double tap = RoundToType(ElementType::kBf16, 0.01001);
  EXPECT_EQ(result.values[0], RoundToType(ElementType::kBf16, 4 * tap));   // corner: 2x2 taps
  EXPECT_EQ(result.values[1], RoundToType(ElementType::kBf16, 6 * tap));   // edge: 2x3 taps
  EXPECT_EQ(result.values[57], RoundToType(ElementType::kBf16, 9 * tap));  // interior
}

TEST(HloCorpus, ResNet50RunsAndTheFrontEndPipelineKeepsItsResults) {
  Module module = Load("06_resnet50_inference_f32.hlo");
  std::vector<Literal> inputs = RandomInputs(module, 1);
  // Random weights of the documented distribution make activations explode; scale them the
  // way an initializer would (variance 1/fan-in), and keep every vector parameter (batch-norm
  // scales, offsets, means, variances) in [0.5, 1) so that variances are positive.
  for (Literal& input : inputs) {
    if (input.shape.Rank() == 1) {
      for (double& v : input.values) v = static_cast<float>(0.5 + 0.25 * (v + 1));
    } else if (input.shape.Rank() >= 2 && input.shape.dims[0] != 1) {
      const auto fan_in = static_cast<double>(input.shape.Elements() / input.shape.dims.back());
      for (double& v : input.values) v = static_cast<float>(v * std::sqrt(3.0 / fan_in));
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const Literal before = Interpreter(module).Run(inputs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("resnet50_interpreter_seconds", std::to_string(seconds));
  const std::vector<double>& probabilities = before.elements[0].values;
  ASSERT_EQ(probabilities.size(), 1000u);
  double total = 0;
  for (double p : probabilities) {
    ASSERT_TRUE(std::isfinite(p));
    ASSERT_GE(p, 0.0);
    total += p;
  }
  EXPECT_NEAR(total, 1.0, 1e-4);  // the model ends in a softmax

  Pipeline pipeline("front-end", /*until_fixed_point=*/true);
  pipeline.Add<InlineCalls>();
  pipeline.Add<ConstantFolding>();
  pipeline.Add<DeadCodeElimination>();
  const PassResult result = pipeline.Run(module);
  ASSERT_TRUE(result.ok()) << *result.error;
  EXPECT_EQ(module.computations.size(), 5u);  // entry + 4 reducers; the 11 called bodies are inlined
  const Literal after = Interpreter(module).Run(inputs);
  EXPECT_EQ(after.elements[0].values, probabilities);
}

}  // namespace
}  // namespace systole::hlo
