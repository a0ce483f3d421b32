// rtl/host/systole_uart (8N1 receiver, RX FIFO, transmitter) against its cycle-exact C++
// reference (sim/uart/uart_line.hpp), every output compared every cycle (UartBench), and
// against what was sent: every byte value back to back, a host up to a few per cent off the
// board's baud, framing errors, a break, a glitch, a full RX FIFO, back-to-back transmission,
// and random mixtures of all of them with a printed seed (SYSTOLE_SEED=N replays one).
// Two builds (tests/rtl/params.toml): 4 cycles per bit with a 4-byte FIFO (the fewest the
// receiver allows: 12 Mbaud at 48 MHz) and 23 cycles per bit (odd: half a bit is not exact)
// with a 16-byte FIFO.
#include <gtest/gtest.h>

#include <random>

#include "Vvl_uart_fast.h"
#include "Vvl_uart_slow.h"
#include "tests/rtl/host/uart_bench.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace {

using namespace systole::rtl::test;
using systole::uart::LineFrame;
using Bytes = std::vector<std::uint8_t>;

template <class Model, unsigned Clks, unsigned Depth, unsigned TolerancePermille>
struct Build {
  using M = Model;
  static constexpr unsigned kClks = Clks;    // CLKS_PER_BIT of the build
  static constexpr unsigned kDepth = Depth;  // RX_FIFO_DEPTH of the build
  // A host this far off the board's bit period must still be received without error. With 4
  // cycles per bit the synchronizer's cycle is a quarter of a bit, so less is left for drift.
  static constexpr unsigned kTolerancePermille = TolerancePermille;
};
using Builds = ::testing::Types<Build<Vvl_uart_fast, 4, 4, 20>, Build<Vvl_uart_slow, 23, 16, 35>>;

template <class B>
class UartTest : public ::testing::Test {
 protected:
  using Bench = UartBench<typename B::M>;
  // A bench whose host sends at the board's bit period times (1000 + permille) / 1000.
  std::unique_ptr<Bench> Make(std::uint64_t seed, const Waveform& wave, int permille = 0) {
    return std::make_unique<Bench>(B::kClks, B::kDepth, B::kClks * (1000 + permille), 1000, seed,
                                   wave.Path());
  }
};
TYPED_TEST_SUITE(UartTest, Builds);

Bytes RandomBytes(std::mt19937_64& rng, std::size_t n) {
  Bytes bytes(n);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  return bytes;
}

TYPED_TEST(UartTest, EveryByteValueBackToBack) {
  Waveform wave;
  auto bench = this->Make(Seed(), wave);
  Bytes sent;
  for (unsigned v = 0; v < 256; ++v) {
    bench->host().PushByte(static_cast<std::uint8_t>(v));
    sent.push_back(static_cast<std::uint8_t>(v));
  }
  const std::uint64_t start = bench->Cycle();
  bench->Drain();
  EXPECT_EQ(bench->received(), sent);
  EXPECT_EQ(bench->frame_errors(), 0u);
  // Back to back: the line is busy for exactly 10 bits per byte.
  EXPECT_LE(bench->Cycle() - start, 256ull * 10 * TypeParam::kClks + 8ull * TypeParam::kClks);
}

TYPED_TEST(UartTest, HostFastOrSlowWithinTolerance) {
  const std::uint64_t seed = Seed();
  std::mt19937_64 rng(seed);
  const int t = static_cast<int>(TypeParam::kTolerancePermille);
  for (int permille : {-t, -t / 2, t / 2, t}) {
    SCOPED_TRACE("host bit period off by " + std::to_string(permille) + " per mille");
    Waveform wave(false);
    auto bench = this->Make(seed, wave, permille);
    const Bytes sent = RandomBytes(rng, 64);
    for (std::uint8_t b : sent) bench->host().PushByte(b);
    bench->host().PushByte(0x00);  // all-zero and all-one bytes drift furthest unnoticed
    bench->host().PushByte(0xFF);
    bench->Drain();
    Bytes expected = sent;
    expected.push_back(0x00);
    expected.push_back(0xFF);
    EXPECT_EQ(bench->received(), expected);
    EXPECT_EQ(bench->frame_errors(), 0u);
  }
}

TYPED_TEST(UartTest, FarOffBaudStillMatchesTheReference) {
  // 12 % off: bytes arrive wrong or with framing errors, but the RTL must still do exactly what
  // the reference does (Step throws at the first difference).
  const std::uint64_t seed = Seed();
  std::mt19937_64 rng(seed);
  for (int permille : {-120, 120}) {
    Waveform wave(false);
    auto bench = this->Make(seed, wave, permille);
    for (std::uint8_t b : RandomBytes(rng, 40)) bench->host().PushByte(b);
    bench->Drain();
    EXPECT_GT(bench->frame_errors() + bench->received().size(), 0u);
  }
}

TYPED_TEST(UartTest, FramingErrorDropsTheByteAndRecovers) {
  Waveform wave;
  auto bench = this->Make(Seed(), wave);
  const std::uint64_t bit = TypeParam::kClks;
  bench->host().PushByte(0x41);
  bench->host().Push({.data = 0x42, .stop_low = true});
  bench->host().Push({.data = 0x43, .gap_before = bit});  // a bit of idle line after the error
  bench->host().Push({.data = 0x44, .stop_low = true, .gap_before = 3});
  bench->host().Push({.data = 0x45, .gap_before = 2 * bit});
  bench->Drain();
  EXPECT_EQ(bench->received(), (Bytes{0x41, 0x43, 0x45}));
  EXPECT_EQ(bench->frame_errors(), 2u);
}

