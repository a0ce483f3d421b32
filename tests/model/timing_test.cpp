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

// kFixed on tiny: R = C = 4, 2 memory channels; latency 64, 32-byte beats, unit queues of 4.
TimingParameters Fixed() {
  TimingParameters parameters;
  parameters.memory = TimingParameters::Memory::kFixed;
  return parameters;
}

// The sequencer on tiny (t_cl = 14, fetch overhead 7): instruction word n < 4 is requested at
// cycle n + 1 and arrives 14 + 7 + 1 cycles later, so word 0 is there at 23; each instruction
// spends four dispatch states (S_NEXT takes the word, S_ISSUE pushes it three cycles later) and
// its unit accepts it the cycle after: instruction n < 4 is accepted at 27 + 4n when its unit is
// free. HALT ends the launch the cycle after the last `done`.
constexpr std::uint64_t kFirstAccept = 27;

TEST(Timing, OneLoadIsLatencyPlusBeats) {
  GoldenModel model(LoadConfig("tiny"), Fixed());
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Halt()});
  // Accepted at 27, done 64 + 1 beat later; memory was free, so no memory stall.
  EXPECT_EQ(model.Counter("CYCLES"), kFirstAccept + 64u + 1u + 1u);
  EXPECT_EQ(model.Counter("STALL_MEMORY"), 0u);
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
  // LOAD: accepted at 27, 10 rows on 2 channels = 5 beats after 64: memory busy 91..95, done
  // at 96.
  // LOAD_WEIGHTS: accepted at 31, its data could flow at 95 but memory is busy until 96 (memory
  // stall 1): 2 beats, done at 98.
  // MATMUL: accepted at 35; the token arrives 2 cycles after the LOAD's done, at 98 (stall 63);
  // its first row would issue 2 cycles later (100) but the tile is in the array at 98 + R = 102
  // (stall 2); 10 rows, results drain R + C + 1 cycles later: 102 + 10 + 9 = 121; HALT: 122.
  EXPECT_EQ(model.Counter("STALL_TOKEN"), 63u);
  EXPECT_EQ(model.Counter("STALL_WFIFO"), 2u);
  EXPECT_EQ(model.Counter("STALL_MEMORY"), 1u);
  EXPECT_EQ(model.Counter("MXU_BUSY"), 10u);
  EXPECT_EQ(model.Counter("CYCLES"), 122u);
}

TEST(Timing, BackToBackMatmulsOverlapFillAndDrain) {
  GoldenModel model(LoadConfig("tiny"), Fixed());
  RunOk(model, {LoadWeights(kDataAddress, 4, 4, 4), Matmul(0, 0, 20, 4, true, false),
                Matmul(20, 20, 20, 4, false, false), Matmul(40, 40, 20, 4, false, false), Halt()});
  // Tile: accepted at 27, 64 + 2 beats: 93, in the array at 97. Three streams of 20 rows back
  // to back, then one fill/drain of R + C + 1, and HALT.
  EXPECT_EQ(model.Counter("MXU_BUSY"), 60u);
  EXPECT_EQ(model.Counter("CYCLES"), 97u + 60u + 9u + 1u);
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
  // Tile 0: accepted at 27, 64 + 2 beats: arrives at 93; the unit is free at 93 - 64 + 1 = 30.
  // Tile 1: accepted at 31, its beats at 95..96 after tile 0's at 91..92: arrives at 97.
  // MATMUL 0: accepted at 35, tile in the array at 93 + R = 97 (stall 97 - 37 = 60), streams
  // rows 97..106; MATMUL 1 is accepted meanwhile and issues its first row at 107, its tile
  // ready since max(97, 97) + R = 101: no stall; done at 107 + 10 + R + C + 1 = 126; HALT: 127.
  EXPECT_EQ(model.Counter("STALL_MEMORY"), 0u);
  EXPECT_EQ(model.Counter("STALL_WFIFO"), 60u);
  EXPECT_EQ(model.Counter("CYCLES"), 127u);

  // A queue of one is the unit before the overlap: tile 1 starts when tile 0 has arrived (93),
  // arrives at 159 and is in the array at 163: 56 more cycles of STALL_WFIFO.
  TimingParameters serial = Fixed();
  serial.weight_queue_depth = 1;
  GoldenModel one(LoadConfig("tiny"), serial);
  RunOk(one, program);
  EXPECT_EQ(one.Counter("STALL_WFIFO"), 60u + 56u);
  EXPECT_EQ(one.Counter("CYCLES"), 163u + 10u + 9u + 1u);
}

TEST(Timing, FullUnitQueueStallsDispatch) {
  GoldenModel model(LoadConfig("tiny"), Fixed());
  std::vector<isa::Instruction> program(12, Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0,
                                                0, 1, 4));
  program.push_back(Halt());
  RunOk(model, program);
  // Each LOAD takes 65 cycles and the unit takes the next one in the cycle of its last write:
  // one every 64 cycles from 27. The 5th waits in S_ISSUE until the 1st has been accepted, ...
  EXPECT_GT(model.Counter("STALL_DISPATCH"), 0u);
  EXPECT_EQ(model.Counter("CYCLES"), kFirstAccept + 12u * 64u + 1u + 1u);
}

TEST(Timing, CyclesAccumulateOverLaunchesAndSyncWaits) {
  GoldenModel model(LoadConfig("tiny"), Fixed());
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Sync(),
                Insn(Opcode::kInterrupt, {{Field::kCode, 1}}), Halt()});
  // The LOAD is done at 27 + 65 = 92; SYNC leaves S_ISSUE at 93, then INTERRUPT and HALT take
  // four dispatch states each.
  EXPECT_EQ(model.Counter("CYCLES"), 93u + 4u + 4u);
  // A launch of one HALT: its word arrives at 23, S_ISSUE at 26.
  RunOk(model, {Halt()});
  EXPECT_EQ(model.Counter("CYCLES"), 101u + 26u);
}

// kDram: a DMA costs what MemoryTimingModel says the HBM controller and DRAM take. Without
// shared_memory (the launch's first estimate), each DMA alone on an idle memory.
TEST(DramTiming, OneLoadTakesTheControllersLatency) {
  const Config config = LoadConfig("tiny");
  const MemoryTimingResult one =
      MemoryTimingModel(config).Run(MemoryTimingModel::DmaAccesses(kDataAddress, 4, 1, 4, false));
  ASSERT_EQ(one.latencies.size(), 1u);
  // A closed bank: at least ACT, t_rcd, RD, t_cl.
  EXPECT_GE(one.latencies[0], config.dram.t_rcd + config.dram.t_cl);
  TimingParameters alone;
  alone.shared_memory = false;
  GoldenModel model(config, alone);
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Halt()});
  EXPECT_EQ(model.Counter("CYCLES"), kFirstAccept + one.latencies[0] + 1 + 1);
  EXPECT_EQ(model.Counter("STALL_MEMORY"), 0u);  // nothing else wanted device memory
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
