// ResNet-50 (the corpus's 06_resnet50_inference_f32.hlo) end to end: compiled for small, run on
// the golden model (and on the Verilated RTL when SYSTOLE_RESNET_RTL is set: minutes) and
// compared with the interpreter; and on the Verilated RTL with its steps side by side.
// Labelled `long`: the interpreter alone takes a while.
#include <gmock/gmock.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "runtime/parallel_steps.hpp"
#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::CompileRunCompare;
using testing::CorpusFile;
using testing::ReadText;

// The predictions (output 0, after the softmax) against the f32 interpreter: bf16 operands
// through 53 layers, with batch norm folded into the weights before they are rounded, and the
// head (pool, bias, softmax) on the vector unit with bf16 operands and results.
TEST(ResNet50, RunsEndToEndAndMatchesTheInterpreter) {
  const std::string file = "06_resnet50_inference_f32.hlo";
  const auto module = PrepareModule(ReadText(CorpusFile(file)), file);
  const auto inputs = NetworkInputs(*module, 1);
  const char* rtl = std::getenv("SYSTOLE_RESNET_RTL");
  const auto result = CompileRunCompare(CorpusFile(file), "small", rtl ? "rtl" : "ref", inputs);
  EXPECT_EQ(result.run.stats.device_steps, 58u)
      << "53 convolutions (16 with the residual add and its ReLU in the drain), the classifier, the stem's max "
         "pool, the global average pool (REDUCE across rows with scale 1/49), the classifier's bias add and the "
         "softmax as one fused step (docs/COMPILER.md, \"f32 programs on the vector unit\")";
  // Nothing computes on the host: what stays there is parameter arithmetic (batch norm's
  // folded vectors), data movement and values.
  EXPECT_EQ(result.model.HostStepCount(HostWork::kCompute), 0u);
  const hlo::Literal expected = hlo::Interpreter(*result.model.module).Run(inputs);
  const double error = testing::RelativeError(result.run.result.elements.at(0), expected.elements.at(0));
  EXPECT_LE(error, 1.0 / 8);
  const double utilization = double(result.run.stats.macs) / (double(result.run.stats.cycles) * 256.0);
  std::printf("ResNet-50 on %s: %llu cycles, MXU utilization %.1f%%, predictions error %.4f, host %.1fs, device %.1fs\n",
              rtl ? "rtl" : "ref", static_cast<unsigned long long>(result.run.stats.cycles), 100 * utilization,
              error, result.run.stats.host_seconds, result.run.stats.device_seconds);
}

// ResNet-50 on the Verilated `small` core, every device step side by side on as many devices as
// the machine has cores (runtime/parallel_steps.hpp, `systole run --jobs`): each of the 58 steps
// bit for bit the golden model's output and functional counters (ExecuteParallel throws
// otherwise), so the predictions are the RTL's. 5.5 minutes on two cores (docs/COMPILER.md).
TEST(ResNet50, EveryStepOnTheRtlMatchesTheGoldenModel) {
  const Config config = LoadConfig("small");
  try {
    Device::Open("rtl", config);
  } catch (const std::exception& error) {
    GTEST_SKIP() << "no Verilated small core in this build: " << error.what();
  }
  const std::string file = "06_resnet50_inference_f32.hlo";
  const CompiledModel model = Compile(ReadText(CorpusFile(file)), file, config);
  const auto inputs = NetworkInputs(*model.module, 1);
  runtime::ParallelOptions options;
  options.uri = "rtl";
  options.jobs = std::max(2u, std::thread::hardware_concurrency());
  options.progress = [](const std::string& message) { std::fprintf(stderr, "%s\n", message.c_str()); };
  const RunResult run = runtime::ExecuteParallel(model, config, inputs, options);
  EXPECT_EQ(run.stats.device_steps, 58u);
  const hlo::Literal expected = hlo::Interpreter(*model.module).Run(inputs);
  EXPECT_LE(testing::RelativeError(run.result.elements.at(0), expected.elements.at(0)), 1.0 / 8);
  const double utilization = double(run.stats.macs) / (double(run.stats.cycles) * 256.0);
  std::printf("ResNet-50 on rtl, %u devices side by side: %llu cycles, MXU utilization %.1f%%, %.0f s\n",
              options.jobs, static_cast<unsigned long long>(run.stats.cycles), 100 * utilization,
              run.stats.device_seconds);
}

// Unfused, the device computes exactly conv(bf16(x), bf16(w)) in fp32: against the interpreter
// with the same operand rounding only the accumulation order differs.
TEST(ResNet50, UnfusedMatchesThePrecisionMatchedInterpreterClosely) {
  const std::string file = "06_resnet50_inference_f32.hlo";
  const Config config = LoadConfig("small");
  CompileOptions options;
  options.fuse = false;
  const CompiledModel model = Compile(ReadText(CorpusFile(file)), file, config, options);
  const auto inputs = NetworkInputs(*model.module, 2);
  Device device = Device::Open("ref", config);
  const RunResult run = Execute(model, device, inputs);
  auto reference = PrepareModule(ReadText(CorpusFile(file)), file);
  testing::RoundDotOperandsToBf16(*reference);
  const hlo::Literal expected = hlo::Interpreter(*reference).Run(inputs);
  const double error = testing::RelativeError(run.result, expected);
  std::printf("unfused vs precision-matched interpreter: %.2e\n", error);
  EXPECT_LE(error, 1e-3);
}

}  // namespace
}  // namespace systole::compiler
