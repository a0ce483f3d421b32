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

#include "systole/link.hpp"
#include "tests/training/training_test_util.hpp"

namespace systole::runtime {
namespace {

using testing::CompileFixture;
using testing::FirstBatches;
using testing::LoadEveryStep;
using testing::LoadDataset;
using testing::LoadState;

struct LinkBytes {
  std::uint64_t written = 0;
  std::uint64_t read = 0;
};

// The golden model's link, counting the device-memory bytes written and read through it.
class CountingLink : public Link {
 public:
  CountingLink(const Config& config, LinkBytes& bytes) : inner_(OpenRefLink(config)), bytes_(&bytes) {}
  std::string_view Uri() const override { return inner_->Uri(); }
  std::uint32_t ReadRegister(std::uint32_t offset) override { return inner_->ReadRegister(offset); }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override { inner_->WriteRegister(offset, value); }
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    bytes_->written += bytes.size();
    inner_->WriteMemory(address, bytes);
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    bytes_->read += bytes.size();
    inner_->ReadMemory(address, bytes);
  }
  bool WaitForInterrupt(std::chrono::milliseconds timeout) override { return inner_->WaitForInterrupt(timeout); }
  std::uint64_t Allocate(std::uint64_t bytes, std::uint64_t alignment, std::optional<std::uint64_t> at) override {
    return inner_->Allocate(bytes, alignment, at);
  }
  void Free(std::uint64_t address) override { inner_->Free(address); }

 private:
  std::unique_ptr<Link> inner_;
  LinkBytes* bytes_;
};

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
