// Convolutions with input (lhs) dilation — a strided convolution's input gradient — run on the
// MXU after a host pad that inserts the zeros (toolchain/compiler/explicit_dilation.cpp;
// docs/COMPILER.md, "Strided convolutions' input gradients"). Values are in {-1, 0, 1}, so every
// product and sum is exact in bf16 and f32 and the golden model must give, bit for bit, what the
// interpreter gives for the original convolution, which skips the inserted zeros.
#include <gmock/gmock.h>

#include <unistd.h>

#include "tests/compiler/compiler_test_util.hpp"
#include "toolchain/compiler/model_file.hpp"

namespace systole::compiler {
namespace {

using testing::FirstBitDifference;

// 5x6 pixels dilated 2x3 (9x16), padded 2_1 both ways (12x19), a 3x3 window at stride 2x1:
// 5x17 outputs. Optionally a second, undilated convolution of the same input.
std::string DilatedConvText(const std::string& extra = "") {
  return R"(HloModule dilated
ENTRY e {
  x = f32[2,5,6,4] parameter(0)
  w = f32[3,3,4,8] parameter(1)
  c = f32[2,5,17,8] convolution(x, w), window={size=3x3 stride=2x1 pad=2_1x2_1 lhs_dilate=2x3}, dim_labels=b01f_01io->b01f
)" + extra + "}\n";
}

std::vector<hlo::Literal> ValuesInMinusOneToOne(const hlo::Module& module) {
  std::vector<hlo::Literal> inputs;
  for (const hlo::Instruction* parameter : module.entry->Parameters()) inputs.emplace_back(parameter->shape);
  for (std::size_t p = 0; p < inputs.size(); ++p) {
    std::vector<double>& values = inputs[p].values;
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = double((i * (p + 3) + i / 7) % 3) - 1.0;
  }
  return inputs;
}

// Runs `model` on `ref` against the interpreter of the source as written (dilation included).
void ExpectTheInterpretersBits(const CompiledModel& model, const std::string& text) {
  const auto original = PrepareModule(text, "dilated.hlo");
  const std::vector<hlo::Literal> inputs = ValuesInMinusOneToOne(*original);
  Device device = Device::Open("ref", LoadConfig("small"));
  const RunResult run = Execute(model, device, inputs);
  EXPECT_EQ(FirstBitDifference(run.result, hlo::Interpreter(*original).Run(inputs)), "");
}

const Step* TopLevelStepOf(const CompiledModel& model, const std::string& instruction) {
  for (const Step& step : model.steps) {
    if (step.instruction == instruction) return &step;
  }
  return nullptr;
}

TEST(InputDilation, TheConvolutionRunsOnTheMxuAfterAHostPad) {
  const std::string text = DilatedConvText("  ROOT r = f32[2,5,17,8] negate(c)\n");
  const CompiledModel model = Compile(text, "dilated.hlo", LoadConfig("small"));
  const Step* conv = TopLevelStepOf(model, "c");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->kind, Step::Kind::kDevice);
  const Step* pad = TopLevelStepOf(model, "c.dilated_input");
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(pad->kind, Step::Kind::kHost);
  EXPECT_EQ(pad->work, HostWork::kDataMovement);
  // The pad is the dilation: interior lhs_dilation - 1, nothing at the edges.
  const hlo::Instruction* padded = model.module->entry->Find("c.dilated_input");
  ASSERT_NE(padded, nullptr);
  EXPECT_EQ(padded->shape.dims, (std::vector<std::int64_t>{2, 9, 16, 4}));
  EXPECT_EQ(padded->padding.at(1).interior, 1);
  EXPECT_EQ(padded->padding.at(2).interior, 2);
  EXPECT_EQ(padded->padding.at(1).low + padded->padding.at(1).high, 0);
  ExpectTheInterpretersBits(model, text);
}

TEST(InputDilation, AnUndilatedConvolutionIsLeftAsItIs) {
  const std::string text = DilatedConvText(
      "  u = f32[2,5,6,8] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
      "  ROOT t = (f32[2,5,17,8], f32[2,5,6,8]) tuple(c, u)\n");
  const CompiledModel model = Compile(text, "dilated.hlo", LoadConfig("small"));
  std::size_t pads = 0;
  for (const Step& step : model.steps) pads += model.module->entry->Find(step.instruction)->opcode == hlo::Opcode::kPad;
  EXPECT_EQ(pads, 1u);
  ASSERT_NE(TopLevelStepOf(model, "u"), nullptr);
  EXPECT_EQ(TopLevelStepOf(model, "u")->kind, Step::Kind::kDevice);
  ExpectTheInterpretersBits(model, text);
}

TEST(InputDilation, AModelFileRebuildsTheSamePad) {
  const std::string text = DilatedConvText("  ROOT r = f32[2,5,17,8] negate(c)\n");
  const CompiledModel model = Compile(text, "dilated.hlo", LoadConfig("small"));
  const auto path = std::filesystem::path(::testing::TempDir()) / ("dilated_" + std::to_string(::getpid()) + ".sbin");
  SaveModel(model, path);
  const CompiledModel loaded = LoadModel(path);
  std::filesystem::remove(path);
  ASSERT_NE(TopLevelStepOf(loaded, "c"), nullptr);
  EXPECT_EQ(TopLevelStepOf(loaded, "c")->kind, Step::Kind::kDevice);
  ExpectTheInterpretersBits(loaded, text);
}

TEST(InputDilation, WindowReversalStillRunsOnTheHost) {
  // The rewrite is for what the MXU takes but for the dilation: a reversed window stays whole,
  // and the host step says why (the first reason MxuRejection finds).
  const std::string text = R"(HloModule reversed
ENTRY e {
  x = f32[1,3,3,4] parameter(0)
  w = f32[2,2,4,4] parameter(1)
  ROOT c = f32[1,6,6,4] convolution(x, w), window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f
}
)";
  const CompiledModel model = Compile(text, "reversed.hlo", LoadConfig("small"));
  ASSERT_EQ(model.steps.size(), 1u);
  EXPECT_EQ(model.steps[0].kind, Step::Kind::kHost);
  EXPECT_THAT(model.steps[0].reason, ::testing::HasSubstr("input (lhs) dilation"));
  EXPECT_EQ(model.module->entry->Find("c.dilated_input"), nullptr);
}

}  // namespace
}  // namespace systole::compiler
