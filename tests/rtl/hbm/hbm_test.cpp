// The HBM controller (rtl/memory/hbm) under Verilator, behind the core's memory arbiter, with
// the DRAM device model on every channel: randomized traffic from three requesters with a
// scoreboard across channel counts and interleavings (zero lost, corrupted or misordered words;
// zero timing violations), and directed tests for refresh, row conflicts, bank-group spacing,
// back-pressure, the starvation bound and refused addresses.
#include <gtest/gtest.h>

#include <optional>
#include <random>

#include "Vvl_hbm_c1_i8.h"
#include "Vvl_hbm_c2_bram.h"
#include "Vvl_hbm_c2_tiny.h"
#include "Vvl_hbm_c4_i5.h"
#include "tests/rtl/hbm/hbm_bench.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl::hbm {
namespace {

using Builds = ::testing::Types<Build<Vvl_hbm_c1_i8, 1, 8>, Build<Vvl_hbm_c2_tiny, 2, 8>,
                                Build<Vvl_hbm_c4_i5, 4, 5>>;

template <class B>
class HbmTest : public ::testing::Test {
 protected:
  using Bench = HbmBench<typename B::Model>;
  Variant variant_ = B::Get();
  // Directed tests are short: always traced, the waveform kept when they fail. (The random
  // test traces only with SYSTOLE_WAVES=1.)
  std::optional<test::Waveform> wave_;
  HarnessOptions Traced() {
    if (!wave_) wave_.emplace();
    return {.trace_path = wave_->Path()};
  }
};
TYPED_TEST_SUITE(HbmTest, Builds);

// Legal random timing: every relation arch/config checks holds.
DramConfig RandomTiming(std::mt19937_64& rng) {
  auto pick = [&](unsigned lo, unsigned hi) {
    return static_cast<std::uint32_t>(std::uniform_int_distribution<unsigned>(lo, hi)(rng));
  };
  DramConfig t;
  t.t_burst = pick(1, 4);
  t.t_rcd = pick(1, 20);
  t.t_rp = pick(1, 20);
  t.t_ras = t.t_rcd + pick(0, 20);
  t.t_cl = pick(1, 20);
  t.t_wl = pick(1, 8);
  t.t_wr = pick(1, 20);
  t.t_rtp = pick(1, 8);
  t.t_rrd_s = pick(1, 8);
  t.t_rrd_l = t.t_rrd_s + pick(0, 4);
  t.t_faw = pick(1, 40);
  t.t_ccd_s = t.t_burst + pick(0, 2);
  t.t_ccd_l = t.t_ccd_s + pick(0, 4);
  t.t_wtr = pick(1, 10);
  t.t_rtw = pick(1, 20);
  t.t_refi = pick(200, 2000);
  t.t_rfc = pick(10, 150);
  t.starvation_cycles = pick(16, 300);
  return t;
}

Word RandomWord(std::mt19937_64& rng) {
  Word w;
  for (auto& b : w) b = static_cast<std::uint8_t>(rng());
  return w;
}

template <class Bench>
void ExpectClean(Bench& bench) {
  bench.Finish();
  EXPECT_EQ(bench.bus().ViolationCount(), 0u) << bench.bus().Report();
  EXPECT_EQ(bench.sim()->error, 0);
}

// Requester 0 roams the whole memory, 1 hammers a few rows (hits, conflicts, same-address
// hazards), 2 streams sequentially with occasional jumps; reads and writes with random strobes.
template <class Model>
void RandomTraffic(const Variant& variant, bool dram) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave(false);
  std::mt19937_64 rng(seed);
  const DramConfig timing = RandomTiming(rng);
  HbmBench<Model> bench(variant, timing, {.trace_path = wave.Path(), .seed = seed});
  const std::uint64_t words = variant.memory_bytes / 32;
  std::uint64_t next = (rng() % words) * 32;
  std::uint64_t sent = 0;
  for (unsigned round = 0; round < 1500; ++round) {
    for (unsigned i = 0; i < Variant::kRequesters; ++i) {
      Request r;
      r.write = rng() % 2 == 0;
      r.wdata = RandomWord(rng);
      r.wstrb = rng() % 4 == 0 ? static_cast<std::uint32_t>(rng()) : 0xffffffffu;
      if (i == 0) r.address = (rng() % words) * 32;
      if (i == 1) r.address = ((rng() % 4) * 0x10000 + (rng() % 8) * 32) % variant.memory_bytes;
      if (i == 2) {
        if (rng() % 64 == 0) next = (rng() % words) * 32;
        r.address = next;
        next = (next + 32) % variant.memory_bytes;
      }
      bench.Send(i, r);
      ++sent;
    }
    if (round % 8 == 0) bench.Run(rng() % 40);  // let queues drain and fill unevenly
  }
  ASSERT_NO_THROW(bench.Drain());
  EXPECT_EQ(bench.Answered(), sent);
  if (dram) {
    ExpectClean(bench);
    EXPECT_GT(bench.bus().TotalStats().refreshes, 0u);
  } else {
    EXPECT_EQ(bench.sim()->error, 0);
    EXPECT_EQ(bench.bus().TotalStats().activates + bench.bus().TotalStats().reads, 0u);
  }
}

