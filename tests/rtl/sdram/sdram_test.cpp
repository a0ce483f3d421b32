// The SDR SDRAM controller (fpga/rtl/systole_sdram_ctrl.sv) under Verilator, the SDRAM chip model
// (sim/dram/sdram_device) on its pins checking every datasheet rule, and a reference memory
// behind its port checking every response: directed tests (power-up, read after write, byte
// strobes, row conflicts, refresh under load, a whole 64 ms refresh window) and randomized
// traffic with printed seeds, at 20 MHz (the ULX3S clock, CL 2, 32 MB) and at 143 MHz (CL 3,
// 64 MB). Every test demands zero violations. The throughput test prints bytes per cycle for
// sequential and random rows (docs/FPGA.md quotes them).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>
#include <iostream>
#include <map>
#include <optional>
#include <random>

#include "Vvl_sdram_143mhz.h"
#include "Vvl_sdram_20mhz.h"
#include "sim/dram/sdram_device.hpp"
#include "sim/rtl/harness.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl::sdram {
namespace {

using dram::SdramDevice;
using dram::SdramDrive;
using dram::SdramGeometry;
using dram::SdramPins;
using dram::SdramTiming;
using Row = std::array<std::uint8_t, 32>;

struct Request {
  bool write = false;
  std::uint64_t address = 0;
  Row wdata{};
  std::uint32_t wstrb = 0xffffffffu;
};

template <class M, unsigned Mhz, unsigned Cl, unsigned ColBits>
struct Build {
  using Model = M;
  static constexpr unsigned kMhz = Mhz;
  static constexpr unsigned kCl = Cl;
  static constexpr unsigned kColBits = ColBits;
  static constexpr std::uint64_t kBytes = std::uint64_t{2} << (13 + 2 + ColBits);
};
using B20 = Build<Vvl_sdram_20mhz, 20, 2, 9>;
using B143 = Build<Vvl_sdram_143mhz, 143, 3, 10>;

// The controller, the chip model on its pins, the reference memory on its port.
template <class B>
class Bench {
 public:
  explicit Bench(const HarnessOptions& options, std::uint64_t seed = 1)
      : sim_("sdram", options), timing_(Timing()), dev_(timing_, Geometry(), "sdram"),
        garbage_(seed) {
    sim_->req_valid = 0;
    sim_->req_write = 0;
    sim_->req_addr = 0;
    sim_->req_wstrb = 0;
    for (unsigned w = 0; w < 8; ++w) sim_->req_wdata[w] = 0;
    sim_->sdram_dq_i = 0;
    sim_.Reset();
  }

  // The chip's intervals, and the controller's refresh cadence as a stricter rule: a REF at
  // least every 64 ms / 8192 + 64 cycles (the longest a request can delay one).
  static SdramTiming Timing() {
    SdramTiming t = SdramTiming::Grade7(B::kMhz);
    t.refresh_gap_limit = static_cast<std::uint64_t>(7.8125 * B::kMhz) + 64;
    return t;
  }
  static SdramGeometry Geometry() { return {.banks = 4, .row_bits = 13, .col_bits = B::kColBits}; }

