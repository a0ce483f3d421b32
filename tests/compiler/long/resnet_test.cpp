// ResNet-50 (the corpus's 06_resnet50_inference_f32.hlo) end to end: compiled for small, run on
// the golden model (and on the Verilated RTL when SYSTOLE_RESNET_RTL is set: minutes) and
// compared with the interpreter. Labelled `long`: the interpreter alone takes a while.
#include <gmock/gmock.h>

#include <cstdlib>
#include <random>

#include "compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::CompileRunCompare;
using testing::CorpusFile;
using testing::ReadText;

// hlo::RandomInputs draws every parameter from [-1, 1): batch-norm variances go negative
// (rsqrt -> NaN) and 50 layers of unscaled weights overflow. These inputs are what a trained
// network looks like to the numerics: weights (rank >= 2) scaled by sqrt(3 / fan-in), so
// activations keep their size; per-channel vectors (scale, shift, mean, variance) in [0.5, 1.5).
std::vector<hlo::Literal> NetworkInputs(const hlo::Module& module, std::uint64_t seed) {
  std::vector<hlo::Literal> inputs = hlo::RandomInputs(module, seed);
  for (hlo::Literal& input : inputs) {
    const auto& dims = input.shape.dims;
    if (dims.size() == 1) {
      for (double& v : input.values) v = 1.0 + 0.5 * v;
    } else if (dims.size() >= 2 && input.shape.Elements() != 224 * 224 * 3) {
      const double fan_in = double(input.shape.Elements()) / double(dims.back());
      for (double& v : input.values) v *= std::sqrt(3.0 / fan_in);
    }
    hlo::RoundAll(input.shape.type, input.values);
  }
  return inputs;
}

TEST(ResNet50, RunsEndToEndAndMatchesTheInterpreter) {
  const std::string file = "06_resnet50_inference_f32.hlo";
  const auto module = PrepareModule(ReadText(CorpusFile(file)), file);
  const auto inputs = NetworkInputs(*module, 1);
  const char* rtl = std::getenv("SYSTOLE_RESNET_RTL");
  const auto result = CompileRunCompare(CorpusFile(file), "small", rtl ? "rtl" : "ref", inputs);
  EXPECT_EQ(result.run.stats.device_steps, 54u) << "53 convolutions and the classifier";
  EXPECT_LE(result.error, 1.0 / 16);
  const double utilization = double(result.run.stats.macs) / (double(result.run.stats.cycles) * 256.0);
  std::printf("ResNet-50 on %s: %llu cycles, MXU utilization %.1f%%, error %.4f, host %.1fs, device %.1fs\n",
              rtl ? "rtl" : "ref", static_cast<unsigned long long>(result.run.stats.cycles), 100 * utilization,
              result.error, result.run.stats.host_seconds, result.run.stats.device_seconds);
}

}  // namespace
}  // namespace systole::compiler
