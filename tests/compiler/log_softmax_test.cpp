// jax.nn.log_softmax on the vector unit: the row max (REDUCE), the subtraction, exp, the row sums
// (REDUCE), their log (VECTOR math=log) and the second subtraction — nothing computed on the
// host, in bf16 and in f32 at DEFAULT precision (tests/hlo/data/jax_dumps.py writes the programs
// and JAX's outputs for their inputs).
#include <gmock/gmock.h>

#include <cstdio>

#include "tests/compiler/compiler_test_util.hpp"
#include "tests/hlo/jax_fixture.hpp"

namespace systole::compiler {
namespace {

TEST(LogSoftmax, ComputesNothingOnTheHost) {
  for (const std::string name : {"jax_log_softmax_bf16", "jax_log_softmax_f32"}) {
    SCOPED_TRACE(name);
    const auto path = hlo::testing::kJaxData / (name + ".hlo");
    const auto module = PrepareModule(testing::ReadText(path), name);
    const auto [inputs, jax] = hlo::testing::FirstJaxRun(*module, name);
    const auto result = testing::CompileRunCompare(path, "small", "ref", inputs);
    EXPECT_EQ(result.model.HostStepCount(HostWork::kCompute), 0u);
    bool log_on_device = false;
    for (const Step& step : result.model.steps) {
      if (step.device && step.device->kernel.starts_with("vector log")) log_on_device = true;
    }
    EXPECT_TRUE(log_on_device);
    hlo::Literal jax_output = result.run.result;
    jax_output.values = jax.values;
    const double error_vs_jax = testing::RelativeError(result.run.result, jax_output);
    std::printf("%s on ref: %zu device steps, error %.2e vs the interpreter, %.2e vs JAX\n", name.c_str(),
                result.model.DeviceStepCount(), result.error, error_vs_jax);
    EXPECT_LE(result.error, 1.0 / 64);
    EXPECT_LE(error_vs_jax, 1.0 / 64);
  }
}

}  // namespace
}  // namespace systole::compiler
