// DramDevice against hand-timed command sequences: a legal sequence stores and returns data with
// no violation; each timing rule broken by one cycle is reported under its own name (and only
// it), and the same command one cycle later is legal.
#include "sim/dram/dram_device.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace systole::dram {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// One device with the default timing and 64 rows per bank, and shorthands to drive it.
struct Bench {
  DramConfig config_;  // the HBM2-like defaults: tRCD 14, tRRD_S 4, tFAW 20, …
  DramDevice dram_{config_, 64, "ch0"};

  void Cmd(std::uint64_t cycle, Command command, std::uint32_t group = 0, std::uint32_t bank = 0,
           std::uint32_t row = 0, std::uint32_t column = 0, std::uint8_t fill = 0,
           std::uint32_t wstrb = 0xffffffffu) {
    CommandWord word;
    word.command = command;
    word.bank_group = group;
    word.bank = bank;
    word.row = row;
    word.column = column;
    word.wdata.fill(fill);
    word.wstrb = wstrb;
    dram_.Issue(cycle, word);
  }
  std::vector<std::string> Rules() const {
    std::vector<std::string> rules;
    for (const auto& v : dram_.Violations()) rules.push_back(v.rule);
    return rules;
  }
};

class DramDeviceTest : public ::testing::Test, public Bench {};

TEST_F(DramDeviceTest, LegalSequenceStoresAndReturnsData) {
  Cmd(0, Command::kActivate, 0, 0, 3);
  Cmd(4, Command::kActivate, 1, 0, 7);                        // tRRD_S after the first
  Cmd(14, Command::kWrite, 0, 0, 3, 5, 0xab, 0x0000ffffu);   // tRCD; half the word
  Cmd(18, Command::kWrite, 1, 0, 7, 1, 0xcd);                 // tRCD of its own ACT
  Cmd(32, Command::kRead, 0, 0, 3, 5);                        // WR + t_wl + t_burst + tWTR
  Cmd(34, Command::kRead, 1, 0, 7, 1);                        // tCCD_S
  Cmd(37, Command::kPrecharge, 0, 0, 3);                      // RD + tRTP, WR + 22, ACT + tRAS
  Cmd(51, Command::kActivate, 0, 0, 4);                       // tRP
  EXPECT_THAT(Rules(), IsEmpty()) << dram_.Report();
  EXPECT_FALSE(dram_.DataAt(45).has_value());
  const auto first = dram_.DataAt(46);  // RD at 32 + tCL
  ASSERT_TRUE(first.has_value());
  for (unsigned b = 0; b < kWordBytes; ++b) EXPECT_EQ((*first)[b], b < 16 ? 0xab : 0) << b;
  const auto second = dram_.DataAt(48);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ((*second)[31], 0xcd);
  EXPECT_EQ(dram_.Peek(0, 0, 3, 5), *first);
  EXPECT_EQ(dram_.Stats().activates, 3u);
  dram_.Finish(60);
  EXPECT_THAT(Rules(), IsEmpty()) << dram_.Report();
}

// Each case: a preamble, then one command `early` cycles too soon. The same command at the
// legal cycle must pass (checked on a fresh device).
struct RuleCase {
  std::string rule;
  std::function<void(Bench&)> preamble;
  std::uint64_t legal_cycle;
  std::function<void(Bench&, std::uint64_t)> command;
};

