// MemoryTimingModel on its own: the closed forms it must reproduce for simple streams (one
// read's latency, t_burst per word when bank groups rotate, t_ccd_l inside one group, the cost
// of refresh, the port-limited peak). Its agreement with the RTL is checked in
// tests/rtl/hbm/hbm_perf_test.cpp.
#include "sim/timing/memory_timing.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace systole::model {
namespace {

Config Machine(unsigned channels) {
  Config config = LoadConfig("tiny");
  config.memory_channels = channels;
  config.memory_bytes = 1u << 20;
  return config;
}

std::vector<MemoryAccess> Stream(std::uint64_t n, std::uint64_t stride) {
  std::vector<MemoryAccess> accesses;
  for (std::uint64_t i = 0; i < n; ++i) accesses.push_back({false, stride * i % (1u << 20)});
  return accesses;
}

TEST(MemoryTimingModel, OneReadTakesActivateReadAndTheResponsePath) {
  const Config machine = Machine(1);
  const auto result = MemoryTimingModel(machine).Run(Stream(1, 32));
  // Accepted at 0, queued at 1 (ACT), RD after t_rcd, data after t_cl, two cycles to the port.
  EXPECT_EQ(result.latencies.at(0), 1 + machine.dram.t_rcd + machine.dram.t_cl + 2);
}

TEST(MemoryTimingModel, SequentialWordsCostTBurstEachAndOneBankGroupCostsTccdL) {
  Config machine = Machine(1);
  machine.dram.t_refi = 65535;  // no refresh in 3000 cycles
  const MemoryTimingModel model(machine);
  const auto sequential = model.Run(Stream(1000, 32)).cycles;
  EXPECT_GE(sequential, 1000 * machine.dram.t_burst);
  EXPECT_LE(sequential, 1000 * machine.dram.t_burst + 60);
  const auto one_group = model.Run(Stream(1000, 32 * machine.dram.bank_groups)).cycles;
  EXPECT_GE(one_group, 1000 * machine.dram.t_ccd_l);
  EXPECT_LE(one_group, 1000 * machine.dram.t_ccd_l + 120);
}

TEST(MemoryTimingModel, RefreshCostsAboutTrfcPerInterval) {
  Config machine = Machine(1);
  machine.dram.t_refi = 65535;
  const auto without = MemoryTimingModel(machine).Run(Stream(20000, 32)).cycles;
  machine.dram.t_refi = 1000;
  machine.dram.t_rfc = 100;
  const auto with = MemoryTimingModel(machine).Run(Stream(20000, 32)).cycles;
  const double intervals = static_cast<double>(with) / 1000.0;
  EXPECT_GT(static_cast<double>(with - without), intervals * 100);       // at least tRFC each
  EXPECT_LT(static_cast<double>(with - without), intervals * (100 + 80));  // plus PRE/ACT
}

TEST(MemoryTimingModel, PeakIsEveryChannelBusyButAtMostThePort) {
  EXPECT_EQ(MemoryTimingModel(Machine(1)).PeakBytesPerCycle(), 16.0);
  EXPECT_EQ(MemoryTimingModel(Machine(2)).PeakBytesPerCycle(), 32.0);
  EXPECT_EQ(MemoryTimingModel(Machine(4)).PeakBytesPerCycle(), 32.0);
  EXPECT_EQ(MemoryTimingModel(Machine(4)).ChannelPeakBytesPerCycle(), 16.0);
}

TEST(MemoryTimingModel, DmaAccessesCoverEveryTouchedWordOfEveryRow) {
  const auto accesses = MemoryTimingModel::DmaAccesses(0x1010, 0x100, 3, 40, true);
  // Row 0: bytes 0x1010..0x1037 touch words 0x1000 and 0x1020; rows 1 and 2 likewise, 0x100 on.
  const std::vector<std::uint64_t> want = {0x1000, 0x1020, 0x1100, 0x1120, 0x1200, 0x1220};
  ASSERT_EQ(accesses.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(accesses[i].address, want[i]);
    EXPECT_TRUE(accesses[i].write);
  }
  const MemoryTimingModel model(Machine(2));
  EXPECT_EQ(model.DmaCycles(0x1010, 0x100, 3, 40, true), model.Run(accesses).cycles);
  EXPECT_TRUE(MemoryTimingModel::DmaAccesses(0, 32, 4, 0, false).empty());
}

TEST(MemoryTimingModel, EveryAccessIsAnsweredInOrder) {
  const auto result = MemoryTimingModel(Machine(2)).Run(Stream(5000, 4160));
  ASSERT_EQ(result.latencies.size(), 5000u);
  for (auto latency : result.latencies) EXPECT_GT(latency, 0u);
}

}  // namespace
}  // namespace systole::model
