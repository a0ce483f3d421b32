// A launch's DMA streams and instruction fetches sharing the memory (MemoryTimingModel::
// RunStreams, TimingParameters::shared_memory; docs/MODEL.md "How close"): the arbiter's
// round robin, responses in request order, credits, rows left open, and the golden model's
// schedule built on them.
#include <gtest/gtest.h>

#include <array>

#include "sim/timing/memory_timing.hpp"
#include "sim/trace/timeline.hpp"
#include "tests/model/model_test_util.hpp"

namespace systole::model {
namespace {

using namespace testing;  // NOLINT: test helpers
using isa::MemSpace;

MemoryStream Reads(unsigned requester, std::uint64_t release, std::uint64_t address, std::uint64_t words,
                   std::uint64_t credits = 0) {
  return {requester, release, MemoryTimingModel::DmaAccesses(address, 32, words, 32, false), credits};
}

TEST(MemoryStreams, OneStreamIsTheControllersOwnTiming) {
  const Config config = LoadConfig("small");
  const MemoryTimingModel memory(config);
  const MemoryStream stream = Reads(1, 0, kDataAddress, 24);
  const MemoryTimingResult alone = memory.Run(stream.accesses);
  const std::vector<MemoryStreamTiming> shared = memory.RunStreams({&stream, 1});
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_EQ(shared[0].first_response, alone.latencies.front());
  EXPECT_EQ(shared[0].last_response, alone.cycles);
  EXPECT_EQ(shared[0].last_accept, 23u);  // one request a cycle from cycle 0
}

TEST(MemoryStreams, TheArbiterTakesRequestersInTurn) {
  const Config config = LoadConfig("small");
  const MemoryTimingModel memory(config);
  // Two requesters with 8 words each from cycle 0: granted alternately, so each one's last
  // request goes out at 14 or 15 instead of 7, and each finishes later than it would alone.
  const std::array<MemoryStream, 2> streams = {Reads(1, 0, kDataAddress, 8), Reads(2, 0, 4 * kDataAddress, 8)};
  const std::vector<MemoryStreamTiming> shared = memory.RunStreams(streams);
  EXPECT_EQ(std::min(shared[0].last_accept, shared[1].last_accept), 14u);
  EXPECT_EQ(std::max(shared[0].last_accept, shared[1].last_accept), 15u);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::vector<MemoryStreamTiming> alone = memory.RunStreams({&streams[i], 1});
    EXPECT_GT(shared[i].last_response, alone[0].last_response) << i;
  }
}

TEST(MemoryStreams, ResponsesComeBackInRequestOrder) {
  const Config config = LoadConfig("small");
  const MemoryTimingModel memory(config);
  // A word in a closed bank (ACTIVATE first), then, one cycle later from another requester, a
  // word whose row is open: alone the second is answered first; shared, it waits its turn.
  const std::uint64_t open_row = 0x20;  // bank group 1 of channel 0
  const std::array<std::uint64_t, 1> open = {open_row};
  const std::array<MemoryStream, 2> streams = {Reads(1, 0, kDataAddress, 1), Reads(2, 1, open_row, 1)};
  const std::vector<MemoryStreamTiming> alone_slow = memory.RunStreams({&streams[0], 1}, open);
  const std::vector<MemoryStreamTiming> alone_fast = memory.RunStreams({&streams[1], 1}, open);
  ASSERT_LT(alone_fast[0].first_response, alone_slow[0].first_response);
  const std::vector<MemoryStreamTiming> shared = memory.RunStreams(streams, open);
  EXPECT_EQ(shared[0].first_response, alone_slow[0].first_response);
  EXPECT_EQ(shared[1].first_response, shared[0].first_response + 1);
}

TEST(MemoryStreams, OpenRowsSkipTheActivateAndCreditsBoundTheStream) {
  const Config config = LoadConfig("small");
  const MemoryTimingModel memory(config);
  const MemoryStream word = Reads(1, 0, kDataAddress, 1);
  const std::array<std::uint64_t, 1> open = {kDataAddress};
  EXPECT_EQ(memory.RunStreams({&word, 1})[0].first_response,
            memory.RunStreams({&word, 1}, open)[0].first_response + config.dram.t_rcd);
  // 64 words with 4 in flight: a round trip per 4 words instead of one word a cycle.
  const MemoryStream free_running = Reads(1, 0, kDataAddress, 64), limited = Reads(1, 0, kDataAddress, 64, 4);
  const std::uint64_t fast = memory.RunStreams({&free_running, 1})[0].last_response;
  const std::uint64_t slow = memory.RunStreams({&limited, 1})[0].last_response;
  EXPECT_GT(slow, fast + 64 / 4 * config.dram.t_cl / 2);
  // A stream released later, and one with nothing to move, are answered from their release.
  const std::array<MemoryStream, 2> later = {MemoryStream{1, 5000, {}, 0}, Reads(2, 5000, kDataAddress, 1)};
  const std::vector<MemoryStreamTiming> timing = memory.RunStreams(later);
  EXPECT_EQ(timing[0].last_response, 5000u);
  EXPECT_GT(timing[1].first_response, 5000u + config.dram.t_cl);
}

// A credit that comes back late (MemoryStream::credit_delay, the row reader's response FIFO and
// registered count): with one credit, each access goes out the delay later after the response
// of the one before; a stream with enough credits never waits for one.
TEST(MemoryStreams, LateCreditsSpaceACreditBoundStreamOut) {
  const Config config = LoadConfig("small");
  for (const std::uint64_t delay : {0u, 1u, 2u, 5u}) {
    SharedMemory memory(config, {}, {});
    MemoryStream stream = Reads(1, 0, kDataAddress, 6, 1);
    stream.credit_delay = delay;
    stream.record = true;
    memory.Add(std::move(stream));
    while (memory.Step()) {
    }
    const std::vector<std::int64_t>& accepts = memory.Accepts(0);
    const std::vector<std::int64_t>& responses = memory.Responses(0);
    for (std::size_t k = 1; k < accepts.size(); ++k) {
      EXPECT_EQ(accepts[k], responses[k - 1] + 1 + static_cast<std::int64_t>(delay)) << "delay " << delay << ", access " << k;
    }
  }
  const MemoryTimingModel model(config);
  const std::vector<MemoryAccess> words = MemoryTimingModel::DmaAccesses(kDataAddress, 32, 24, 32, false);
  EXPECT_EQ(model.Run(words, 64, 3).cycles, model.Run(words).cycles);
  EXPECT_GT(model.Run(words, 4, 3).cycles, model.Run(words, 4).cycles);
}

// The golden model: a lone LOAD costs its unit's pipeline around the memory's own latency.
TEST(SharedMemory, ALoneLoadIsItsPipelineAroundTheMemorysLatency) {
  const Config config = LoadConfig("small");
  const TimingParameters p;
  GoldenModel model(config);
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 32, 0, 0, 1, 16), Halt()});
  // The sequencer accepts the LOAD at 27 (timing_test.cpp); the rows of the two program words
  // are open (the host wrote them last), fetched at cycles 1 and 2.
  const std::array<std::uint64_t, 2> program = {kProgramAddress, kProgramAddress + 32};
  const std::array<MemoryStream, 3> streams = {Reads(0, 1, program[0], 1), Reads(0, 2, program[1], 1),
                                               Reads(1, 27 + p.read_issue, kDataAddress, 1)};
  const std::uint64_t response = MemoryTimingModel(config).RunStreams(streams, program)[2].last_response;
  // Done read_done cycles after the cycle of the response; HALT ends the launch the cycle after.
  EXPECT_EQ(model.Counter("CYCLES"), response + 1 + p.read_done + 1);
  EXPECT_EQ(model.Counter("STALL_MEMORY"), 0u);
}

