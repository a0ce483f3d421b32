// The analytic timing model (docs/MODEL.md "Timing model"): a few schedules worked out by hand
// from the documented formulas, so that a change to them is deliberate.
#include <gtest/gtest.h>

#include "model_test_util.hpp"

namespace systole::model {
namespace {

using namespace testing;  // NOLINT: test helpers
using isa::MemSpace;

// tiny: R = C = 4, 2 memory channels; defaults: latency 64, 32-byte beats, unit queues of 8.
TEST(Timing, OneLoadIsLatencyPlusBeats) {
  GoldenModel model(LoadConfig("tiny"));
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Halt()});
  EXPECT_EQ(model.Counter("CYCLES"), 64u + 1u);
  EXPECT_EQ(model.Counter("STALL_MEMORY"), 64u);
  EXPECT_EQ(model.Counter("INSNS"), 2u);
}

TEST(Timing, BeatsPerRowAndChannels) {
  const TimingModel timing(LoadConfig("tiny"));  // 2 channels
  EXPECT_EQ(timing.DmaBeats(1, 4), 1u);
  EXPECT_EQ(timing.DmaBeats(4, 4), 2u);     // a beat per row, two channels
  EXPECT_EQ(timing.DmaBeats(3, 33), 3u);    // 2 beats per row
  EXPECT_EQ(timing.DmaBeats(1, 64), 1u);
}

TEST(Timing, MatmulWaitsForTokenAndTile) {
  GoldenModel model(LoadConfig("tiny"));
  isa::Instruction load = Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 10, 4);
  load.signal = kMxuUnit;
  isa::Instruction matmul = Matmul(0, 0, 10, 4, true, false);
  matmul.wait = kLoadUnit;
  RunOk(model, {load, LoadWeights(kDataAddress, 4, 4, 4), matmul, Halt()});
  // LOAD: start 0, 10 rows on 2 channels = 5 beats after 64: completes at 69.
  // LOAD_WEIGHTS: start 1, memory free at 69 (not 65): 2 beats, completes at 71.
  // MATMUL: dispatched at 2; token at 69 (stall 67); tile in the array at 71 + R = 75 (stall 6);
  // streams 10 rows, results drain R + C = 8 cycles later: 75 + 10 + 8 = 93.
  EXPECT_EQ(model.Counter("STALL_TOKEN"), 67u);
  EXPECT_EQ(model.Counter("STALL_WFIFO"), 6u);
  EXPECT_EQ(model.Counter("STALL_MEMORY"), 64u + 68u);
  EXPECT_EQ(model.Counter("MXU_BUSY"), 10u);
  EXPECT_EQ(model.Counter("CYCLES"), 93u);
}

TEST(Timing, BackToBackMatmulsOverlapFillAndDrain) {
  GoldenModel model(LoadConfig("tiny"));
  RunOk(model, {LoadWeights(kDataAddress, 4, 4, 4), Matmul(0, 0, 20, 4, true, false),
                Matmul(20, 20, 20, 4, false, false), Matmul(40, 40, 20, 4, false, false), Halt()});
  // Tile: 64 + 2 beats = 66, in the array at 70. Three streams of 20 rows back to back, then
  // one fill/drain of R + C = 8.
  EXPECT_EQ(model.Counter("MXU_BUSY"), 60u);
  EXPECT_EQ(model.Counter("CYCLES"), 70u + 60u + 8u);
}

TEST(Timing, FullUnitQueueStallsDispatch) {
  GoldenModel model(LoadConfig("tiny"));
  std::vector<isa::Instruction> program(12, Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0,
                                                0, 1, 4));
  program.push_back(Halt());
  RunOk(model, program);
  // Each LOAD takes 65 cycles; the 9th must wait until the 1st has started (cycle 0: no stall),
  // the 10th until the 2nd started (65), ...
  EXPECT_GT(model.Counter("STALL_DISPATCH"), 0u);
  EXPECT_EQ(model.Counter("CYCLES"), 12u * 65u);
}

TEST(Timing, CyclesAccumulateOverLaunchesAndSyncWaits) {
  GoldenModel model(LoadConfig("tiny"));
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Sync(),
                Insn(Opcode::kInterrupt, {{Field::kCode, 1}}), Halt()});
  EXPECT_EQ(model.Counter("CYCLES"), 65u + 1u + 1u);  // INTERRUPT after the SYNC, then HALT
  RunOk(model, {Halt()});
  EXPECT_EQ(model.Counter("CYCLES"), 67u + 1u);
}

}  // namespace
}  // namespace systole::model
