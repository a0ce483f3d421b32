// The compiler end to end on small programs: placement, fusion, numerics against the
// interpreter on the golden model, model files, and the int8 refusal.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <unistd.h>
#include <zip.h>

#include <tuple>

#include "tests/util/zip_builder.hpp"
#include "tests/compiler/compiler_test_util.hpp"
#include "toolchain/compiler/model_file.hpp"

namespace systole::compiler {
namespace {

using testing::CompileRunCompare;
using testing::CorpusFile;
using testing::ReadText;
using ::testing::HasSubstr;

using testing::FindStep;

std::size_t CountDevice(const CompiledModel& model) { return model.DeviceStepCount(); }

TEST(Compiler, MlpRunsOnTheGoldenModelAndMatchesTheInterpreter) {
  const auto inputs = [] {
    const auto module = PrepareModule(ReadText(CorpusFile("01_mlp_fc_relu_tf.hlo")), "01");
    return hlo::RandomInputs(*module, 7);
  }();
  const auto c = CompileRunCompare(CorpusFile("01_mlp_fc_relu_tf.hlo"), "small", "ref", inputs);
  // The dot, its (zero) bias add and the ReLU are one device step; the select stays on the host.
  const Step* dot = FindStep(c.model, "dot.36");
  ASSERT_NE(dot, nullptr);
  ASSERT_EQ(dot->kind, Step::Kind::kDevice);
  EXPECT_THAT(dot->device->covers, ::testing::ElementsAre("dot.36", "add.39"));
  EXPECT_EQ(FindStep(c.model, "select.45")->kind, Step::Kind::kHost);
  EXPECT_EQ(c.run.stats.device_steps, 1u);
  EXPECT_GT(c.run.stats.cycles, 0u);
  EXPECT_EQ(c.run.stats.macs, dot->device->estimate.macs);
  EXPECT_LT(c.error, 1.0 / 64) << "bf16 operands, fp32 accumulation";
}

TEST(Compiler, ConvBiasBatchNormReluFuseIntoOneStep) {
  const std::string text = R"(HloModule fused
ENTRY e {
  x = f32[1,8,8,16] parameter(0)
  w = f32[3,3,16,32] parameter(1)
  b = f32[32] parameter(2)
  s = f32[32] parameter(3)
  conv = f32[1,8,8,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[1,8,8,32] broadcast(b), dimensions={3}
  add = f32[1,8,8,32] add(conv, bb)
  sb = f32[1,8,8,32] broadcast(s), dimensions={3}
  mul = f32[1,8,8,32] multiply(add, sb)
  zero = f32[] constant(0)
  z = f32[1,8,8,32] broadcast(zero), dimensions={}
  relu = f32[1,8,8,32] maximum(mul, z)
  w2 = f32[1,1,32,8] parameter(4)
  ROOT conv2 = f32[1,8,8,8] convolution(relu, w2), window={size=1x1}, dim_labels=b01f_01io->b01f
})";
  const Config config = LoadConfig("small");
  const CompiledModel model = Compile(text, "fused", config);
  ASSERT_EQ(CountDevice(model), 2u);
  const Step* first = FindStep(model, "relu");
  ASSERT_EQ(first->kind, Step::Kind::kDevice);
  EXPECT_THAT(first->device->covers, ::testing::ElementsAre("conv", "add", "mul", "relu"));
  // relu feeds only a convolution, so the drain may round to bf16 and apply the ReLU.
  EXPECT_EQ(first->device->output.dtype, image::DataType::kBf16);
  EXPECT_EQ(first->device->inputs[1].kind, Binding::Kind::kWeights);

  const std::vector<hlo::Literal> inputs = hlo::RandomInputs(*model.module, 3);
  Device device = Device::Open("ref", config);
  const RunResult run = Execute(model, device, inputs);
  const hlo::Literal expected = hlo::Interpreter(*model.module).Run(inputs);
  EXPECT_LT(testing::RelativeError(run.result, expected), 1.0 / 32);
  // Without fusion every elementwise op runs on the host; the numbers stay close.
  CompileOptions unfused;
  unfused.fuse = false;
  const CompiledModel plain = Compile(text, "fused", config, unfused);
  EXPECT_EQ(FindStep(plain, "relu")->kind, Step::Kind::kHost);
  const RunResult plain_run = Execute(plain, device, inputs);
  EXPECT_LT(testing::RelativeError(plain_run.result, expected), 1.0 / 32);
}

TEST(Compiler, ZeroPadBeforeAConvolutionBecomesItsPaddingBitExactly) {
  const std::string text = R"(HloModule padded
ENTRY e {
  x = f32[1,10,12,3] parameter(0)
  zero = f32[] constant(0)
  p = f32[1,16,18,3] pad(x, zero), padding=0_0x3_3x2_4x0_0
  w = f32[7,7,3,16] parameter(1)
  ROOT c = f32[1,5,6,16] convolution(p, w), window={size=7x7 stride=2x2}, dim_labels=b01f_01io->b01f
})";
  const Config config = LoadConfig("small");
  const CompiledModel fused = Compile(text, "padded", config);
  ASSERT_EQ(fused.steps.size(), 1u) << "the pad is not computed on the host";
  EXPECT_THAT(fused.steps[0].device->covers, ::testing::ElementsAre("p", "c"));
  EXPECT_EQ(fused.steps[0].device->inputs[0].value, "x");
  CompileOptions plain_options;
  plain_options.fuse = false;
  const CompiledModel plain = Compile(text, "padded", config, plain_options);
  EXPECT_EQ(FindStep(plain, "p")->kind, Step::Kind::kHost);
  const std::vector<hlo::Literal> inputs = hlo::RandomInputs(*fused.module, 5);
  Device device = Device::Open("ref", config);
  const RunResult a = Execute(fused, device, inputs);
  const RunResult b = Execute(plain, device, inputs);
  EXPECT_EQ(a.result.values, b.result.values) << "padding pixels add +0 products either way";
  const hlo::Literal expected = hlo::Interpreter(*fused.module).Run(inputs);
  EXPECT_LT(testing::RelativeError(a.result, expected), 1.0 / 64);
}

// The root is never rounded by the drain, so the dot stores fp32. Its ReLU, f32 arithmetic on
// an inference path, runs on the vector unit at the MXU's DEFAULT precision (bf16 in and out)
// with fusion on, and on the host in f32 under --no-fuse (docs/COMPILER.md, "f32 programs on
// the vector unit").
TEST(Compiler, F32RootStaysFp32InTheDrainAndItsReluRunsAtDefaultPrecision) {
  const std::string text = R"(HloModule keep
ENTRY e {
  a = f32[16,32] parameter(0)
  b = f32[32,24] parameter(1)
  d = f32[16,24] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  z = f32[16,24] broadcast(zero), dimensions={}
  ROOT r = f32[16,24] maximum(d, z)
})";
  const CompiledModel model = Compile(text, "keep", LoadConfig("small"));
  const Step* dot = FindStep(model, "d");
  ASSERT_EQ(dot->kind, Step::Kind::kDevice);
  EXPECT_EQ(dot->device->output.dtype, image::DataType::kFp32);
  const Step* relu = FindStep(model, "r");
  ASSERT_EQ(relu->kind, Step::Kind::kDevice);
  EXPECT_EQ(relu->device->inputs.at(0).dtype, image::DataType::kBf16);
  CompileOptions plain_options;
  plain_options.fuse = false;
  EXPECT_EQ(FindStep(Compile(text, "keep", LoadConfig("small"), plain_options), "r")->kind, Step::Kind::kHost);
}