TYPED_TEST(HbmTest, RandomTrafficFromThreeRequestersMatchesTheReference) {
  RandomTraffic<typename TestFixture::Bench::Model>(this->variant_, true);
}

// The same traffic with on-chip RAM channels (BACKEND = 1), the FPGA configuration without DRAM.
TEST(HbmBramTest, RandomTrafficFromThreeRequestersMatchesTheReference) {
  RandomTraffic<Vvl_hbm_c2_bram>({2, 8, 1u << 20}, false);
}

TYPED_TEST(HbmTest, RefreshKeepsItsIntervalWhetherIdleOrBusy) {
  DramConfig timing;
  timing.t_refi = 300;
  timing.t_rfc = 40;
  typename TestFixture::Bench bench(this->variant_, timing, this->Traced());
  bench.Run(10 * timing.t_refi);
  for (unsigned c = 0; c < this->variant_.channels; ++c) {
    EXPECT_GE(bench.bus().Device(c).Stats().refreshes, 9u) << "channel " << c;
    EXPECT_LE(bench.bus().Device(c).Stats().refreshes, 10u) << "channel " << c;
  }
  // Busy: a refresh interrupts a stream of open rows (banks must be precharged first).
  for (unsigned n = 0; n < 2000; ++n) bench.Send(n % 3, {n % 2 == 0, 32ull * n, {}, 0xffffffffu});
  ASSERT_NO_THROW(bench.Drain());
  ExpectClean(bench);
}

TYPED_TEST(HbmTest, RowConflictsPrechargeAndActivateAndHitsAreServedFirst) {
  // Same channel, bank group, bank and column; rows 0 and 1 alternate: a bank holds 16 x 1 KiB
  // per row in every channel, so the next row starts 16 KiB x channels further.
  const std::uint64_t row_stride = 16 * 1024 * this->variant_.channels;
  {
    // One at a time: every read finds the other row open.
    typename TestFixture::Bench bench(this->variant_, DramConfig{}, this->Traced());
    for (unsigned n = 0; n < 40; ++n) {
      bench.Send(0, {n % 3 == 0, (n % 2) * row_stride, {}, 0xffffffffu});
      ASSERT_NO_THROW(bench.Drain());
    }
    const auto stats = bench.bus().TotalStats();
    EXPECT_EQ(stats.reads + stats.writes, 40u);
    EXPECT_EQ(stats.activates, 40u);
    EXPECT_EQ(stats.precharges, 39u);
    ExpectClean(bench);
  }
  {
    // All queued at once: first-ready serves the open row's requests before switching.
    typename TestFixture::Bench bench(this->variant_, DramConfig{}, this->Traced());
    for (unsigned n = 0; n < 40; ++n) bench.Send(0, {false, (n % 2) * row_stride, {}, 0});
    ASSERT_NO_THROW(bench.Drain());
    EXPECT_LE(bench.bus().TotalStats().activates, 10u);
    ExpectClean(bench);
  }
}

