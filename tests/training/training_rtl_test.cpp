// Training on the Verilated RTL (`rtl`, small): the first steps of the SGD and Adam training
// steps give the golden model's losses, metrics and state bit for bit, and so does the MLP's
// loop of 8 SGD steps in one program (its body's dots on the device each iteration).
#include <gmock/gmock.h>

#include "tests/training/training_test_util.hpp"

namespace systole::runtime {
namespace {

class RtlSteps : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlSteps, AreBitIdenticalToTheGoldenModel) {
  const std::string model = GetParam();
  const auto step = testing::CompileFixture(model + "_step.hlo");
  const Dataset data = testing::LoadDataset(*step);
  TrainLoopOptions options;
  options.max_steps = 4;
  std::vector<TrainSummary> summaries;
  std::vector<std::vector<hlo::Literal>> states;
  for (const char* uri : {"ref", "rtl"}) {
    Device device = Device::Open(uri, LoadConfig("small"));
    DeviceTrainer trainer(step, nullptr, device, testing::LoadState(model));
    summaries.push_back(TrainLoop(trainer, data, options, false));
    states.push_back(trainer.state());
  }
  EXPECT_EQ(summaries[1].losses, summaries[0].losses);
  EXPECT_GT(summaries[1].device_cycles, 0u);
  for (std::size_t i = 0; i < states[0].size(); ++i) {
    EXPECT_EQ(states[1][i].values, states[0][i].values) << "state value " << i;
  }
  std::cout << model << ": 4 steps, " << summaries[0].device_cycles << " cycles on ref (estimate), "
            << summaries[1].device_cycles << " on rtl\n";
}

INSTANTIATE_TEST_SUITE_P(Mlp, RtlSteps, ::testing::Values("mlp_sgd", "mlp_adam"));

// The state in device memory (docs/TRAINING.md): the update steps' ACCVEC on the RTL give the
// host's f32 update bit for bit, read back from the RTL's memory.
class RtlDeviceState : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlDeviceState, TheFirstStepsAreBitIdenticalToTheHostUpdateOnTheGoldenModel) {
  const std::string model = GetParam();
  const auto host_step = testing::CompileFixture(model + "_step.hlo");
  const auto device_step = testing::CompileFixture(model + "_step.hlo", "small", true);
  const auto batches = testing::FirstBatches(*host_step, 2);
  Device ref = Device::Open("ref", LoadConfig("small"));
  Device rtl = Device::Open("rtl", LoadConfig("small"));
  TrainingSession host(host_step, ref, testing::LoadState(model));
  TrainingSession resident(device_step, rtl, testing::LoadState(model));
  // Weights and biases with their moments (the CNN: both convolutions', the dense layer's, three biases).
  ASSERT_EQ(resident.device_state_values(), model == "mlp_sgd" ? 8u : 12u);
  std::uint64_t cycles = 0;
  for (const auto& batch : batches) {
    const StepResult step = resident.Step(batch);
    EXPECT_EQ(step.metrics, host.Step(batch).metrics);
    cycles += step.stats.cycles;
  }
  for (std::size_t i = 0; i < host.state().size(); ++i) {
    EXPECT_EQ(resident.state()[i].values, host.state()[i].values) << "state value " << i;
  }
  std::cout << model << "_step.hlo with device state: 2 steps, " << cycles << " cycles on rtl\n";
}

INSTANTIATE_TEST_SUITE_P(Mlp, RtlDeviceState, ::testing::Values("mlp_sgd", "mlp_adam"));
INSTANTIATE_TEST_SUITE_P(Cnn, RtlDeviceState, ::testing::Values("pool_cnn_sgd"));

// The MLP's 8-step loop, its state on the host or (`WithTheStateInDeviceMemory`) in device
// memory, updated in the body on the device every iteration.
class RtlLoop : public ::testing::TestWithParam<bool> {};

TEST_P(RtlLoop, IterationsAreBitIdenticalToTheGoldenModel) {
  const auto loop = testing::CompileFixture("mlp_sgd_loop.hlo", "small", GetParam());
  ASSERT_EQ(loop->state_tensors.empty(), !GetParam());
  const auto step = testing::CompileFixture("mlp_sgd_step.hlo");
  const std::vector<hlo::Literal> arguments =
      testing::LoopArguments(*loop, testing::LoadState("mlp_sgd"), testing::FirstBatches(*step, 8));
  std::vector<RunResult> runs;
  for (const char* uri : {"ref", "rtl"}) {
    Device device = Device::Open(uri, LoadConfig("small"));
    if (GetParam()) {
      runs.push_back(Execute(*loop, device, arguments));  // the state goes down first and comes back after
    } else {
      ResidentPrograms resident(*loop, device);
      runs.push_back(Execute(*loop, device, arguments, {}, &resident));
    }
  }
  ASSERT_EQ(runs[1].result.elements.size(), runs[0].result.elements.size());
  for (std::size_t i = 0; i < runs[0].result.elements.size(); ++i) {
    EXPECT_EQ(runs[1].result.elements[i].values, runs[0].result.elements[i].values) << "output " << i;
  }
  // 5 device steps an iteration; with the state in device memory 2 gradient dots become 3 updates.
  EXPECT_EQ(runs[1].stats.device_steps, GetParam() ? 64u : 40u);
  std::cout << "mlp_sgd_loop" << (GetParam() ? " with the state in device memory" : "") << ": 8 iterations, "
            << runs[0].stats.cycles << " cycles on ref (estimate), " << runs[1].stats.cycles << " on rtl\n";
}

INSTANTIATE_TEST_SUITE_P(Mlp, RtlLoop, ::testing::Bool(), [](const ::testing::TestParamInfo<bool>& info) {
  return std::string(info.param ? "WithTheStateInDeviceMemory" : "WithTheStateOnTheHost");
});

}  // namespace
}  // namespace systole::runtime
