// Several training steps per launch through the training loop: examples/training/
// mlp_sgd_loop.hlo (8 SGD steps of the MLP in a lax.fori_loop over stacked batches [8, 32, …],
// the losses an f32[8]) recognised by ReadStepSignature and driven by TrainLoop, against the
// single step mlp_sgd_step.hlo (same model, initial state and batch order: make_fixtures.py
// builds the loop from sgd_step and init_params, and InOneProgram checks them bit for bit).
// docs/TRAINING.md, "Several steps per launch".
#include <gmock/gmock.h>

#include <iostream>

#include "tests/training/training_test_util.hpp"
#include "toolchain/hlo/parser.hpp"

namespace systole::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// A donated weight w, batch parameters xs and ys, and the metrics: shapes as HLO text.
hlo::Module TinyStep(const std::string& xs, const std::string& ys, const std::vector<std::string>& metrics) {
  std::string text = "HloModule tiny, input_output_alias={ {0}: (0, {}, may-alias) }\n\nENTRY main {\n"
                     "  w = f32[4]{0} parameter(0)\n  xs = " + xs + " parameter(1)\n  ys = " + ys + " parameter(2)\n"
                     "  zero = f32[] constant(0)\n";
  std::string outputs = "w", shapes = "f32[4]{0}";
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    text += "  m" + std::to_string(m) + " = " + metrics[m] + " broadcast(zero), dimensions={}\n";
    outputs += ", m" + std::to_string(m);
    shapes += ", " + metrics[m];
  }
  return hlo::ParseModule(text + "  ROOT out = (" + shapes + ") tuple(" + outputs + ")\n}\n", "tiny.hlo");
}

TEST(StepsPerLaunch, AreTheLengthOfTheMetrics) {
  const auto loop = testing::CompileFixture("mlp_sgd_loop.hlo");
  const StepSignature s = ReadStepSignature(*loop->module, loop->source_name);
  EXPECT_TRUE(s.stacked);
  EXPECT_EQ(s.steps_per_launch, 8);
  EXPECT_EQ(s.batch_size, 32);
  EXPECT_THAT(s.batch_parameters, ::testing::ElementsAre(8, 9));
  EXPECT_THAT(s.metric_outputs, ::testing::ElementsAre(8));  // the losses
  const auto step = testing::CompileFixture("mlp_sgd_step.hlo");
  const StepSignature one = ReadStepSignature(*step->module, step->source_name);
  EXPECT_FALSE(one.stacked);
  EXPECT_EQ(one.steps_per_launch, 1);
  // A loop of one step is stacked all the same: its batches are [1, batch, …].
  const StepSignature single = ReadStepSignature(TinyStep("f32[1,2,4]", "f32[1,2,3]", {"f32[1]"}), "tiny.hlo");
  EXPECT_TRUE(single.stacked);
  EXPECT_EQ(single.batch_size, 2);
}

