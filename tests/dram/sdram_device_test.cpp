// SdramDevice against hand-timed pin sequences: the legal power-up sequence and bursts store and
// return data with no violation; every rule broken on purpose is reported under its own name
// (and only it), and the same command one cycle later is legal.
#include "sim/dram/sdram_device.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace systole::dram {
namespace sdram_device_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using Cmd = SdramDevice::Cmd;

// Short power-up and refresh windows so that tests stay small; the intervals are the -7 grade's
// at 143 MHz (tRCD 3, tRP 3, tRC 9, tRAS 6, tRRD 2, tWR 2, tMRD 2, tRFC 9).
SdramTiming TestTiming() {
  SdramTiming t = SdramTiming::Grade7(143.0);
  t.t_init = 10;
  t.t_ref = 100000;
  t.refresh_rows = 4;
  t.t_rc = 10;  // one more than tRAS + tRP, so that tRC can be broken alone
  return t;
}

SdramPins Pins(Cmd cmd, unsigned ba = 0, unsigned a = 0) {
  SdramPins p;
  p.cs_n = cmd == Cmd::kInhibit;
  switch (cmd) {
    case Cmd::kInhibit:
    case Cmd::kNop: break;
    case Cmd::kActivate: p.ras_n = false; break;
    case Cmd::kRead: p.cas_n = false; break;
    case Cmd::kWrite: p.cas_n = false; p.we_n = false; break;
    case Cmd::kPrecharge: p.ras_n = false; p.we_n = false; break;
    case Cmd::kRefresh: p.ras_n = false; p.cas_n = false; break;
    case Cmd::kMode: p.ras_n = false; p.cas_n = false; p.we_n = false; break;
    case Cmd::kBurstStop: p.we_n = false; break;
  }
  p.ba = ba;
  p.a = a;
  return p;
}

constexpr unsigned kModeBl8Cl2 = 0x23;  // A[2:0] = 3 (BL 8), sequential, A[6:4] = 2 (CL 2)
constexpr unsigned kA10 = 1u << 10;

class SdramDeviceTest : public ::testing::Test {
 public:
  SdramTiming timing_ = TestTiming();
  SdramDevice dev_{timing_, {}, "sdram"};

  void At(std::uint64_t cycle, const SdramPins& pins) { dev_.Edge(cycle, pins); }
  void At(std::uint64_t cycle, Cmd cmd, unsigned ba = 0, unsigned a = 0) {
    dev_.Edge(cycle, Pins(cmd, ba, a));
  }
  // The datasheet's sequence, ending at cycle 40 (edge 0 starts the 10 NOP cycles).
  std::uint64_t PowerUp(unsigned mode = kModeBl8Cl2) {
    At(0, Cmd::kNop);
    At(10, Cmd::kPrecharge, 0, kA10);
    At(13, Cmd::kRefresh);
    At(22, Cmd::kRefresh);
    At(31, Cmd::kMode, 0, mode);
    return 33;  // tMRD later
  }
  // A write burst of 8 beats from `cycle`, beat i = base + i.
  void WriteBurst(std::uint64_t cycle, unsigned bank, unsigned col, std::uint16_t base,
                  unsigned dqm_beat = 99, unsigned dqm = 0) {
    for (unsigned i = 0; i < 8; ++i) {
      SdramPins p = i == 0 ? Pins(Cmd::kWrite, bank, col) : Pins(Cmd::kNop);
      p.dq = static_cast<std::uint16_t>(base + i);
      p.dq_oe = true;
      p.dqm = i == dqm_beat ? dqm : 0;
      At(cycle + i, p);
    }
  }
  std::vector<std::string> Rules() const {
    std::vector<std::string> rules;
    for (const auto& v : dev_.Violations()) rules.push_back(v.rule);
    return rules;
  }
};