TEST(Compiler, ModelFileRoundTripsAndRunsTheSame) {
  const Config config = LoadConfig("small");
  const CompiledModel model = Compile(ReadText(CorpusFile("05_depthwise_conv3x3_nchw_bf16.hlo")), "05", config);
  // The process id keeps concurrent runs of this test (several build trees on one machine) apart.
  const auto path =
      std::filesystem::path(::testing::TempDir()) / ("model_roundtrip_" + std::to_string(::getpid()) + ".sbin");
  SaveModel(model, path);
  EXPECT_TRUE(IsModelFile(path));
  const CompiledModel loaded = LoadModel(path);
  ASSERT_EQ(loaded.steps.size(), model.steps.size());
  const std::vector<hlo::Literal> inputs = hlo::RandomInputs(*model.module, 11);
  Device device = Device::Open("ref", config);
  const RunResult a = Execute(model, device, inputs);
  const RunResult b = Execute(loaded, device, inputs);
  EXPECT_EQ(a.result.values, b.result.values);
  EXPECT_EQ(a.stats.cycles, b.stats.cycles);
  std::filesystem::remove(path);
}

TEST(Compiler, CorruptModelFilesFailWithAMessage) {
  const auto path = std::filesystem::path(::testing::TempDir()) / ("h5_not_a_model_" + std::to_string(::getpid()) + ".sbin");
  { std::ofstream(path) << "PK garbage"; }
  EXPECT_FALSE(IsModelFile(path));
  EXPECT_THROW(LoadModel(path), std::runtime_error);
  std::filesystem::remove(path);
}