TEST(StepsPerLaunch, AProgramThatAlmostMatchesIsRefusedNamingTheParameterOrOutput) {
  const auto refused = [](const std::string& xs, const std::string& ys, const std::vector<std::string>& metrics,
                          const std::string& message) {
    EXPECT_THAT([&] { ReadStepSignature(TinyStep(xs, ys, metrics), "tiny.hlo"); },
                ThrowsMessage<std::runtime_error>(HasSubstr(message)));
  };
  refused("f32[8,2,4]", "f32[4,2,3]", {"f32[8]"},
          "tiny.hlo: batch parameter 2 ('ys') is f32[4,2,3], but output 1 is f32[8], so the program runs 8 steps per "
          "launch and takes every batch stacked, [8, batch, …]");
  refused("f32[8,2,4]", "f32[8]", {"f32[8]"}, "batch parameter 2 ('ys') is f32[8], but output 1 is f32[8]");
  refused("f32[8,2,4]", "f32[8,3,3]", {"f32[8]"}, "batch parameter 2 ('ys') is f32[8,3,3] with 3 rows a step, the "
                                                  "first batch parameter 2");
  refused("f32[8,2,4]", "f32[8,2,3]", {"f32[8]", "f32[4]"},
          "tiny.hlo: output 2 is f32[4], but output 1 is f32[8]: the outputs that are not state are the metrics: all "
          "scalars (one step per launch) or all [k] (k steps per launch, one value per step)");
  refused("f32[8,2,4]", "f32[8,2,3]", {"f32[]", "f32[8]"}, "output 1 is f32[], but output 2 is f32[8]");
  refused("f32[8,2,4]", "f32[8,2,3]", {"f32[8,2]"}, "tiny.hlo: output 1 is f32[8,2], but the outputs that are not");
  // One step whose loss is per example (f32[32] for a batch of 32) reads as 32 steps of batches
  // [32, 64] and [32, 10]: the rows disagree, and the error says what the program more likely is.
  refused("f32[32,64]", "f32[32,10]", {"f32[32]"},
          "batch parameter 2 ('ys') is f32[32,10] with 10 rows a step, the first batch parameter 64 (read as 32 "
          "steps per launch because output 1 is f32[32]; if that output holds one value per example of a single "
          "step, not one per step, reduce it to a scalar in the program, e.g. its mean)");
}

struct TrainedRun {
  TrainSummary summary;
  std::vector<TrainProgress> epoch_ends;
  std::vector<hlo::Literal> state;
};

TrainedRun Train(const std::string& program, std::uint64_t steps, std::optional<Checkpoint> resume = std::nullopt,
                 bool device_state = false) {
  const auto model = testing::CompileFixture(program, "small", device_state);
  Device device = Device::Open("ref", LoadConfig("small"));
  DeviceTrainer trainer(model, nullptr, device, testing::LoadState("mlp_sgd"));
  TrainLoopOptions options;
  options.max_steps = steps;
  options.resume = std::move(resume);
  TrainedRun run;
  run.summary = TrainLoop(trainer, testing::LoadDataset(*model), options, false, [&](const TrainProgress& p) {
    if (p.epoch_end) run.epoch_ends.push_back(p);
  });
  run.state = trainer.state();
  return run;
}

void ExpectSameState(const std::vector<hlo::Literal>& a, const std::vector<hlo::Literal>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].values, b[i].values) << "state " << i;
}

// 6 launches of 8 = 48 steps: the launch of steps 41-48 ends epoch 1 (44 steps) and begins
// epoch 2, whose batches come from the next epoch's shuffle, as the single step's do.
TEST(StepsPerLaunch, TheLoopTrainsBitIdenticalToTheSingleStepAcrossAnEpochEnd) {
  const TrainedRun loop = Train("mlp_sgd_loop.hlo", 48);
  const TrainedRun step = Train("mlp_sgd_step.hlo", 48);
  EXPECT_EQ(loop.summary.steps, 48u);
  ASSERT_EQ(loop.summary.losses.size(), 48u);
  EXPECT_EQ(loop.summary.losses, step.summary.losses);
  ExpectSameState(loop.state, step.state);
  // Epoch 1's report comes after the launch it ended in, at that launch's step, with the mean
  // loss of its own 44 steps.
  ASSERT_EQ(loop.epoch_ends.size(), 2u);  // epoch 1, and the 4 steps of epoch 2 at the step limit
  EXPECT_EQ(loop.epoch_ends[0].epoch, 1u);
  EXPECT_EQ(loop.epoch_ends[0].step, 48u);
  EXPECT_EQ(step.epoch_ends[0].step, 44u);
  EXPECT_EQ(loop.epoch_ends[0].metrics.at(0), step.epoch_ends[0].metrics.at(0));
  EXPECT_EQ(loop.summary.epochs, 1u);
}

