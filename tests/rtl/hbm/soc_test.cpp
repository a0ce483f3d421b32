// The whole core with its HBM controller (rtl/systole_soc.sv) and the DRAM models against the
// golden model: random legal programs (tests/rtl/core/program_generator.hpp) with their code and
// data in device memory must leave exactly the golden model's memory, error state and
// functional counters — now with every cycle count including DRAM behaviour — and the DRAM
// models must see no timing violation. SocSim is the rtl device itself (sim/rtl/device_sim.hpp
// with the hbm backend); a violation must stop it at the broken command (the fake controller
// below breaks tRCD on purpose).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "Vvl_soc_tiny.h"
#include "arch/isa/isa.hpp"
#include "arch/regs/regmap.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/rtl/device_sim.hpp"
#include "tests/rtl/core/program_generator.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl {
namespace {

using SocSim = DeviceSim<Vvl_soc_tiny, HbmMemory>;

std::vector<std::uint8_t> Encode(const std::vector<isa::Instruction>& program) {
  std::vector<std::uint8_t> bytes;
  for (const auto& insn : program) {
    const isa::Word word = isa::EncodeOrThrow(insn);
    bytes.insert(bytes.end(), word.begin(), word.end());
  }
  return bytes;
}

std::uint64_t Read64(auto& device, const std::string& counter) {
  const std::uint32_t lo = regs::FindRegister("PERF_" + counter + "_LO")->offset;
  const std::uint64_t low = device.ReadRegister(lo);
  return low | std::uint64_t{device.ReadRegister(lo + 4)} << 32;
}

// About 5 seconds on the 2-core development machine.
constexpr int kPrograms = 60;

TEST(SocTest, RandomProgramsWithDataInDramMatchTheGoldenModel) {
  const Config config = LoadConfig("tiny");
  const std::uint64_t seed = test::Seed();
  test::Waveform wave(false);
  std::mt19937_64 rng(seed);
  std::uint64_t rtl_cycles = 0, estimated_cycles = 0;
  for (int round = 0; round < kPrograms && !HasFailure(); ++round) {
    SCOPED_TRACE("program " + std::to_string(round));
    model::GoldenModel golden(config);
    SocSim soc(config, {.seed = seed + static_cast<std::uint64_t>(round),
                                      .trace_path = wave.Path()});
    std::vector<std::uint8_t> data(test::kDataBytes);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    const auto program = test::GenerateProgram(config, rng, 40);
    const auto text = Encode(program.instructions);
    soc.WriteMemory(test::kDataAddress, data);
    soc.WriteMemory(test::kTextAddress, text);
    golden.WriteMemory(test::kDataAddress, data);
    golden.WriteMemory(test::kTextAddress, text);
    auto write_both = [&](const char* name, std::uint32_t value) {
      const std::uint32_t offset = regs::FindRegister(name)->offset;
      golden.WriteRegister(offset, value);
      soc.WriteRegister(offset, value);
    };
    write_both("IRQ_ENABLE", 7);
    write_both("CMD_PC_LO", static_cast<std::uint32_t>(test::kTextAddress));
    write_both("CMD_PC_HI", 0);
    write_both("CMD_COUNT", static_cast<std::uint32_t>(program.instructions.size()));
    const std::uint64_t start = soc.Cycle();
    write_both("DOORBELL", 1);
    golden.RunUntilIdle();
    ASSERT_TRUE(soc.RunUntilIdle(5'000'000)) << "the SoC did not finish the launch";
    rtl_cycles += soc.Cycle() - start;
    estimated_cycles += golden.Counter("CYCLES");
    ASSERT_EQ(golden.LastErrorMessage(), "");

    const std::uint64_t dump = program.ub_rows_used * config.UbRowBytes() +
                               program.acc_rows_used * config.AccRowBytes();
    for (auto [address, length] : {std::pair{test::kDumpAddress, dump},
                                   std::pair{test::kDataAddress, test::kDataBytes}}) {
      std::vector<std::uint8_t> want(length), got(length);
      golden.ReadMemory(address, want);
      soc.ReadMemory(address, got);
      for (std::uint64_t i = 0; i < length; ++i) {
        ASSERT_EQ(got[i], want[i]) << "first difference at 0x" << std::hex << address + i;
      }
    }
    for (const char* name : {"STATUS", "ERROR_CODE", "LAUNCHES_DONE", "IRQ_STATUS"}) {
      const std::uint32_t offset = regs::FindRegister(name)->offset;
      EXPECT_EQ(soc.ReadRegister(offset), golden.ReadRegister(offset)) << name;
    }
    for (const char* counter : {"INSNS", "MACS", "BYTES_DRAM_TO_UB", "BYTES_DRAM_TO_ACC",
                                "BYTES_WEIGHTS", "BYTES_UB_TO_DRAM", "BYTES_ACC_TO_DRAM"}) {
      EXPECT_EQ(Read64(soc, counter), golden.Counter(counter)) << "PERF_" << counter;
    }
    // Command rules are checked at every edge (a violation throws); Finish adds the end-of-run
    // ones (overdue refresh, reads still owing data).
    soc.memory().bus().Finish(soc.Cycle());
    EXPECT_EQ(soc.memory().bus().ViolationCount(), 0u) << soc.memory().bus().Report();
    EXPECT_EQ(soc.sim()->mem_error, 0);
  }
  std::cout << "[ soc      ] " << kPrograms << " launches: " << rtl_cycles
            << " RTL cycles with DRAM timing; the golden model's estimate " << estimated_cycles
            << "\n";
}

// The pins HbmMemory drives and reads, for one channel of `tiny`'s geometry, driven by hand.
struct FakeController {
  std::uint32_t dram_cmd = 0, dram_bg = 0, dram_ba = 0, dram_row = 0, dram_col = 0;
  std::array<std::uint32_t, 16> dram_wdata{}, dram_rdata{};
  std::uint64_t dram_wstrb = 0;
  std::uint32_t dram_rvalid = 0, mem_error = 0;
  std::uint64_t mem_error_addr = 0;
  std::uint32_t t_burst, t_rcd, t_rp, t_ras, t_wl, t_wr, t_rtp, t_rrd_s, t_rrd_l, t_faw, t_ccd_s,
      t_ccd_l, t_wtr, t_rtw, t_refi, t_rfc, starve_limit;
  void eval() {}
};

TEST(SocTest, ADramTimingViolationStopsTheDeviceAtTheBrokenCommand) {
  const Config config = LoadConfig("tiny");
  HbmMemory memory(config, {});
  FakeController pins;
  memory.Init(pins);
  EXPECT_EQ(pins.t_rcd, config.dram.t_rcd);
  pins.dram_cmd = static_cast<std::uint32_t>(dram::Command::kActivate);
  memory.BeforeEdge(pins, 100);
  pins.dram_cmd = 0;
  memory.BeforeEdge(pins, 101);
  pins.dram_cmd = static_cast<std::uint32_t>(dram::Command::kRead);  // t_rcd - 2 cycles early
  try {
    memory.BeforeEdge(pins, 100 + config.dram.t_rcd - 2);
    ADD_FAILURE() << "a read before tRCD passed";
  } catch (const DramTimingError& e) {
    EXPECT_NE(std::string(e.what()).find("tRCD"), std::string::npos) << e.what();
  }
  // A refused address (the controller's error flag) stops it too.
  HbmMemory refused(config, {});
  FakeController bad;
  refused.Init(bad);
  bad.mem_error = 1;
  bad.mem_error_addr = 0x123;
  EXPECT_THROW(refused.BeforeEdge(bad, 5), std::out_of_range);
}

}  // namespace
}  // namespace systole::rtl
