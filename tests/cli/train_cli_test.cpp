// `systole train` on a program of several steps per launch: examples/training/mlp_sgd_loop.hlo
// (the MLP's SGD step 8 times in a lax.fori_loop over stacked batches) against the single step
// mlp_sgd_step.hlo, which make_fixtures.py builds from the same step function, initial state
// (mlp_sgd_init.npz) and batch order: same seed, same steps, so the same losses and state bits.
// docs/TRAINING.md, "Several steps per launch".
#include <gtest/gtest.h>

#include "tests/cli/cli_runner.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::cli_test {
namespace {

std::vector<std::string> TrainArgs(const std::string& program, const std::vector<std::string>& more) {
  std::vector<std::string> args = {"train", Source("examples/training/" + program),
                                   "--data", Source("examples/training/digits.npz"),
                                   "--init", Source("examples/training/mlp_sgd_init.npz")};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

void ExpectSameStateArrays(const std::string& a, const std::string& b) {
  const std::vector<npy::Array> x = npy::ReadNpz(a), y = npy::ReadNpz(b);
  ASSERT_EQ(x.size(), 9u);  // arr_0 = steps and cycles, then the 8 state arrays
  ASSERT_EQ(y.size(), x.size());
  for (std::size_t i = 1; i < x.size(); ++i) EXPECT_EQ(x[i].values, y[i].values) << "arr_" << i;
}

class TrainLoopCli : public TempDir {};

// 6 launches of 8 steps, the sixth across the end of epoch 1 (44 steps): every step's loss and
// the state equal the single step's 48 launches; epoch 1 is reported after the launch it ended
// in, at step 48.
TEST_F(TrainLoopCli, EightStepsPerLaunchTrainLikeTheSingleStep) {
  const CliResult loop = Systole(TrainArgs("mlp_sgd_loop.hlo", {"--steps", "48", "--checkpoint", Path("loop.npz"),
                                                                "--losses", Path("loop_losses.npz")}));
  ASSERT_EQ(loop.exit_code, 0) << loop.out;
  EXPECT_NE(loop.out.find("batch 32, 44 steps per epoch, 8 steps per launch"), std::string::npos) << loop.out;
  EXPECT_NE(loop.out.find("epoch   1  step     48  loss"), std::string::npos) << loop.out;
  const CliResult step = Systole(TrainArgs("mlp_sgd_step.hlo", {"--steps", "48", "--checkpoint", Path("step.npz"),
                                                                "--losses", Path("step_losses.npz"), "-q"}));
  ASSERT_EQ(step.exit_code, 0) << step.out;
  const npy::Array losses = npy::ReadNpz(Path("loop_losses.npz")).at(0);
  EXPECT_EQ(losses.shape, std::vector<std::uint64_t>{48});
  EXPECT_EQ(losses.values, npy::ReadNpz(Path("step_losses.npz")).at(0).values);
  EXPECT_EQ(npy::ReadNpz(Path("loop.npz")).at(0).values.at(0), 48);
  ExpectSameStateArrays(Path("loop.npz"), Path("step.npz"));
}

TEST_F(TrainLoopCli, AResumedRunIsBitIdenticalToOneThatNeverStopped) {
  ASSERT_EQ(Systole(TrainArgs("mlp_sgd_loop.hlo", {"--steps", "48", "--checkpoint", Path("whole.npz"), "-q"})).exit_code,
            0);
  ASSERT_EQ(Systole(TrainArgs("mlp_sgd_loop.hlo", {"--steps", "24", "--checkpoint", Path("half.npz"), "-q"})).exit_code,
            0);
  const CliResult rest = Systole(TrainArgs("mlp_sgd_loop.hlo", {"--steps", "48", "--resume", Path("half.npz"),
                                                                "--checkpoint", Path("rest.npz")}));
  ASSERT_EQ(rest.exit_code, 0) << rest.out;
  EXPECT_NE(rest.out.find("resuming after step 24"), std::string::npos) << rest.out;
  EXPECT_EQ(npy::ReadNpz(Path("rest.npz")).at(0).values, npy::ReadNpz(Path("whole.npz")).at(0).values);
  ExpectSameStateArrays(Path("rest.npz"), Path("whole.npz"));
}

TEST_F(TrainLoopCli, PartialLaunchesAreRefusedNamingTheLimitsThatWouldBeWhole) {
  const CliResult steps = Systole(TrainArgs("mlp_sgd_loop.hlo", {"--steps", "20"}));
  EXPECT_NE(steps.exit_code, 0);
  EXPECT_NE(steps.out.find("the program runs 8 steps per launch, but this run would make 20 steps (steps 1 to 20: "
                           "the step limit is 20), not a whole number of launches; ask for a step limit of 16 or 24"),
            std::string::npos) << steps.out;
  const CliResult epochs = Systole(TrainArgs("mlp_sgd_loop.hlo", {"--epochs", "1"}));
  EXPECT_NE(epochs.exit_code, 0);
  EXPECT_NE(epochs.out.find("would make 44 steps (steps 1 to 44: 1 epoch of 44 steps), not a whole number of "
                            "launches; ask for a step limit of 40 or 48, or a number of epochs that is a multiple of 2"),
            std::string::npos) << epochs.out;
}

}  // namespace
}  // namespace systole::cli_test