  // One clock edge: the chip drives DQ, samples the pins; the port's handshakes happen.
  void Step() {
    const SdramDrive drive = dev_.ReadDrive(cycle_);
    // undriven bytes read as noise, so that capturing a beat the chip did not drive shows
    const std::uint16_t noise = static_cast<std::uint16_t>(garbage_());
    std::uint16_t dq = noise;
    if (drive.bytes & 1u) dq = static_cast<std::uint16_t>((dq & 0xff00u) | (drive.data & 0x00ffu));
    if (drive.bytes & 2u) dq = static_cast<std::uint16_t>((dq & 0x00ffu) | (drive.data & 0xff00u));
    sim_->sdram_dq_i = dq;
    if (!queue_.empty()) {
      const Request& r = queue_.front();
      sim_->req_valid = 1;
      sim_->req_write = r.write;
      sim_->req_addr = static_cast<std::uint32_t>(r.address);
      sim_->req_wstrb = r.wstrb;
      for (unsigned w = 0; w < 8; ++w) {
        sim_->req_wdata[w] = std::uint32_t{r.wdata[4 * w]} | std::uint32_t{r.wdata[4 * w + 1]} << 8 |
                             std::uint32_t{r.wdata[4 * w + 2]} << 16 |
                             std::uint32_t{r.wdata[4 * w + 3]} << 24;
      }
    } else {
      sim_->req_valid = 0;
    }
    sim_.Eval();
    SdramPins pins;
    pins.cke = sim_->sdram_cke;
    pins.cs_n = sim_->sdram_cs_n;
    pins.ras_n = sim_->sdram_ras_n;
    pins.cas_n = sim_->sdram_cas_n;
    pins.we_n = sim_->sdram_we_n;
    pins.ba = sim_->sdram_ba;
    pins.a = sim_->sdram_a;
    pins.dq = sim_->sdram_dq_o;
    pins.dq_oe = sim_->sdram_dq_oe;
    pins.dqm = sim_->sdram_dqm;
    dev_.Edge(cycle_, pins);
    if (sim_->rsp_valid) Respond();
    if (sim_->req_valid && sim_->req_ready) Accept();
    sim_.Tick();
    ++cycle_;
  }
  void Run(std::uint64_t cycles) {
    for (std::uint64_t i = 0; i < cycles; ++i) Step();
  }
  void WaitInit() {
    for (std::uint64_t i = 0; i < timing_.t_init + 1000 && !sim_->init_done; ++i) Step();
    if (!sim_->init_done) throw TimeoutError("sdram: no init_done");
  }
  void Send(const Request& r) { queue_.push_back(r); }
  // Runs until every request sent has its response.
  void Drain(std::uint64_t limit = 1000000) {
    for (std::uint64_t i = 0; i < limit; ++i) {
      if (queue_.empty() && expected_.empty()) return;
      Step();
    }
    throw TimeoutError("sdram: requests unanswered");
  }
  void Finish() { dev_.Finish(cycle_); }

  void ExpectClean() {
    Finish();
    EXPECT_EQ(dev_.Violations().size(), 0u) << dev_.Report();
    EXPECT_EQ(mismatches_, 0u) << first_mismatch_;
    EXPECT_EQ(unexpected_, 0u);
  }

  Harness<typename B::Model>& sim() { return sim_; }
  SdramDevice& dev() { return dev_; }
  std::uint64_t Cycle() const { return cycle_; }
  std::uint64_t Answered() const { return answered_; }
  std::uint64_t FirstAccept() const { return first_accept_; }
  std::uint64_t LastResponse() const { return last_response_; }
  const SdramTiming& timing() const { return timing_; }

 private:
  void Accept() {
    const Request r = queue_.front();
    queue_.pop_front();
    if (accepted_++ == 0) first_accept_ = cycle_;
    Row& cell = ref_[r.address];
    if (r.write) {
      for (unsigned b = 0; b < 32; ++b) {
        if ((r.wstrb >> b) & 1u) cell[b] = r.wdata[b];
      }
      expected_.push_back(std::nullopt);
    } else {
      expected_.push_back(std::make_pair(r.address, cell));
    }
  }
  void Respond() {
    ++answered_;
    last_response_ = cycle_;
    if (expected_.empty()) {
      ++unexpected_;
      return;
    }
    const auto e = expected_.front();
    expected_.pop_front();
    if (!e) return;  // a write's acknowledgement
    for (unsigned b = 0; b < 32; ++b) {
      const std::uint8_t got = static_cast<std::uint8_t>(sim_->rsp_rdata[b / 4] >> (8 * (b % 4)));
      if (got != e->second[b]) {
        if (mismatches_++ == 0) {
          first_mismatch_ = "cycle " + std::to_string(cycle_) + ": address 0x" +
                            ToHex(e->first) + " byte " + std::to_string(b) + ": got " +
                            std::to_string(got) + ", want " + std::to_string(e->second[b]);
        }
        break;
      }
    }
  }
  static std::string ToHex(std::uint64_t v) {
    char text[32];
    std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(v));
    return text;
  }

  Harness<typename B::Model> sim_;
  SdramTiming timing_;
  SdramDevice dev_;
  std::mt19937_64 garbage_;
  std::uint64_t cycle_ = 0;
  std::deque<Request> queue_;
  std::deque<std::optional<std::pair<std::uint64_t, Row>>> expected_;
  std::map<std::uint64_t, Row> ref_;  // rows never written are zeros, as in the chip model
  std::uint64_t accepted_ = 0, answered_ = 0, mismatches_ = 0, unexpected_ = 0;
  std::uint64_t first_accept_ = 0, last_response_ = 0;
  std::string first_mismatch_;
};