TEST_F(SdramDeviceTest, Grade7CyclesAt20And143MHz) {
  const SdramTiming slow = SdramTiming::Grade7(20.0);  // 50 ns: every interval is one or two
  EXPECT_EQ(slow.t_rcd, 1u);
  EXPECT_EQ(slow.t_rc, 2u);
  EXPECT_EQ(slow.t_mrd, 2u);
  EXPECT_EQ(slow.t_init, 4000u);
  EXPECT_EQ(slow.t_ref, 1280000u);
  const SdramTiming fast = SdramTiming::Grade7(143.0);  // 7 ns
  EXPECT_EQ(fast.t_rcd, 3u);
  EXPECT_EQ(fast.t_rc, 9u);
  EXPECT_EQ(fast.t_ras, 6u);
  EXPECT_EQ(fast.t_rrd, 2u);
  EXPECT_EQ(fast.t_ras_max, 14300u);
}

TEST_F(SdramDeviceTest, LegalSequenceStoresAndReturnsBursts) {
  const std::uint64_t t = PowerUp();
  At(t, Cmd::kActivate, 1, 77);
  WriteBurst(t + 3, 1, 8, 0x1000, 2, 0x2);  // tRCD; beat 2's upper byte masked
  At(t + 13, Cmd::kRead, 1, 8);             // after the burst
  EXPECT_THAT(Rules(), IsEmpty()) << dev_.Report();
  EXPECT_EQ(dev_.ReadDrive(t + 14).bytes, 0u);
  for (unsigned i = 0; i < 8; ++i) {
    const SdramDrive d = dev_.ReadDrive(t + 15 + i);  // CL 2
    EXPECT_EQ(d.bytes, 3u) << i;
    EXPECT_EQ(d.data, i == 2 ? 0x0002 : 0x1000 + i) << i;
    At(t + 15 + i, Cmd::kNop);
  }
  EXPECT_EQ(dev_.ReadDrive(t + 23).bytes, 0u);
  At(t + 23, Cmd::kPrecharge, 1);
  At(t + 26, Cmd::kActivate, 1, 78);
  EXPECT_THAT(Rules(), IsEmpty()) << dev_.Report();
  EXPECT_EQ(dev_.Peek(1, 77, 15), 0x1007);
  EXPECT_EQ(dev_.Stats().write_beats, 8u);
}

TEST_F(SdramDeviceTest, BurstWrapsWithinItsBlockAndReadsAreInterrupted) {
  const std::uint64_t t = PowerUp();
  At(t, Cmd::kActivate, 0, 5);
  WriteBurst(t + 3, 0, 16, 0x100);   // columns 16..23
  At(t + 11, Cmd::kRead, 0, 21);     // sequential from 21 wraps: 21 22 23 16 ...
  At(t + 13, Cmd::kRead, 0, 16);     // interrupts: its data from t + 15, the first's ends
  EXPECT_EQ(dev_.ReadDrive(t + 13).data, 0x105);
  EXPECT_EQ(dev_.ReadDrive(t + 14).data, 0x106);
  EXPECT_EQ(dev_.ReadDrive(t + 15).data, 0x100);
  EXPECT_EQ(dev_.ReadDrive(t + 16).data, 0x101);
  EXPECT_THAT(Rules(), IsEmpty()) << dev_.Report();
}

TEST_F(SdramDeviceTest, ReadDqmMasksTwoEdgesLater) {
  const std::uint64_t t = PowerUp();
  At(t, Cmd::kActivate, 0, 5);
  WriteBurst(t + 3, 0, 0, 0x0);
  At(t + 11, Cmd::kRead, 0, 0);
  SdramPins masked = Pins(Cmd::kNop);
  masked.dqm = 1;
  At(t + 12, masked);                           // masks the lower byte of the beat at t + 14
  EXPECT_EQ(dev_.ReadDrive(t + 13).bytes, 3u);  // beat 0 (CL 2)
  At(t + 13, Cmd::kNop);
  EXPECT_EQ(dev_.ReadDrive(t + 14).bytes, 2u);
  EXPECT_THAT(Rules(), IsEmpty()) << dev_.Report();
}