// A STORE streaming beside a LOAD: the two interleave at the arbiter, so the LOAD ends later
// than alone, and the cycles sharing added are its memory stall.
TEST(SharedMemory, AStoreBesideALoadSlowsItDown) {
  const Config config = LoadConfig("small");
  const isa::Instruction load = Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 32, 0, 0, 64, 16);
  const isa::Instruction store = Dma(Opcode::kStore, MemSpace::kUb, 8 * kDataAddress, 32, 100, 0, 64, 16);
  const auto load_done = [&](const std::vector<isa::Instruction>& program, PerfCounters& perf) {
    TimingModel timing(config);
    timing.StartLaunch(kProgramAddress);
    for (const isa::Instruction& insn : program) timing.Schedule(insn, perf);
    timing.EndLaunch(perf);
    return timing.LaunchInstructions()[0].complete;
  };
  PerfCounters alone{}, shared{};
  const std::uint64_t by_itself = load_done({load, Halt()}, alone);
  const std::uint64_t beside_a_store = load_done({load, store, Halt()}, shared);
  EXPECT_GT(beside_a_store, by_itself + 16);
  EXPECT_EQ(At(alone, Perf::kStallMemory), 0u);
  EXPECT_GT(At(shared, Perf::kStallMemory), 16u);
  // The first estimate, each DMA alone, is what the launch reported before EndLaunch.
  TimingParameters first;
  first.shared_memory = false;
  TimingModel estimate(config, first);
  estimate.StartLaunch(kProgramAddress);
  PerfCounters perf{};
  for (const isa::Instruction& insn : {load, store, Halt()}) estimate.Schedule(insn, perf);
  estimate.EndLaunch(perf);  // nothing to share: a no-op
  EXPECT_LT(estimate.LaunchInstructions()[0].complete, beside_a_store);
}

