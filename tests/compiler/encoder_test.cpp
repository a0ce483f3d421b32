// A BERT-style encoder layer written in JAX (tests/hlo/data/jax_dumps.py, `encoder_layer`):
// two-head attention with a padding mask, softmax, residual adds, two layer norms and a GELU
// feed-forward block, all bf16. Compiled for `small` it computes nothing on the host (what
// stays there moves data), and on the golden model it matches the CPU interpreter and JAX's
// own output (stored beside the HLO) within the bf16 tolerance of docs/COMPILER.md.
#include <gmock/gmock.h>

#include <cmath>
#include <cstdio>

#include "tests/compiler/compiler_test_util.hpp"
#include "toolchain/hlo/io.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::compiler {
namespace {

const std::filesystem::path kData = std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests/hlo/data";

// max |actual − expected| / max |expected|
double ErrorAgainst(const hlo::Literal& actual, const npy::Array& expected) {
  double scale = 0, worst = 0;
  for (std::size_t k = 0; k < expected.values.size(); ++k) {
    scale = std::max(scale, std::abs(expected.values[k]));
    worst = std::max(worst, std::abs(actual.values.at(k) - expected.values[k]));
  }
  return worst / scale;
}

TEST(EncoderLayer, RunsWithNoHostComputeStepAndMatchesTheInterpreterAndJax) {
  const std::string name = "jax_encoder_layer_bf16";
  const std::string text = testing::ReadText(kData / (name + ".hlo"));
  const Config config = LoadConfig("small");
  const CompiledModel model = Compile(text, name + ".hlo", config);
  EXPECT_EQ(model.HostStepCount(HostWork::kCompute), 0u);
  for (const Step& step : model.steps) {
    if (step.kind == Step::Kind::kHost) {
      EXPECT_NE(step.work, HostWork::kCompute) << step.instruction << ": " << step.reason;
    }
  }
  const std::vector<npy::Array> arrays = npy::ReadNpz(kData / (name + ".npz"));
  const std::size_t parameters = model.module->entry->Parameters().size();
  ASSERT_EQ(arrays.size(), parameters + 1);
  const std::vector<hlo::Literal> inputs =
      hlo::InputsFromArrays(*model.module, std::vector<npy::Array>(arrays.begin(), arrays.end() - 1));
  Device device = Device::Open("ref", config);
  const RunResult run = Execute(model, device, inputs);
  const hlo::Literal expected = hlo::Interpreter(*model.module).Run(inputs);
  const double vs_interpreter = testing::RelativeError(run.result, expected);
  const double vs_jax = ErrorAgainst(run.result, arrays.back());
  const double interpreter_vs_jax = ErrorAgainst(expected, arrays.back());
  std::printf("encoder layer on ref: %zu device steps, %llu cycles; error %.4e vs the interpreter, %.4e vs JAX "
              "(the interpreter itself %.4e from JAX)\n",
              model.DeviceStepCount(), static_cast<unsigned long long>(run.stats.cycles), vs_interpreter, vs_jax,
              interpreter_vs_jax);
  EXPECT_LE(vs_interpreter, 1.0 / 64);
  EXPECT_LE(vs_jax, 1.0 / 64);
}

}  // namespace
}  // namespace systole::compiler