TEST_F(SdramDeviceTest, PrechargeTruncatesAReadBurstAfterCasLatency) {
  const std::uint64_t t = PowerUp();
  At(t, Cmd::kActivate, 0, 5);
  At(t + 6, Cmd::kRead, 0, 0);
  At(t + 9, Cmd::kPrecharge, 0);  // data up to t + 10 (= PRE + CL - 1), none from t + 11
  EXPECT_EQ(dev_.ReadDrive(t + 10).bytes, 3u);
  EXPECT_EQ(dev_.ReadDrive(t + 11).bytes, 0u);
  EXPECT_THAT(Rules(), IsEmpty()) << dev_.Report();
}

// One command broken by one cycle: exactly `rule` is reported.
struct SdramRuleCase {
  const char* rule;
  // the sequence after PowerUp (at t); `late` shifts the last command one cycle later
  void (*run)(SdramDeviceTest&, std::uint64_t t, unsigned late);
};

class SdramRuleTest : public SdramDeviceTest, public ::testing::WithParamInterface<SdramRuleCase> {};

TEST_P(SdramRuleTest, BrokenByOneCycleIsNamedAndOneLaterIsLegal) {
  const SdramRuleCase& c = GetParam();
  {
    const std::uint64_t t = PowerUp();
    c.run(*this, t, 0);
    EXPECT_THAT(Rules(), ElementsAre(c.rule)) << dev_.Report();
  }
  SdramDevice fresh(timing_, {}, "sdram");
  std::swap(dev_, fresh);
  const std::uint64_t t = PowerUp();
  c.run(*this, t, 1);
  EXPECT_THAT(Rules(), IsEmpty()) << dev_.Report();
}

INSTANTIATE_TEST_SUITE_P(
    Rules, SdramRuleTest,
    ::testing::Values(
        SdramRuleCase{"tRCD", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   b.At(t0, Cmd::kActivate, 0, 1);
                   b.At(t0 + 2 + late, Cmd::kRead, 0, 0);
                 }},
        SdramRuleCase{"tRAS", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   b.At(t0, Cmd::kActivate, 0, 1);
                   b.At(t0 + 5 + late, Cmd::kPrecharge, 0);
                 }},
        SdramRuleCase{"tRP", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   auto& s = b;
                   s.At(t0, Cmd::kActivate, 0, 1);
                   s.At(t0 + 20, Cmd::kPrecharge, 0);
                   s.At(t0 + 22 + late, Cmd::kActivate, 0, 2);
                 }},
        SdramRuleCase{"tRC", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   auto& s = b;
                   s.At(t0, Cmd::kActivate, 0, 1);
                   s.At(t0 + 6, Cmd::kPrecharge, 0);           // tRAS
                   s.At(t0 + 9 + late, Cmd::kActivate, 0, 2);  // tRP met at 9, tRC at 10
                 }},
        SdramRuleCase{"tRRD", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   auto& s = b;
                   s.At(t0, Cmd::kActivate, 0, 1);
                   s.At(t0 + 1 + late, Cmd::kActivate, 1, 1);
                 }},
        SdramRuleCase{"tWR", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   auto& s = b;
                   s.At(t0, Cmd::kActivate, 0, 1);
                   s.WriteBurst(t0 + 3, 0, 0, 0);      // last beat at t0 + 10
                   s.At(t0 + 11 + late, Cmd::kPrecharge, 0);
                 }},
        SdramRuleCase{"tMRD", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   b.At(t0 - 1 + late, Cmd::kActivate, 0, 1);
                 }},
        SdramRuleCase{"tRFC", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   auto& s = b;
                   s.At(t0, Cmd::kRefresh);
                   s.At(t0 + 8 + late, Cmd::kActivate, 0, 1);
                 }},
        SdramRuleCase{"bank closed", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   auto& s = b;
                   if (late) s.At(t0, Cmd::kActivate, 2, 1);
                   for (unsigned i = 0; i < 8; ++i) {  // a driven write burst
                     SdramPins p = Pins(i == 0 ? Cmd::kWrite : Cmd::kNop, 2, 0);
                     p.dq_oe = true;
                     s.At(t0 + 3 + i, p);
                   }
                 }},
        SdramRuleCase{"bank open", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   auto& s = b;
                   s.At(t0, Cmd::kActivate, 3, 1);
                   if (late) s.At(t0 + 6, Cmd::kPrecharge, 3);
                   s.At(t0 + 10, Cmd::kRefresh);
                 }},
        SdramRuleCase{"DQ", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   auto& s = b;
                   s.At(t0, Cmd::kActivate, 0, 1);
                   s.At(t0 + 3, Cmd::kRead, 0, 0);  // drives t0 + 5 .. t0 + 12
                   SdramPins p = Pins(Cmd::kNop);
                   p.dq_oe = true;                 // the controller drives at t0 + 12: contention
                   s.At(t0 + 12 + late, p);
                 }},
        SdramRuleCase{"auto-precharge", [](SdramDeviceTest& b, std::uint64_t t0, unsigned late) {
                   auto& s = b;
                   s.At(t0, Cmd::kActivate, 0, 1);
                   s.At(t0 + 3, Cmd::kRead, 0, kA10);  // precharges at t0 + 11 (end of burst)
                   // the next ACT to the bank: legal at t0 + 14 (tRP after the auto-precharge)
                   s.At(late ? t0 + 14 : t0 + 5, late ? Cmd::kActivate : Cmd::kRead, 0, late ? 2 : 0);
                 }}),
    [](const ::testing::TestParamInfo<SdramRuleCase>& param_info) {
      std::string name = param_info.param.rule;
      for (char& ch : name) {
        if (ch == ' ' || ch == '-') ch = '_';
      }
      return name;
    });

