// The analytic timing model (docs/MODEL.md "Timing model"): a few schedules worked out by hand
// from the documented formulas, so that a change to them is deliberate. The hand-worked
// schedules use the fixed-latency memory (TimingParameters::Memory::kFixed) so that every
// number can be derived on paper; the DRAM-timed DMA estimate (the default) is checked against
// MemoryTimingModel itself and against what DRAM behaviour must cost (docs/MEMORY.md).
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/timing/memory_timing.hpp"
#include "tests/model/model_test_util.hpp"

namespace systole::model {
namespace {

using namespace testing;  // NOLINT: test helpers
using isa::MemSpace;

// kFixed on tiny: R = C = 4, 2 memory channels; latency 64, 32-byte beats, unit queues of 8.
TimingParameters Fixed() {
  TimingParameters parameters;
  parameters.memory = TimingParameters::Memory::kFixed;
  return parameters;
}

TEST(Timing, OneLoadIsLatencyPlusBeats) {
  GoldenModel model(LoadConfig("tiny"), Fixed());
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Halt()});
  EXPECT_EQ(model.Counter("CYCLES"), 64u + 1u);
  EXPECT_EQ(model.Counter("STALL_MEMORY"), 64u);
  EXPECT_EQ(model.Counter("INSNS"), 2u);
}

TEST(Timing, BeatsPerRowAndChannels) {
  const TimingModel timing(LoadConfig("tiny"), Fixed());  // 2 channels
  EXPECT_EQ(timing.DmaBeats(1, 4), 1u);
  EXPECT_EQ(timing.DmaBeats(4, 4), 2u);     // a beat per row, two channels
  EXPECT_EQ(timing.DmaBeats(3, 33), 3u);    // 2 beats per row
  EXPECT_EQ(timing.DmaBeats(1, 64), 1u);
}

TEST(Timing, MatmulWaitsForTokenAndTile) {
  GoldenModel model(LoadConfig("tiny"), Fixed());
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
  GoldenModel model(LoadConfig("tiny"), Fixed());
  RunOk(model, {LoadWeights(kDataAddress, 4, 4, 4), Matmul(0, 0, 20, 4, true, false),
                Matmul(20, 20, 20, 4, false, false), Matmul(40, 40, 20, 4, false, false), Halt()});
  // Tile: 64 + 2 beats = 66, in the array at 70. Three streams of 20 rows back to back, then
  // one fill/drain of R + C = 8.
  EXPECT_EQ(model.Counter("MXU_BUSY"), 60u);
  EXPECT_EQ(model.Counter("CYCLES"), 70u + 60u + 8u);
}

// The WEIGHT unit takes the next LOAD_WEIGHTS once the current one's requests are issued
// (latency + stream - latency, plus one idle cycle), so back-to-back tiles overlap their memory
// latency; its queue of weight_queue_depth instructions bounds how far ahead it runs.
TEST(Timing, BackToBackWeightTilesOverlapTheirLatency) {
  const std::vector<isa::Instruction> program = {
      LoadWeights(kDataAddress, 4, 4, 4), LoadWeights(kDataAddress + 16, 4, 4, 4),
      Matmul(0, 0, 10, 4, true, false), Matmul(10, 10, 10, 4, true, false), Halt()};
  GoldenModel model(LoadConfig("tiny"), Fixed());
  RunOk(model, program);
  // Tile 0: start 0, 64 + 2 beats: arrives at 66; the unit is free at 66 - 64 + 1 = 3.
  // Tile 1: start 3, memory free at 66 but its latency ends at 67: arrives at 69.
  // MATMUL 0: tile in the array at 66 + R = 70 (stall 68), streams to 80.
  // MATMUL 1: tile 1 ready at max(69, 70) + R = 74 < 80: no stall; 80 + 10 + R + C = 98.
  EXPECT_EQ(model.Counter("STALL_MEMORY"), 64u + 64u);
  EXPECT_EQ(model.Counter("STALL_WFIFO"), 68u);
  EXPECT_EQ(model.Counter("CYCLES"), 98u);

  // A queue of one is the unit before the overlap: tile 1 starts when tile 0 has arrived (66),
  // arrives at 132 and is in the array at 136: 56 more cycles of STALL_WFIFO.
  TimingParameters serial = Fixed();
  serial.weight_queue_depth = 1;
  GoldenModel one(LoadConfig("tiny"), serial);
  RunOk(one, program);
  EXPECT_EQ(one.Counter("STALL_WFIFO"), 68u + 56u);
  EXPECT_EQ(one.Counter("CYCLES"), 136u + 10u + 8u);
}