TEST(DramRuleTest, EachRuleIsReportedByNameOneCycleEarlyAndNotOnTime) {
  using C = Command;
  const std::vector<RuleCase> cases = {
      {"tRCD", [](auto& t) { t.Cmd(0, C::kActivate, 0, 0, 1); }, 14,
       [](auto& t, auto at) { t.Cmd(at, C::kRead, 0, 0, 1, 0); }},
      {"tRP", [](auto& t) { t.Cmd(0, C::kActivate, 0, 0, 1); t.Cmd(40, C::kPrecharge, 0, 0); }, 54,
       [](auto& t, auto at) { t.Cmd(at, C::kActivate, 0, 0, 2); }},
      {"tRAS", [](auto& t) { t.Cmd(0, C::kActivate, 0, 0, 1); }, 33,
       [](auto& t, auto at) { t.Cmd(at, C::kPrecharge, 0, 0); }},
      {"tRRD_S", [](auto& t) { t.Cmd(0, C::kActivate, 0, 0, 1); }, 4,
       [](auto& t, auto at) { t.Cmd(at, C::kActivate, 1, 0, 1); }},
      {"tRRD_L", [](auto& t) { t.Cmd(0, C::kActivate, 2, 0, 1); }, 6,
       [](auto& t, auto at) { t.Cmd(at, C::kActivate, 2, 1, 1); }},
      {"tFAW",
       [](auto& t) {
         for (unsigned g = 0; g < 4; ++g) t.Cmd(4 * g, C::kActivate, g, 0, 1);
       },
       20, [](auto& t, auto at) { t.Cmd(at, C::kActivate, 0, 1, 1); }},
      {"tCCD_S",
       [](auto& t) {
         t.Cmd(0, C::kActivate, 0, 0, 1);
         t.Cmd(4, C::kActivate, 1, 0, 1);
         t.Cmd(20, C::kRead, 0, 0, 1, 0);
       },
       22, [](auto& t, auto at) { t.Cmd(at, C::kRead, 1, 0, 1, 0); }},
      {"tCCD_L",
       [](auto& t) { t.Cmd(0, C::kActivate, 0, 0, 1); t.Cmd(14, C::kRead, 0, 0, 1, 0); }, 18,
       [](auto& t, auto at) { t.Cmd(at, C::kRead, 0, 0, 1, 1); }},
      {"tWTR",
       [](auto& t) { t.Cmd(0, C::kActivate, 0, 0, 1); t.Cmd(14, C::kWrite, 0, 0, 1, 0); }, 28,
       [](auto& t, auto at) { t.Cmd(at, C::kRead, 0, 0, 1, 1); }},
      {"tRTW",
       [](auto& t) { t.Cmd(0, C::kActivate, 0, 0, 1); t.Cmd(14, C::kRead, 0, 0, 1, 0); }, 28,
       [](auto& t, auto at) { t.Cmd(at, C::kWrite, 0, 0, 1, 1); }},
      {"tRTP",
       [](auto& t) { t.Cmd(0, C::kActivate, 0, 0, 1); t.Cmd(40, C::kRead, 0, 0, 1, 0); }, 45,
       [](auto& t, auto at) { t.Cmd(at, C::kPrecharge, 0, 0); }},
      {"tWR",
       [](auto& t) { t.Cmd(0, C::kActivate, 0, 0, 1); t.Cmd(40, C::kWrite, 0, 0, 1, 0); }, 62,
       [](auto& t, auto at) { t.Cmd(at, C::kPrecharge, 0, 0); }},
      {"tRFC", [](auto& t) { t.Cmd(100, C::kRefresh); }, 260,
       [](auto& t, auto at) { t.Cmd(at, C::kActivate, 0, 0, 1); }},
      {"tRP",  // REF waits tRP after the last PRE of every bank
       [](auto& t) { t.Cmd(0, C::kActivate, 3, 3, 1); t.Cmd(40, C::kPrecharge, 3, 3); }, 54,
       [](auto& t, auto at) { t.Cmd(at, C::kRefresh); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rule);
    {
      Bench early;
      c.preamble(early);
      ASSERT_THAT(early.Rules(), IsEmpty()) << early.dram_.Report();
      c.command(early, c.legal_cycle - 1);
      EXPECT_THAT(early.Rules(), ElementsAre(c.rule)) << early.dram_.Report();
      ASSERT_FALSE(early.dram_.Violations().empty());
      EXPECT_THAT(early.dram_.Violations()[0].message,
                  HasSubstr("cycle " + std::to_string(c.legal_cycle - 1)));
      EXPECT_EQ(early.dram_.Violations()[0].cycle, c.legal_cycle - 1);
    }
    {
      Bench on_time;
      c.preamble(on_time);
      c.command(on_time, c.legal_cycle);
      EXPECT_THAT(on_time.Rules(), IsEmpty()) << on_time.dram_.Report();
    }
  }
}

TEST_F(DramDeviceTest, StateRulesAreReportedAndTheCommandIgnored) {
  Cmd(0, Command::kWrite, 0, 0, 1, 0, 0x11);  // no row open: nothing may be written
  EXPECT_THAT(Rules(), ElementsAre("bank closed"));
  EXPECT_EQ(dram_.Peek(0, 0, 1, 0), Word{});
  Cmd(10, Command::kActivate, 0, 0, 1);
  Cmd(60, Command::kActivate, 0, 0, 2);  // already open
  Cmd(80, Command::kWrite, 0, 0, 2, 0, 0x22);  // the controller lost track: row 1 is open
  Cmd(90, Command::kRefresh);                  // a bank is open
  EXPECT_THAT(Rules(), ElementsAre("bank closed", "bank open", "row mismatch", "bank open"));
  EXPECT_EQ(dram_.Peek(0, 0, 2, 0), Word{});
}

TEST_F(DramDeviceTest, AddressesOutsideTheDeviceAreRefused) {
  Cmd(0, Command::kActivate, 0, 0, 64);  // 64 rows per bank here
  Cmd(10, Command::kActivate, 4, 0, 0);  // 4 bank groups
  Cmd(20, Command::kActivate, 0, 4, 0);  // 4 banks per group
  EXPECT_THAT(Rules(), ElementsAre("address", "address", "address"));
  EXPECT_EQ(dram_.Stats().activates, 0u);  // none reached a bank
  Cmd(30, Command::kActivate, 0, 0, 63);
  Cmd(44, Command::kRead, 0, 0, 63, 32);  // 1024-byte rows: 32 columns
  EXPECT_THAT(Rules(), ElementsAre("address", "address", "address", "address"));
  EXPECT_FALSE(dram_.DataAt(58).has_value());
}

TEST_F(DramDeviceTest, RefreshMayBePostponedEightIntervalsButNotNine) {
  const std::uint64_t limit = 9 * config_.t_refi;
  Cmd(limit, Command::kRefresh);
  dram_.Finish(limit + limit);
  EXPECT_THAT(Rules(), IsEmpty()) << dram_.Report();
  Cmd(2 * limit + 1, Command::kActivate, 0, 0, 0);
  EXPECT_THAT(Rules(), ElementsAre("tREFI"));
  EXPECT_THAT(dram_.Violations()[0].message, HasSubstr("cycle " + std::to_string(2 * limit + 1)));
}

TEST_F(DramDeviceTest, ReadDataOwedAtTheEndIsReported) {
  Cmd(0, Command::kActivate, 0, 0, 0);
  Cmd(14, Command::kRead, 0, 0, 0, 0);
  dram_.Finish(20);
  EXPECT_THAT(Rules(), ElementsAre("read data"));
}

}  // namespace
}  // namespace systole::dram