TEST_F(SdramDeviceTest, PowerUpSequenceIsEnforced) {
  At(0, Cmd::kNop);
  At(9, Cmd::kPrecharge, 0, kA10);  // one cycle before the 10 NOP cycles have passed
  EXPECT_THAT(Rules(), ElementsAre("power-up"));
  At(10, Cmd::kRefresh);            // REF before PRECHARGE ALL
  EXPECT_THAT(Rules(), ElementsAre("power-up", "power-up"));
  At(19, Cmd::kPrecharge, 0, kA10);
  At(22, Cmd::kRefresh);
  At(31, Cmd::kMode, 0, kModeBl8Cl2);
  EXPECT_THAT(Rules(), ElementsAre("power-up", "power-up")) << dev_.Report();
  // MRS after one REF only
  SdramDevice other(timing_, {}, "other");
  other.Edge(0, Pins(Cmd::kNop));
  other.Edge(10, Pins(Cmd::kPrecharge, 0, kA10));
  other.Edge(13, Pins(Cmd::kRefresh));
  other.Edge(22, Pins(Cmd::kMode, 0, kModeBl8Cl2));  // one REF only
  other.Edge(40, Pins(Cmd::kActivate, 0, 1));        // now fine: the mode is set
  ASSERT_EQ(other.Violations().size(), 1u) << other.Report();
  EXPECT_EQ(other.Violations()[0].rule, "power-up");
}

TEST_F(SdramDeviceTest, AccessBeforeLoadModeRegisterIsAModeViolation) {
  At(0, Cmd::kNop);
  At(10, Cmd::kPrecharge, 0, kA10);
  At(13, Cmd::kRefresh);
  At(22, Cmd::kRefresh);
  At(31, Cmd::kActivate, 0, 1);
  EXPECT_THAT(Rules(), ElementsAre("mode")) << dev_.Report();
}

