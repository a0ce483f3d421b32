// Several training steps in one program: examples/training/mlp_sgd_loop.hlo (8 SGD steps of the
// MLP in a lax.fori_loop over stacked batches) and cnn_sgd_scan.hlo (8 steps of the CNN in a
// lax.scan), state donated. The loop's body is cut into steps like a program of its own, so
// every dot and convolution of every iteration runs on the MXU, its programs loaded once; on
// `ref` the losses and state follow JAX's run of the same program on the CPU within the
// training tests' tolerances and equal, bit for bit, running the single step (<model>_step.hlo)
// once per batch through Execute. docs/TRAINING.md, "Several steps in one program".
#include <gmock/gmock.h>

#include <iostream>

#include "tests/training/training_test_util.hpp"

namespace systole::runtime {
namespace {

using testing::CompileFixture;
using testing::FirstBatches;
using testing::LoadEveryStep;
using testing::LoadState;
using testing::LoopArguments;

struct LoopCase {
  const char* model;  // the single step's fixtures: <model>_step.hlo, <model>_init.npz
  const char* loop;   // <loop>.hlo and JAX's run of it, <loop>_jax.npz
  std::size_t steps;  // the batches the loop takes (make_fixtures.py's LOOP_STEPS, SCAN_STEPS)
  std::size_t dots_and_convolutions;  // of one step (TrainingStep/EveryDot)
  std::size_t updates;                // update steps of the body with the state in device memory
};
void PrintTo(const LoopCase& c, std::ostream* os) { *os << c.loop; }
class InOneProgram : public ::testing::TestWithParam<LoopCase> {};

TEST_P(InOneProgram, EveryDotOfTheBodyRunsOnTheMxu) {
  const LoopCase& c = GetParam();
  const auto loop = CompileFixture(std::string(c.loop) + ".hlo");
  ASSERT_TRUE(loop->HasControlSteps());
  std::size_t dots = 0, on_device = 0;
  const std::vector<const compiler::DeviceStep*> device_steps = loop->DeviceSteps();
  for (const auto& computation : loop->module->computations) {
    for (const auto& instruction : computation->instructions) {
      if (instruction->opcode != hlo::Opcode::kDot && instruction->opcode != hlo::Opcode::kConvolution) continue;
      ++dots;
      for (const compiler::DeviceStep* step : device_steps) {
        on_device += std::count(step->covers.begin(), step->covers.end(), instruction->name) > 0 ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(dots, c.dots_and_convolutions);
  EXPECT_EQ(on_device, dots);
}

TEST_P(InOneProgram, FollowsJaxAndTheSingleStepBitForBit) {
  const LoopCase& c = GetParam();
  const auto step = CompileFixture(std::string(c.model) + "_step.hlo");
  const auto loop = CompileFixture(std::string(c.loop) + ".hlo");
  const std::vector<std::vector<hlo::Literal>> batches = FirstBatches(*step, c.steps);

  // The single step, once per batch (each Execute loads its programs).
  Device plain = Device::Open("ref", LoadConfig("small"));
  std::vector<hlo::Literal> expected_state = LoadState(c.model);
  RunStats one_step;
  const std::vector<double> expected_losses = LoadEveryStep(*step, plain, expected_state, batches, one_step);

  // The loop, its programs resident: loaded by the first iteration only.
  Device device = Device::Open("ref", LoadConfig("small"));
  ResidentPrograms resident(*loop, device);
  const RunResult run = Execute(*loop, device, LoopArguments(*loop, LoadState(c.model), batches), {}, &resident);
  EXPECT_EQ(run.stats.device_steps, c.steps * c.dots_and_convolutions);
  EXPECT_EQ(run.stats.program_bytes, one_step.program_bytes);
  EXPECT_EQ(run.stats.operand_bytes, c.steps * one_step.operand_bytes);

  // Its outputs: the state, then the losses [steps].
  const std::size_t n = expected_state.size();
  ASSERT_EQ(run.result.elements.size(), n + 1);
  const std::vector<double>& losses = run.result.elements[n].values;
  EXPECT_EQ(losses, expected_losses);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(run.result.elements[i].values, expected_state[i].values) << "state " << i;

  // JAX's run of the same loop on the CPU: arr_0 the losses, then the state.
  const std::vector<npy::Array> jax = npy::ReadNpz(testing::Fixture(std::string(c.loop) + "_jax.npz"));
  ASSERT_EQ(jax.size(), 1 + n);
  ASSERT_EQ(jax[0].values.size(), losses.size());
  for (std::size_t s = 0; s < losses.size(); ++s) {
    EXPECT_NEAR(losses[s], jax[0].values[s], testing::kLossTolerance * jax[0].values[s]) << "step " << s + 1;
  }
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double error = testing::RelativeError(run.result.elements[i].values, jax[i + 1].values);
    EXPECT_LE(error, testing::StateTolerance(c.model)) << "state " << i;
    worst = std::max(worst, error);
  }
  std::cout << c.loop << ": " << c.steps << " steps, " << run.stats.device_steps << " device steps, " << run.stats.cycles
            << " cycles; state within " << worst << " of JAX's\n";
}

// With the state in device memory the body's updates run on the device every iteration and the
// state stays there between them (docs/TRAINING.md, "State in device memory"): the loop's
// outputs, losses and every state value, equal the host update's bit for bit.
TEST_P(InOneProgram, WithItsStateInDeviceMemoryIsBitIdenticalToTheHostUpdate) {
  const LoopCase& c = GetParam();
  const auto step = CompileFixture(std::string(c.model) + "_step.hlo");
  const auto host = CompileFixture(std::string(c.loop) + ".hlo");
  const auto resident = CompileFixture(std::string(c.loop) + ".hlo", "small", true);
  std::size_t updates = 0;
  for (const compiler::DeviceStep* s : resident->DeviceSteps()) updates += s->resident_outputs.empty() ? 0 : 1;
  EXPECT_EQ(updates, c.updates);
  const std::vector<hlo::Literal> arguments = LoopArguments(*host, LoadState(c.model), FirstBatches(*step, c.steps));
  Device a = Device::Open("ref", LoadConfig("small")), b = Device::Open("ref", LoadConfig("small"));
  const RunResult expected = Execute(*host, a, arguments);
  const RunResult run = Execute(*resident, b, arguments);  // the state goes down first and comes back after
  ASSERT_EQ(run.result.elements.size(), expected.result.elements.size());
  for (std::size_t i = 0; i < run.result.elements.size(); ++i) {
    EXPECT_EQ(run.result.elements[i].values, expected.result.elements[i].values) << "output " << i;
  }
  const auto bytes = [](const RunStats& s) { return s.operand_bytes + s.result_bytes; };
  // The MLP's iterations no longer move its weights; the CNN's save less than its state costs to
  // write and read back once in a run of 8 (its convolutions' gradients go down every iteration).
  if (std::string(c.model) == "mlp_sgd") EXPECT_LT(bytes(run.stats), bytes(expected.stats));
  std::cout << c.loop << ", " << c.steps << " steps in one run: " << bytes(run.stats) << " operand and result bytes with "
            << "the state in device memory (written once and read back once), " << bytes(expected.stats)
            << " with the host's update; " << run.stats.cycles << " and " << expected.stats.cycles << " cycles\n";
}

INSTANTIATE_TEST_SUITE_P(Training, InOneProgram,
                         ::testing::Values(LoopCase{"mlp_sgd", "mlp_sgd_loop", 8, 5, 5},
                                           LoopCase{"cnn_sgd", "cnn_sgd_scan", 8, 8, 8}),
                         [](const ::testing::TestParamInfo<LoopCase>& param) { return std::string(param.param.loop); });

}  // namespace
}  // namespace systole::runtime