// One digit of a constant changed in model.hlo, the zip's CRC left alone: once this loaded and
// ran, changing 511 output bytes. Members are stored here so that the digit is in the file as
// text, as an editor (or a flipped bit on disk) would change it.
TEST(Compiler, AChangedConstantInAModelFileFailsItsCrc) {
  const std::string text = R"(HloModule crc
ENTRY e {
  a = f32[16,32] parameter(0)
  b = f32[32,24] parameter(1)
  d = f32[16,24] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  k = f32[] constant(0.4375)
  kb = f32[16,24] broadcast(k), dimensions={}
  ROOT r = f32[16,24] multiply(d, kb)
})";
  const auto path = std::filesystem::path(::testing::TempDir()) / ("crc_model_" + std::to_string(::getpid()) + ".sbin");
  SaveModel(Compile(text, "crc", LoadConfig("small")), path);
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), 0, &error);
  ASSERT_NE(archive, nullptr);
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(i), ZIP_CM_STORE, 0);
  }
  ASSERT_EQ(zip_close(archive), 0);
  EXPECT_NO_THROW(LoadModel(path));
  std::vector<std::uint8_t> bytes = systole::testing::ReadBytes(path);
  bytes[systole::testing::FindOnce(bytes, "0.4375") + 2] = '9';
  systole::testing::WriteBytes(path, bytes);
  try {
    LoadModel(path);
    ADD_FAILURE() << "a changed constant loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string() + ": model.hlo: corrupt: CRC error"));
  }
  std::filesystem::remove(path);
}

// HLO text with a large constant of zeros deflates far beyond the reader's ratio bound:
// SaveModel stores such a member so that LoadModel reads what SaveModel wrote.
TEST(Compiler, AModelThatDeflatesTooWellIsStoredAndLoads) {
  constexpr int kElements = 1 << 20;
  std::string zeros;
  for (int i = 0; i < kElements; ++i) zeros += i ? ", 0.0" : "0.0";
  const std::string text = "HloModule zeros\nENTRY e {\n  p = f32[" + std::to_string(kElements) +
                           "] parameter(0)\n  c = f32[" + std::to_string(kElements) + "] constant({" + zeros +
                           "})\n  ROOT a = f32[" + std::to_string(kElements) + "] add(p, c)\n}\n";
  const auto path = std::filesystem::path(::testing::TempDir()) / ("zeros_model_" + std::to_string(::getpid()) + ".sbin");
  SaveModel(Compile(text, "zeros", LoadConfig("small")), path);
  EXPECT_GT(std::filesystem::file_size(path), zeros.size()) << "model.hlo stored, not deflated";
  EXPECT_EQ(LoadModel(path).hlo_text, text);
  std::filesystem::remove(path);
}

TEST(Compiler, Int8ConfigurationRefusesFloatDots) {
  try {
    Compile(ReadText(CorpusFile("01_mlp_fc_relu_tf.hlo")), "01_mlp.hlo", LoadConfig("small-int8"));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("01_mlp.hlo"));
    EXPECT_THAT(error.what(), HasSubstr("dot.36"));
    EXPECT_THAT(error.what(), HasSubstr("int8 MXU"));
  }
}