TYPED_TEST(HbmTest, SequentialWordsRotateBankGroupsAndPayOnlyTccdS) {
  DramConfig timing;
  timing.t_refi = 60000;  // keep refresh out of the measurement
  timing.t_ccd_s = 2;
  timing.t_ccd_l = 6;
  // 256 reads inside one channel's open rows: first sequential (bank groups rotate), then all
  // in one bank group (stride of four words).
  auto cycles_for = [&](std::uint64_t stride_words) {
    typename TestFixture::Bench bench(this->variant_, timing, this->Traced());
    const std::uint64_t block = 1ull << this->variant_.interleave_log2;
    for (unsigned n = 0; n < 128; ++n) {
      // Stay in channel 0: skip the other channels' blocks.
      const std::uint64_t offset = n * stride_words * 32;
      const std::uint64_t address =
          (offset / block) * block * this->variant_.channels + offset % block;
      bench.Send(0, {false, address, {}, 0});
    }
    const std::uint64_t start = bench.sim().Cycle();
    bench.Drain();
    ExpectClean(bench);
    return bench.sim().Cycle() - start;
  };
  const auto sequential = cycles_for(1);
  const auto same_group = cycles_for(4);
  EXPECT_LT(sequential, 128 * 2 + 120);
  EXPECT_GE(same_group, 128 * 6);
}

TYPED_TEST(HbmTest, BackPressureLosesNothing) {
  DramConfig timing;
  timing.t_ccd_s = timing.t_ccd_l = 16;  // a slow channel: its queue fills
  typename TestFixture::Bench bench(this->variant_, timing, this->Traced());
  const std::uint64_t channel_stride = 1ull << this->variant_.interleave_log2;
  for (unsigned n = 0; n < 300; ++n) {
    const std::uint64_t address = (n * channel_stride * this->variant_.channels +
                                   32 * (n % 8)) % this->variant_.memory_bytes;
    bench.Send(n % 3, {n % 3 == 1, address, {static_cast<std::uint8_t>(n)}, 0xffffffffu});
  }
  ASSERT_NO_THROW(bench.Drain());
  EXPECT_GT(bench.BlockedCycles(), 100u);
  EXPECT_EQ(bench.Answered(), 300u);
  ExpectClean(bench);
}

TYPED_TEST(HbmTest, StarvationBoundServesAnOldMissDespiteAStreamOfHits) {
  DramConfig timing;
  timing.starvation_cycles = 64;
  typename TestFixture::Bench bench(this->variant_, timing, this->Traced());
  const std::uint64_t row_stride = 16 * 1024 * this->variant_.channels;
  // Open row 0 and keep hitting it; then a miss to row 1 of the same bank joins the queue.
  for (unsigned n = 0; n < 600; ++n) bench.Send(0, {false, 0, {}, 0});
  bench.Run(40);
  bench.Send(1, {false, row_stride, {}, 0});
  ASSERT_NO_THROW(bench.Drain());
  ExpectClean(bench);
  // The miss was answered long before the 600 hits ahead of it in the other queue were done.
  ASSERT_EQ(bench.Latencies(1).size(), 1u);
  EXPECT_LT(bench.Latencies(1)[0], 400u);
  EXPECT_GT(bench.Latencies(1)[0], 64u);  // it did wait for the bound: hits went first
}

TYPED_TEST(HbmTest, RefusedAddressesAnswerWithAnErrorAndWriteNothing) {
  typename TestFixture::Bench bench(this->variant_, DramConfig{}, this->Traced());
  const std::uint64_t size = this->variant_.memory_bytes;
  Word ones;
  ones.fill(0xff);
  const std::uint64_t bad[] = {size, size + 32 * 5, (1ull << 47), 0x40 + 4, 0xffffffffffe0ull};
  for (std::uint64_t address : bad) {
    bench.Send(0, {true, address, ones, 0xffffffffu});
    bench.Send(1, {false, 0x40, {}, 0});  // legal traffic in between keeps its order
  }
  bench.Send(2, {false, size - 32, {}, 0});  // the last word is legal
  ASSERT_NO_THROW(bench.Drain());
  EXPECT_EQ(bench.Refused(), std::size(bad));
  EXPECT_EQ(bench.bus().TotalStats().writes, 0u);  // nothing reached a DRAM
  EXPECT_EQ(bench.sim()->error, 1);
  EXPECT_EQ(bench.sim()->error_addr, size);  // the first refused address
  bench.Finish();
  EXPECT_EQ(bench.bus().ViolationCount(), 0u) << bench.bus().Report();
}

}  // namespace
}  // namespace systole::rtl::hbm