TYPED_TEST(UartTest, BreakIsOneFramingError) {
  Waveform wave;
  auto bench = this->Make(Seed(), wave);
  const std::uint64_t bit = TypeParam::kClks;
  bench->host().PushByte(0x5A);
  bench->host().Push({.low_cycles = 40 * bit});  // four frames' worth of low line
  bench->host().Push({.data = 0xA5, .gap_before = bit});
  bench->Drain();
  EXPECT_EQ(bench->received(), (Bytes{0x5A, 0xA5}));
  EXPECT_EQ(bench->frame_errors(), 1u);
}

TYPED_TEST(UartTest, GlitchShorterThanHalfABitIsIgnored) {
  Waveform wave;
  auto bench = this->Make(Seed(), wave);
  const std::uint64_t bit = TypeParam::kClks;
  bench->host().Push({.gap_before = bit, .low_cycles = bit / 2 - 1});
  bench->host().Push({.data = 0x81, .gap_before = 2 * bit});
  bench->Drain();
  EXPECT_EQ(bench->received(), (Bytes{0x81}));
  EXPECT_EQ(bench->frame_errors(), 0u);
}

TYPED_TEST(UartTest, FullFifoDropsAndReportsTheExtraBytes) {
  Waveform wave;
  auto bench = this->Make(Seed(), wave);
  const unsigned depth = TypeParam::kDepth;
  Bytes sent;
  for (unsigned i = 0; i < depth + 3; ++i) {
    sent.push_back(static_cast<std::uint8_t>(0x10 + i));
    bench->host().PushByte(sent.back());
  }
  while (!bench->host().Idle()) bench->Step(false);  // the bridge is busy: nothing taken
  for (unsigned i = 0; i < 4 * TypeParam::kClks; ++i) bench->Step(false);
  EXPECT_EQ(bench->overflows(), 3u);
  EXPECT_TRUE(bench->received().empty());
  bench->Drain();
  EXPECT_EQ(bench->received(), Bytes(sent.begin(), sent.begin() + depth));
  // Room again: the next byte is kept.
  bench->host().PushByte(0xEE);
  bench->Drain();
  EXPECT_EQ(bench->received().back(), 0xEE);
  EXPECT_EQ(bench->overflows(), 3u);
}

TYPED_TEST(UartTest, TransmitsBackToBackWithoutIdleBits) {
  const std::uint64_t seed = Seed();
  Waveform wave;
  auto bench = this->Make(seed, wave);
  std::mt19937_64 rng(seed);
  const Bytes bytes = RandomBytes(rng, 64);
  std::size_t next = 0;
  const std::uint64_t start = bench->Cycle();
  std::uint64_t last_taken = start;
  while (next < bytes.size()) {
    if (bench->Step(true, bytes[next])) {
      ++next;
      last_taken = bench->Cycle();
    }
  }
  // The first byte is taken at once, each next one exactly ten bits later.
  EXPECT_EQ(last_taken - start, 1 + 63ull * 10 * TypeParam::kClks);
  for (unsigned i = 0; i < 12 * TypeParam::kClks; ++i) bench->Step(true);
  EXPECT_EQ(bench->sent(), bytes);
  EXPECT_EQ(bench->tx_line_bytes(), bytes);
}

TYPED_TEST(UartTest, RandomTrafficBothWays) {
  const std::uint64_t seed = Seed();
  std::mt19937_64 rng(seed);
  const std::uint64_t bit = TypeParam::kClks;
  const int t = static_cast<int>(TypeParam::kTolerancePermille);
  for (int round = 0; round < 4; ++round) {
    Waveform wave(false);
    const int permille = static_cast<int>(rng() % (2 * t + 1)) - t;
    auto bench = this->Make(seed + round, wave, permille);
    Bytes good;
    unsigned errors = 0;
    bool after_error = false;
    for (int i = 0; i < 150; ++i) {
      LineFrame frame{.data = static_cast<std::uint8_t>(rng())};
      frame.gap_before = rng() % 3 == 0 ? rng() % (3 * bit) : 0;
      if (after_error) frame.gap_before += bit + 2;  // the line must go high to end an error
      after_error = false;
      const unsigned kind = static_cast<unsigned>(rng() % 100);
      if (kind < 5) {
        frame.stop_low = true;
        ++errors;
        after_error = true;
      } else if (kind < 7) {
        frame.low_cycles = (12 + rng() % 30) * bit;  // a break
        ++errors;
        after_error = true;
      } else if (kind < 10) {
        frame.low_cycles = 1 + rng() % (bit / 2 - 1);  // a glitch
        frame.gap_before += bit;
        after_error = true;  // idle after it too
      } else {
        good.push_back(frame.data);
      }
      bench->host().Push(frame);
    }
    const Bytes to_send = RandomBytes(rng, 40);
    std::size_t next = 0;
    while (!bench->host().Idle() || next < to_send.size()) {
      const bool ready = rng() % 10 < 7;
      std::optional<std::uint8_t> offer;
      if (next < to_send.size() && rng() % 4 != 0) offer = to_send[next];
      if (bench->Step(ready, offer)) ++next;
    }
    bench->Drain(12 * bit);
    EXPECT_EQ(bench->received(), good) << "round " << round << ", " << permille << " per mille";
    EXPECT_EQ(bench->frame_errors(), errors) << "round " << round;
    EXPECT_EQ(bench->overflows(), 0u);
    EXPECT_EQ(bench->tx_line_bytes(), to_send);
  }
}

}  // namespace
