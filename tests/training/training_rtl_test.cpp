// Training on the Verilated RTL (`rtl`, small): the first steps of the SGD and Adam training
// steps give the golden model's losses, metrics and state bit for bit.
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

}  // namespace
}  // namespace systole::runtime