Row RandomRow(std::mt19937_64& rng) {
  Row r;
  for (auto& b : r) b = static_cast<std::uint8_t>(rng());
  return r;
}

// Address of 32-byte row `index` within (bank, sdram row, column group).
template <class B>
std::uint64_t Address(unsigned bank, unsigned row, unsigned group) {
  return (((std::uint64_t{row} << 2 | bank) << (B::kColBits - 4)) | group) << 5;
}

template <class B>
class SdramCtrlTest : public ::testing::Test {};
using Builds = ::testing::Types<B20, B143>;
TYPED_TEST_SUITE(SdramCtrlTest, Builds);

TYPED_TEST(SdramCtrlTest, PowerUpSequenceThenReadAfterWrite) {
  using B = TypeParam;
  test::Waveform wave;
  Bench<B> bench({.trace_path = wave.Path()});
  bench.WaitInit();
  bench.Run(1);  // the MRS leaves the controller's register as init_done rises
  // 200 us of NOPs, PRECHARGE ALL, two REFs (tRP, tRFC apart), MRS: the model saw them in order
  EXPECT_GE(bench.Cycle(), bench.timing().t_init);
  EXPECT_LE(bench.Cycle(), bench.timing().t_init + 64);
  EXPECT_EQ(bench.dev().Violations().size(), 0u) << bench.dev().Report();
  EXPECT_TRUE(bench.dev().Initialized());
  EXPECT_EQ(bench.dev().Stats().refreshes, 2u);
  std::mt19937_64 rng(7);
  const Row data = RandomRow(rng);
  bench.Send({.write = true, .address = 0x20, .wdata = data});
  bench.Send({.write = false, .address = 0x20});
  bench.Send({.write = false, .address = 0x40});  // never written: zeros in the model
  bench.Drain();
  EXPECT_EQ(bench.Answered(), 3u);
  bench.ExpectClean();
}

TYPED_TEST(SdramCtrlTest, ByteStrobesWriteOnlyTheirBytes) {
  using B = TypeParam;
  test::Waveform wave;
  Bench<B> bench({.trace_path = wave.Path()});
  bench.WaitInit();
  std::mt19937_64 rng(11);
  const std::uint64_t a = Address<B>(2, 100, 3);
  bench.Send({.write = true, .address = a, .wdata = RandomRow(rng)});
  // single bytes, alternate bytes (one DQM bit per beat), whole beats, nothing at all
  for (std::uint32_t strobe : {0x00000001u, 0x80000000u, 0x55555555u, 0xaaaaaaaau, 0x0000ff00u,
                               0xffff0000u, 0x00000000u}) {
    bench.Send({.write = true, .address = a, .wdata = RandomRow(rng), .wstrb = strobe});
    bench.Send({.write = false, .address = a});
  }
  bench.Drain();
  bench.ExpectClean();
}

TYPED_TEST(SdramCtrlTest, RowConflictsInEveryBank) {
  using B = TypeParam;
  test::Waveform wave;
  Bench<B> bench({.trace_path = wave.Path()});
  bench.WaitInit();
  std::mt19937_64 rng(13);
  // two rows of each bank alternately, writes then reads: every access a conflict (PRE + ACT),
  // and the four banks' ACTs close together (tRRD)
  for (unsigned pass = 0; pass < 2; ++pass) {
    for (unsigned i = 0; i < 32; ++i) {
      const unsigned bank = i % 4, row = (i / 4) % 2 == 0 ? 5 : 8191, group = i / 8;
      Request r{.write = pass == 0, .address = Address<B>(bank, row, group)};
      if (r.write) r.wdata = RandomRow(rng);
      bench.Send(r);
    }
  }
  bench.Drain();
  bench.ExpectClean();
  EXPECT_GE(bench.dev().Stats().activates, 60u);
}

TYPED_TEST(SdramCtrlTest, RefreshUnderLoadKeepsItsCadence) {
  using B = TypeParam;
  const std::uint64_t seed = test::Seed();
  Bench<B> bench({}, seed);
  bench.WaitInit();
  std::mt19937_64 rng(seed);
  const std::uint64_t start = bench.Cycle();
  const std::uint64_t refs0 = bench.dev().Stats().refreshes;
  // back-to-back requests for 40 refresh intervals: refreshes must still come every interval
  // (the model's tREFI limit is one interval + 64 cycles)
  const std::uint64_t interval = static_cast<std::uint64_t>(7.8125 * B::kMhz);
  while (bench.Cycle() < start + 40 * interval) {
    for (int i = 0; i < 16; ++i) {
      Request r{.write = rng() % 2 == 0, .address = (rng() % (B::kBytes / 32)) * 32};
      r.wdata = RandomRow(rng);
      bench.Send(r);
    }
    bench.Drain();
  }
  bench.ExpectClean();
  const std::uint64_t refs = bench.dev().Stats().refreshes - refs0;
  EXPECT_GE(refs, 39u);
  EXPECT_LE(refs, 42u);
}