// The WEIGHT unit takes a tile while its queue (weight_queue_depth) has room, not waiting for
// the weight FIFO; the FIFO holds back the tile's rows, so a tile whose words are in early is
// done 2 R + 1 cycles after the first row of the MATMUL before the one that frees its slot, as
// on the RTL (room_for in shared_memory.cpp; measured there on the swapped classifier, every
// tile).
TEST(SharedMemory, AWeightTileIsTakenBeforeItsFifoSlotIsFreeAndDoneAfter) {
  const Config config = LoadConfig("small");
  const TimingParameters p;
  const std::uint64_t fifo = config.weight_fifo_tiles, r = config.rows, tiles = fifo + 6;
  ASSERT_EQ(p.weight_queue_depth, 2u);
  // Tiles of one 32-byte row and MATMULs of 512 rows: from tile fifo + 2 on, the FIFO, not the
  // memory, holds the tiles back (the slots of tiles 0 and 1 free as the first MATMUL begins).
  std::vector<isa::Instruction> program;
  for (std::uint64_t t = 0; t < fifo; ++t) program.push_back(LoadWeights(kDataAddress + 32 * t, 32, 1, 16));
  for (std::uint64_t t = 0; t < tiles; ++t) {
    program.push_back(Matmul(0, 0, 512, r, true, false));
    if (t + fifo < tiles) program.push_back(LoadWeights(kDataAddress + 32 * (t + fifo), 32, 1, 16));
  }
  program.push_back(Halt());
  GoldenModel model(config);
  trace::Timeline timeline(config, "ref");
  timeline.BeginLaunch({});
  model.Record(&timeline);
  RunOk(model, program);
  std::vector<trace::Span> weights, matmuls;
  for (const trace::Span& span : timeline.spans()) {
    if (span.unit == static_cast<unsigned>(isa::Unit::kWeight)) weights.push_back(span);
    if (span.unit == static_cast<unsigned>(isa::Unit::kMxu)) matmuls.push_back(span);
  }
  ASSERT_EQ(weights.size(), tiles);
  ASSERT_EQ(matmuls.size(), tiles);
  // A MATMUL's first row: after its weight-FIFO stall, if any (its tile shifting in).
  const auto first_row = [&](const trace::Span& matmul) {
    std::uint64_t row = matmul.begin + p.mxu_issue_latency;
    for (const trace::Stall& stall : timeline.stalls()) {
      if (stall.unit == matmul.unit && stall.cause == trace::StallCause::kWeightFifo && stall.begin == row) {
        row = stall.end;
      }
    }
    return row;
  };
  for (std::uint64_t t = fifo + 2; t < tiles; ++t) {
    SCOPED_TRACE("tile " + std::to_string(t));
    // Its slot frees when tile t - fifo has shifted into the array, R rows after the first row
    // of the MATMUL before the one that pops it.
    const std::uint64_t slot_free = first_row(matmuls[t - fifo - 1]) + r;
    EXPECT_LT(weights[t].begin, slot_free) << "taken before the FIFO has its slot";
    EXPECT_EQ(weights[t].end, slot_free + r + 1) << "its R rows go in once the slot is free";
    EXPECT_EQ(weights[t].begin, weights[t - p.weight_queue_depth].end - 1) << "the queue, not the FIFO, holds it";
  }
  model.Record(nullptr);
}

}  // namespace
}  // namespace systole::model
