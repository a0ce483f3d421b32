// JAX's log-softmax and erf-form GELU on the vector unit, in bf16 and in f32 at DEFAULT precision
// (tests/hlo/data/jax_dumps.py writes the programs and JAX's outputs for their inputs):
// jax.nn.log_softmax is the row max (REDUCE), the subtraction, exp, the row sums (REDUCE), their
// log (VECTOR math=log) and the second subtraction; jax.nn.gelu(approximate=False), whose erf XLA
// expands into 60-odd instructions with compares and selects, is one VECTOR math=gelu_erf.
#include <gmock/gmock.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/compiler/compiler_test_util.hpp"
#include "tests/hlo/jax_fixture.hpp"

namespace systole::compiler {
namespace {

// Compiles and runs the fixture `name` on ref with JAX's inputs: the comparison with the
// interpreter, and the error against JAX's own output.
std::pair<testing::Comparison, double> RunFixture(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(::testing::TempDir()) / (name + "_" + std::to_string(getpid()) + ".hlo");
  std::ofstream(path) << text;
  const auto module = PrepareModule(text, name);
  const auto [inputs, jax] = hlo::testing::FirstJaxRun(*module, name);
  testing::Comparison result = testing::CompileRunCompare(path, "small", "ref", inputs);
  std::filesystem::remove(path);
  hlo::Literal jax_output = result.run.result;
  jax_output.values = jax.values;
  const double error_vs_jax = testing::RelativeError(result.run.result, jax_output);
  std::printf("%s on ref: %zu device steps, %zu host compute steps, error %.2e vs the interpreter, %.2e vs JAX\n",
              name.c_str(), result.model.DeviceStepCount(), result.model.HostStepCount(HostWork::kCompute),
              result.error, error_vs_jax);
  return {std::move(result), error_vs_jax};
}

std::string FixtureText(const std::string& name) {
  return testing::ReadText(hlo::testing::kJaxData / (name + ".hlo"));
}

bool HasKernel(const CompiledModel& model, const std::string& prefix) {
  return std::any_of(model.steps.begin(), model.steps.end(),
                     [&](const Step& step) { return step.device && step.device->kernel.starts_with(prefix); });
}

TEST(LogSoftmax, ComputesNothingOnTheHost) {
  for (const std::string name : {"jax_log_softmax_bf16", "jax_log_softmax_f32"}) {
    SCOPED_TRACE(name);
    const auto [result, error_vs_jax] = RunFixture(name, FixtureText(name));
    EXPECT_EQ(result.model.HostStepCount(HostWork::kCompute), 0u);
    EXPECT_TRUE(HasKernel(result.model, "vector log"));
    EXPECT_LE(result.error, 1.0 / 64);
    EXPECT_LE(error_vs_jax, 1.0 / 64);
  }
}

TEST(GeluErf, JaxsExpansionIsOneVectorStep) {
  for (const std::string name : {"jax_gelu_erf_bf16", "jax_gelu_erf_f32"}) {
    SCOPED_TRACE(name);
    const auto [result, error_vs_jax] = RunFixture(name, FixtureText(name));
    EXPECT_EQ(result.model.HostStepCount(HostWork::kCompute), 0u);
    EXPECT_EQ(result.model.DeviceStepCount(), 2u);  // the dot and the GELU
    EXPECT_TRUE(HasKernel(result.model, "vector gelu (erf form)"));
    EXPECT_LE(result.error, 1.0 / 64);
    EXPECT_LE(error_vs_jax, 1.0 / 64);
  }
}

// The expansion is recognised by its values: with one coefficient of its polynomial changed it
// computes no erfc, and stays on the host, where it still matches the interpreter.
TEST(GeluErf, AnExpansionThatIsNotErfcStaysOnTheHost) {
  const std::string name = "jax_gelu_erf_f32";
  std::string text = FixtureText(name);
  const std::string coefficient = "constant(1.12837911)";  // 2/sqrt(pi), erf's first term
  ASSERT_NE(text.find(coefficient), std::string::npos);
  text.replace(text.find(coefficient), coefficient.size(), "constant(1.2)");
  const auto [result, error_vs_jax] = RunFixture(name, text);
  EXPECT_FALSE(HasKernel(result.model, "vector gelu"));
  EXPECT_GT(result.model.HostStepCount(HostWork::kCompute), 10u);
  EXPECT_LE(result.error, 1.0 / 64);
  EXPECT_GT(error_vs_jax, 0.0);  // not JAX's function any more
}

}  // namespace
}  // namespace systole::compiler