TYPED_TEST(SdramCtrlTest, RandomTrafficMatchesTheReference) {
  using B = TypeParam;
  const std::uint64_t seed = test::Seed();
  test::Waveform wave(false);
  Bench<B> bench({.trace_path = wave.Path(), .seed = seed}, seed);
  bench.WaitInit();
  std::mt19937_64 rng(seed);
  std::uint64_t next = 0;
  for (unsigned i = 0; i < 4000; ++i) {
    Request r;
    r.write = rng() % 2 == 0;
    r.wdata = RandomRow(rng);
    r.wstrb = rng() % 4 == 0 ? static_cast<std::uint32_t>(rng()) : 0xffffffffu;
    switch (rng() % 3) {
      case 0: r.address = (rng() % (B::kBytes / 32)) * 32; break;  // anywhere
      case 1: r.address = Address<B>(rng() % 4, rng() % 3, rng() % 4); break;  // few rows
      default: r.address = next; next = (next + 32) % B::kBytes; break;  // a stream
    }
    bench.Send(r);
    if (rng() % 16 == 0) bench.Run(rng() % 50);  // idle gaps
  }
  bench.Drain();
  EXPECT_EQ(bench.Answered(), 4000u);
  bench.ExpectClean();
}

// Bytes per cycle from the first request taken to the last response, port always busy.
template <class B>
double Throughput(bool write, bool sequential, std::uint64_t seed) {
  Bench<B> bench({}, seed);
  bench.WaitInit();
  std::mt19937_64 rng(seed);
  constexpr unsigned kRequests = 2000;
  for (unsigned i = 0; i < kRequests; ++i) {
    Request r{.write = write};
    r.address = sequential ? std::uint64_t{i} * 32 : (rng() % (B::kBytes / 32)) * 32;
    r.wdata = RandomRow(rng);
    bench.Send(r);
  }
  bench.Drain();
  bench.ExpectClean();
  return 32.0 * kRequests / static_cast<double>(bench.LastResponse() - bench.FirstAccept() + 1);
}

TYPED_TEST(SdramCtrlTest, ThroughputSequentialAndRandomRows) {
  using B = TypeParam;
  const double seq_read = Throughput<B>(false, true, 1);
  const double seq_write = Throughput<B>(true, true, 2);
  const double rnd_read = Throughput<B>(false, false, 3);
  const double rnd_write = Throughput<B>(true, false, 4);
  std::cout << "[ sdram    ] " << B::kMhz << " MHz CL" << B::kCl
            << " bytes/cycle: sequential read " << seq_read << ", sequential write " << seq_write
            << ", random rows read " << rnd_read << ", random rows write " << rnd_write << "\n";
  // the bus moves 2 bytes per cycle at most
  EXPECT_LE(seq_read, 2.0);
  EXPECT_GT(seq_read, 1.5);
  EXPECT_GT(seq_write, 1.5);
  EXPECT_GT(rnd_read, 0.5);
  EXPECT_GT(rnd_write, 0.5);
}

// A whole 64 ms refresh window and more at the board's clock (1.28 M cycles), with traffic now
// and then: the model's tREF rule (every one of the 8192 rows within 64 ms) holds.
TEST(SdramCtrlLongTest, EveryRowRefreshedWithin64msAt20MHz) {
  const std::uint64_t seed = test::Seed();
  Bench<B20> bench({}, seed);
  bench.WaitInit();
  std::mt19937_64 rng(seed);
  const std::uint64_t end = bench.Cycle() + 1400000;
  while (bench.Cycle() < end) {
    Request r{.write = rng() % 2 == 0, .address = (rng() % (B20::kBytes / 32)) * 32};
    r.wdata = RandomRow(rng);
    bench.Send(r);
    bench.Drain();
    bench.Run(rng() % 2000);
  }
  bench.ExpectClean();
  EXPECT_GE(bench.dev().Stats().refreshes, 8192u + 2u);
}

}  // namespace
}  // namespace systole::rtl::sdram