TEST(Timing, FullUnitQueueStallsDispatch) {
  GoldenModel model(LoadConfig("tiny"), Fixed());
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
  GoldenModel model(LoadConfig("tiny"), Fixed());
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Sync(),
                Insn(Opcode::kInterrupt, {{Field::kCode, 1}}), Halt()});
  EXPECT_EQ(model.Counter("CYCLES"), 65u + 1u + 1u);  // INTERRUPT after the SYNC, then HALT
  RunOk(model, {Halt()});
  EXPECT_EQ(model.Counter("CYCLES"), 67u + 1u);
}

// The default: a DMA costs what MemoryTimingModel says the HBM controller and DRAM take.
TEST(DramTiming, OneLoadTakesTheControllersLatency) {
  const Config config = LoadConfig("tiny");
  const MemoryTimingResult one =
      MemoryTimingModel(config).Run(MemoryTimingModel::DmaAccesses(kDataAddress, 4, 1, 4, false));
  ASSERT_EQ(one.latencies.size(), 1u);
  // A closed bank: at least ACT, t_rcd, RD, t_cl.
  EXPECT_GE(one.latencies[0], config.dram.t_rcd + config.dram.t_cl);
  GoldenModel model(config);
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Halt()});
  EXPECT_EQ(model.Counter("CYCLES"), one.latencies[0] + 1);
  EXPECT_EQ(model.Counter("STALL_MEMORY"), one.latencies[0]);
}

TEST(DramTiming, AStreamPaysLatencyOnceThenItsRate) {
  const Config config = LoadConfig("tiny");
  TimingModel timing(config);
  const std::uint64_t rows = 256, row_bytes = 64;  // 512 words, 2 per row
  const MemoryTimingResult run = MemoryTimingModel(config).Run(
      MemoryTimingModel::DmaAccesses(kDataAddress, row_bytes, rows, row_bytes, false));
  const DmaTime time = timing.Dma(kDataAddress, row_bytes, rows, row_bytes, false);
  EXPECT_EQ(time.latency, run.latencies.front());
  EXPECT_EQ(time.latency + time.stream, run.cycles + 1);
  // Near the port's 32 bytes per cycle, not the fixed model's 2 channels x 32.
  EXPECT_GE(time.stream, rows * row_bytes / 32);
  EXPECT_LE(time.stream, rows * row_bytes / 32 * 11 / 10);
}

TEST(DramTiming, RowMissesCostMoreThanAStream) {
  // The same 64 rows of 32 bytes, contiguous or one DRAM row apart in one bank (each a miss).
  const Config config = LoadConfig("tiny");
  TimingModel timing(config);
  const std::uint64_t same_bank = std::uint64_t{config.memory_channels} * config.dram.bank_groups *
                                  config.dram.banks_per_group * config.dram.row_bytes;
  const DmaTime stream = timing.Dma(0, 32, 64, 32, false);
  const DmaTime misses = timing.Dma(0, same_bank, 64, 32, false);
  EXPECT_GE(misses.stream, 63 * (config.dram.t_rp + config.dram.t_rcd));
  EXPECT_LT(stream.stream, misses.stream / 10);
  // Writes are acknowledged at WR, before the data would return: a write stream is faster.
  EXPECT_LT(timing.Dma(0, 32, 64, 32, true).latency, stream.latency);
}

TEST(DramTiming, EstimatesRepeatEveryRowOfBanksAndLongDmasExtrapolate) {
  const Config config = LoadConfig("tiny");
  const std::uint64_t period = std::uint64_t{config.memory_channels} * config.dram.bank_groups *
                               config.dram.banks_per_group * config.dram.row_bytes;
  TimingModel cached(config);
  for (std::uint64_t address : {std::uint64_t{0}, std::uint64_t{96}, std::uint64_t{4000}}) {
    const DmaTime a = cached.Dma(address, 1056, 40, 100, false);
    TimingModel fresh(config);  // no cache: simulated at its own address
    const DmaTime b = fresh.Dma(address + 3 * period, 1056, 40, 100, false);
    EXPECT_EQ(a.latency, b.latency) << address;
    EXPECT_EQ(a.stream, b.stream) << address;
  }
  // Half the stream simulated: it spans two refresh intervals, so its rate includes refresh.
  TimingParameters parameters;
  parameters.dram_max_accesses = 8192;
  TimingModel truncated(config, parameters), full(config);
  const DmaTime estimate = truncated.Dma(0, 128, 4096, 128, false);  // 16384 words
  const DmaTime exact = full.Dma(0, 128, 4096, 128, false);
  EXPECT_EQ(estimate.latency, exact.latency);
  EXPECT_NEAR(static_cast<double>(estimate.stream), static_cast<double>(exact.stream),
              0.02 * static_cast<double>(exact.stream));
}

}  // namespace
}  // namespace systole::model