TEST_F(SdramDeviceTest, UnsupportedModeValuesAreNamed) {
  At(0, Cmd::kNop);
  At(10, Cmd::kPrecharge, 0, kA10);
  At(13, Cmd::kRefresh);
  At(22, Cmd::kRefresh);
  At(31, Cmd::kMode, 0, 0x13);  // CL 1
  At(33, Cmd::kMode, 0, 0x24);  // reserved burst length 4 (code 100)
  At(35, Cmd::kMode, 0, 0x1a3);  // test mode bits A[8:7]
  EXPECT_THAT(Rules(), ElementsAre("mode", "mode", "mode")) << dev_.Report();
}

TEST_F(SdramDeviceTest, RowOpenBeyondTrasMaxIsNamed) {
  const std::uint64_t t = PowerUp();
  At(t, Cmd::kActivate, 0, 1);
  At(t + 14300, Cmd::kNop);
  EXPECT_THAT(Rules(), IsEmpty());
  At(t + 14301, Cmd::kNop);
  EXPECT_THAT(Rules(), ElementsAre("tRASmax")) << dev_.Report();
}

TEST_F(SdramDeviceTest, EveryRowRefreshedWithinTref) {
  // 4 refresh rows per t_ref = 100000 cycles: REFs every 25000 are fine; then one row waits
  // 100001 cycles.
  PowerUp();  // every row's 64 ms start at the MRS (31); the next REF is row 2's
  std::uint64_t t = 22;
  for (int i = 0; i < 6; ++i) {
    t += 25000;
    At(t, Cmd::kRefresh);
  }
  EXPECT_THAT(Rules(), IsEmpty()) << dev_.Report();
  // the next row to refresh (0) was refreshed at t - 75000: due by t + 25000 (rows 1 and 2,
  // last refreshed at 31, were refreshed at 100022 and 125022: within 100000 of it)
  At(t + 25000, Cmd::kNop);
  EXPECT_THAT(Rules(), IsEmpty()) << dev_.Report();
  dev_.Finish(t + 25001);
  EXPECT_THAT(Rules(), ElementsAre("tREF")) << dev_.Report();
}

TEST_F(SdramDeviceTest, RefreshGapLimitWhenAsked) {
  timing_.refresh_gap_limit = 50;
  SdramDevice dev(timing_, {}, "gap");
  std::swap(dev_, dev);
  const std::uint64_t t = PowerUp();  // last REF at 22
  At(t + 39, Cmd::kRefresh);          // 50 after it
  At(t + 90, Cmd::kNop);              // 51 after
  EXPECT_THAT(Rules(), ElementsAre("tREFI")) << dev_.Report();
}

TEST_F(SdramDeviceTest, WriteBeatNotDrivenIsNamedUnlessMasked) {
  const std::uint64_t t = PowerUp();
  At(t, Cmd::kActivate, 0, 1);
  SdramPins p = Pins(Cmd::kWrite, 0, 0);
  p.dq_oe = true;
  At(t + 3, p);
  SdramPins masked = Pins(Cmd::kNop);
  masked.dqm = 3;  // beat 1 masked: not driving it is fine
  At(t + 4, masked);
  At(t + 5, Cmd::kNop);  // beat 2: neither driven nor masked
  EXPECT_THAT(Rules(), ElementsAre("DQ")) << dev_.Report();
}

TEST_F(SdramDeviceTest, CkeLowAfterPowerUpIsNamed) {
  const std::uint64_t t = PowerUp();
  SdramPins p = Pins(Cmd::kNop);
  p.cke = false;
  At(t, p);
  EXPECT_THAT(Rules(), ElementsAre("CKE")) << dev_.Report();
}

TEST_F(SdramDeviceTest, ColumnOutsideTheRowIsNamed) {
  const std::uint64_t t = PowerUp();
  At(t, Cmd::kActivate, 0, 1);
  At(t + 3, Cmd::kRead, 0, 512);  // 512 columns: 0..511
  EXPECT_THAT(Rules(), ElementsAre("address")) << dev_.Report();
}

}  // namespace sdram_device_test
}  // namespace systole::dram
