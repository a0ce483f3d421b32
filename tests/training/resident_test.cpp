// A training step keeps its device programs loaded between steps (runtime::ResidentPrograms):
// after the first step, the bytes that cross the link are exactly the device steps' operands
// and results — counted on a link wrapped around the golden model's — and the losses and state
// are bit-identical to loading every program for every step (plain Execute, the path before).
// docs/TRAINING.md, "Where the state lives".
#include <gmock/gmock.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <span>

#include "tests/training/training_test_util.hpp"

namespace systole::runtime {
namespace {

using testing::CompileFixture;
using testing::CountingLink;
using testing::LinkBytes;
using testing::FirstBatches;
using testing::LoadEveryStep;
using testing::LoadDataset;
using testing::LoadState;

TEST(ResidentPrograms, AfterTheFirstStepOnlyOperandsAndResultsCrossTheLink) {
  const auto step = CompileFixture("mlp_sgd_step.hlo");
  const auto batches = FirstBatches(*step, 4);
  const Config config = LoadConfig("small");
  LinkBytes bytes;
  Device device(std::make_unique<CountingLink>(config, bytes));
  TrainingSession session(step, device, LoadState("mlp_sgd"));
  std::uint64_t first_operands = 0, first_programs = 0;
  for (std::size_t s = 0; s < batches.size(); ++s) {
    const LinkBytes before = bytes;
    const StepResult result = session.Step(batches[s]);
    const std::uint64_t written = bytes.written - before.written, read = bytes.read - before.read;
    SCOPED_TRACE(::testing::Message() << "step " << s + 1);
    EXPECT_EQ(written, result.stats.program_bytes + result.stats.operand_bytes);  // the stats are the link's
    EXPECT_EQ(read, result.stats.result_bytes);
    if (s == 0) {
      first_programs = result.stats.program_bytes;
      first_operands = result.stats.operand_bytes;
      EXPECT_GT(first_programs, 0u);
    } else {
      EXPECT_EQ(result.stats.program_bytes, 0u);  // no instruction or constant is sent again
      EXPECT_EQ(result.stats.operand_bytes, first_operands);
    }
  }

  // The path before: every step loads its programs again.
  LinkBytes plain_bytes;
  Device plain(std::make_unique<CountingLink>(config, plain_bytes));
  std::vector<hlo::Literal> state = LoadState("mlp_sgd");
  RunStats last;
  LoadEveryStep(*step, plain, state, {batches[0]}, last);
  const LinkBytes before = plain_bytes;
  LoadEveryStep(*step, plain, state, {batches[1]}, last);
  EXPECT_EQ(plain_bytes.written - before.written, first_programs + first_operands);
  std::cout << "mlp_sgd_step.hlo on ref, bytes written per step: " << plain_bytes.written - before.written
            << " loading every program (" << first_programs << " of programs), " << first_operands
            << " with resident programs; read per step: " << plain_bytes.read - before.read << "\n";
}

class Models : public ::testing::TestWithParam<std::string> {};

TEST_P(Models, ResidentProgramsAreBitIdenticalToLoadingEveryStep) {
  const std::string model = GetParam();
  const auto step = CompileFixture(model + "_step.hlo");
  const auto batches = FirstBatches(*step, 5);
  const Config config = LoadConfig("small");
  Device plain = Device::Open("ref", config);
  std::vector<hlo::Literal> state = LoadState(model);
  RunStats last;
  const std::vector<double> expected = LoadEveryStep(*step, plain, state, batches, last);

  Device device = Device::Open("ref", config);
  TrainingSession session(step, device, LoadState(model));
  for (std::size_t s = 0; s < batches.size(); ++s) {
    EXPECT_EQ(session.Step(batches[s]).metrics.at(0), expected[s]) << "loss of step " << s + 1;
  }
  ASSERT_EQ(session.state().size(), state.size());
  for (std::size_t i = 0; i < state.size(); ++i) EXPECT_EQ(session.state()[i].values, state[i].values) << "state " << i;
}

INSTANTIATE_TEST_SUITE_P(Mlp, Models, ::testing::Values("mlp_sgd", "mlp_adam"));

TEST(ResidentPrograms, ExecuteRefusesThoseOfAnotherModel) {
  const auto sgd = CompileFixture("mlp_sgd_step.hlo");
  const auto adam = CompileFixture("mlp_adam_step.hlo");
  Device device = Device::Open("ref", LoadConfig("small"));
  ResidentPrograms resident(*sgd, device);
  EXPECT_THAT([&] { Execute(*adam, device, {}, {}, &resident); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::AllOf(
                  ::testing::HasSubstr("mlp_adam_step.hlo"), ::testing::HasSubstr("mlp_sgd_step.hlo"))));
}

}  // namespace
}  // namespace systole::runtime