TEST(StepsPerLaunch, AResumedLoopIsBitIdenticalToOneThatNeverStopped) {
  const TrainedRun whole = Train("mlp_sgd_loop.hlo", 48);
  const TrainedRun first = Train("mlp_sgd_loop.hlo", 24);
  const TrainedRun rest = Train("mlp_sgd_loop.hlo", 48, Checkpoint{24, first.summary.device_cycles, first.state});
  ExpectSameState(rest.state, whole.state);
  EXPECT_EQ(rest.summary.device_cycles, whole.summary.device_cycles);
  std::vector<double> losses = first.summary.losses;
  losses.insert(losses.end(), rest.summary.losses.begin(), rest.summary.losses.end());
  EXPECT_EQ(losses, whole.summary.losses);
  // The single step's checkpoint at the end of epoch 1 (step 44) resumes into the loop too.
  const TrainedRun step44 = Train("mlp_sgd_step.hlo", 44);
  const TrainedRun from44 = Train("mlp_sgd_loop.hlo", 52, Checkpoint{44, 0, step44.state});
  const TrainedRun step52 = Train("mlp_sgd_step.hlo", 52, Checkpoint{44, 0, step44.state});
  ExpectSameState(from44.state, step52.state);
}

// With the state in device memory (systole train's default), the loop's body updates the
// weights, biases and momenta on the device every iteration (docs/TRAINING.md, "State in device
// memory"): the same losses and state as the loop updating them on the host, and as the single
// step with its state in device memory, with fewer bytes through the link.
TEST(StepsPerLaunch, TheLoopKeepsItsStateInDeviceMemoryBitIdentically) {
  const auto compiled = testing::CompileFixture("mlp_sgd_loop.hlo", "small", true);
  // Named by the entry parameters that start the loop, read back as the loop's results: the
  // single step's.
  EXPECT_THAT(testing::StateTensorNames(*compiled), ::testing::UnorderedElementsAreArray(testing::kMlpSgdStateTensors));
  std::size_t updates = 0;
  for (const compiler::DeviceStep* step : compiled->DeviceSteps()) updates += step->resident_outputs.empty() ? 0 : 1;
  EXPECT_EQ(updates, 5u);  // in the body, run every iteration
  const TrainedRun device = Train("mlp_sgd_loop.hlo", 48, std::nullopt, true);
  const TrainedRun host = Train("mlp_sgd_loop.hlo", 48);
  const TrainedRun step = Train("mlp_sgd_step.hlo", 48, std::nullopt, true);
  EXPECT_EQ(device.summary.losses, host.summary.losses);
  EXPECT_EQ(device.summary.losses, step.summary.losses);
  ExpectSameState(device.state, host.state);
  ExpectSameState(device.state, step.state);
  const auto bytes = [](const TrainSummary& s) { return s.link_bytes.operand_bytes + s.link_bytes.result_bytes; };
  EXPECT_LT(bytes(device.summary), bytes(host.summary));
  std::cout << "mlp_sgd_loop.hlo, 48 steps: operand and result bytes " << bytes(device.summary)
            << " with the state in device memory, " << bytes(host.summary) << " on the host (the single step in device "
            << "memory: " << bytes(step.summary) << "); device cycles " << device.summary.device_cycles << ", "
            << host.summary.device_cycles << " (" << step.summary.device_cycles << ")\n";
}

TEST(StepsPerLaunch, ARunOfPartialLaunchesIsRefusedBeforeItStarts) {
  EXPECT_THAT([] { Train("mlp_sgd_loop.hlo", 20); },
              ThrowsMessage<std::invalid_argument>(AllOf(
                  HasSubstr("the program runs 8 steps per launch, but this run would make 20 steps (steps 1 to 20: the "
                            "step limit is 20), not a whole number of launches; ask for a step limit of 16 or 24, or "
                            "a number of epochs that is a multiple of 2"))));
}

}  // namespace
}  // namespace systole::runtime