// A single-row dot runs with its operands swapped only where the estimate finds that faster
// (lower_dot_conv.cpp, SwapPays; WeightBound.ClassifierWithSwappedOperandsStreamsTheWeights
// times both forms): ResNet-50's classifier on `small` and `small-int8` streams its weights as
// A rows, LOAD-bound at 32 credits; on `small-int8` with the 16 LOAD credits it had before, its
// 16-byte weight rows make a tile per output row cheaper and it stays as written. Either way
// the results are exact (int8) or bit-identical to the other form.
TEST(Compiler, SingleRowDotSwapsItsOperandsWhereTheEstimateSaysItPays) {
  const auto classifier = [](const std::string& in, const std::string& out, int n = 1000) {
    return fmt::format(R"(HloModule classifier
ENTRY e {{
  x = {0}[1,2048] parameter(0)
  w = {0}[2048,{2}] parameter(1)
  ROOT d = {1}[1,{2}] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}})", in, out, n);
  };
  Config sixteen_credits = LoadConfig("small-int8");
  sixteen_credits.load_credits = 16;
  for (const auto& [config_name, config, text, swapped] :
       {std::tuple{"small", LoadConfig("small"), classifier("bf16", "f32"), true},
        std::tuple{"small-int8", LoadConfig("small-int8"), classifier("s8", "s32"), true},
        // With the ring of step slots (PlanRingBuffers) the swapped 2048 x 1000 wins here too
        // (~237 873 cycles); 64 outputs (4 N tiles as written, ~24 538 cycles) do not.
        std::tuple{"small-int8, 16 LOAD credits", sixteen_credits, classifier("s8", "s32", 64), false}}) {
    const CompiledModel model = Compile(text, "classifier.hlo", config);
    const Step* dot = FindStep(model, "d");
    ASSERT_NE(dot, nullptr);
    ASSERT_EQ(dot->kind, Step::Kind::kDevice) << config_name;
    EXPECT_EQ(dot->device->kernel.find("swapped") != std::string::npos, swapped)
        << config_name << ": " << dot->device->kernel << ", ~" << dot->device->estimate.cycles << " cycles";
    const std::vector<hlo::Literal> inputs = hlo::RandomInputs(*model.module, 5);
    Device device = Device::Open("ref", config);
    const RunResult run = Execute(model, device, inputs);
    const hlo::Literal expected = hlo::Interpreter(*model.module).Run(inputs);
    if (config.dtype == DType::kInt8) {
      EXPECT_EQ(testing::FirstBitDifference(run.result, expected), "") << config_name;
    } else {
      EXPECT_LT(testing::RelativeError(run.result, expected), 1.0 / 64) << "bf16 operands, fp32 accumulation";
    }
  }
}

// The rtl-vs-ref check must see what a tolerance of 0 would not: the sign of zero, a NaN
// against a number, and which tuple element differs.
TEST(TestUtil, FirstBitDifferenceSeesSignOfZeroNanAndTupleIndex) {
  hlo::Literal a(hlo::Shape(hlo::ElementType::kF32, {2}));
  hlo::Literal b = a;
  EXPECT_EQ(testing::FirstBitDifference(a, b), "");
  b.values[1] = -0.0;
  EXPECT_EQ(testing::RelativeError(a, b), 0.0);
  EXPECT_THAT(testing::FirstBitDifference(a, b), HasSubstr("output[1]"));
  b.values[1] = std::nan("");
  EXPECT_THAT(testing::FirstBitDifference(a, b), HasSubstr("output[1]"));
  hlo::Literal ta, tb;
  ta.elements = {a, a};
  tb.elements = {a, b};
  ta.shape = tb.shape = hlo::Shape::Tuple({a.shape, a.shape});
  EXPECT_THAT(testing::FirstBitDifference(ta, tb), HasSubstr("output.1[1]"));
}

}  // namespace
}  // namespace systole::compiler
