// The golden model and the Verilated core side by side, driven identically through the same
// host interface (registers, device memory through the host port, DOORBELL launches), and the
// comparisons every whole-core test makes afterwards: memory ranges byte for byte, the error
// and interrupt state, and the counters that do not depend on timing.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "arch/isa/isa.hpp"
#include "arch/regs/regmap.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/rtl/rtl_device.hpp"

namespace systole::rtl::test {

// Counters that do not depend on timing; CYCLES and the stall counters are the RTL's own.
inline const std::vector<std::string> kFunctionalCounters = {
    "INSNS", "MACS", "BYTES_DRAM_TO_UB", "BYTES_DRAM_TO_ACC", "BYTES_WEIGHTS",
    "BYTES_UB_TO_DRAM", "BYTES_ACC_TO_DRAM", "BYTES_HOST"};
inline const std::vector<std::string> kStateRegisters = {
    "STATUS", "ERROR_CODE", "FAULT_PC_LO", "FAULT_PC_HI", "IRQ_STATUS", "IRQ_CODE",
    "LAUNCHES_DONE"};

inline std::uint64_t Read64(auto& device, const std::string& counter) {
  const std::uint32_t lo = regs::FindRegister("PERF_" + counter + "_LO")->offset;
  const std::uint64_t low = device.ReadRegister(lo);
  return low | std::uint64_t{device.ReadRegister(lo + 4)} << 32;
}

inline std::vector<std::uint8_t> Encode(const std::vector<isa::Instruction>& program) {
  std::vector<std::uint8_t> bytes;
  for (const auto& insn : program) {
    const isa::Word word = isa::EncodeOrThrow(insn);
    bytes.insert(bytes.end(), word.begin(), word.end());
  }
  return bytes;
}

// Both devices, driven identically. These tests are about the core, so the RTL is the bare core
// with the ideal memory backend (the hbm backend has its own: tests/rtl/hbm/soc_test.cpp); its
// memory answers after 8 cycles and refuses 20%
// of requests at random (seeded), so that back-pressure paths are exercised.
class Pair {
 public:
  explicit Pair(const Config& config, std::uint64_t seed, const std::filesystem::path& wave = {},
                unsigned ready_percent = 80)
      : golden_(config),
        rtl_(MakeRtlDevice(config, {.memory = MemoryBackend::kIdeal, .memory_latency = 8, .memory_ready_percent = ready_percent,
                                    .seed = seed, .trace_path = wave})) {}

  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) {
    golden_.WriteMemory(address, bytes);
    rtl_->WriteMemory(address, bytes);
  }
  void WriteRegister(const std::string& name, std::uint32_t value) {
    const std::uint32_t offset = regs::FindRegister(name)->offset;
    golden_.WriteRegister(offset, value);
    rtl_->WriteRegister(offset, value);
  }
  void Launch(std::uint64_t pc, std::uint32_t count, std::uint64_t max_cycles = 5'000'000) {
    WriteRegister("IRQ_ENABLE", 7);  // DONE, ERROR and USER all raise the line
    WriteRegister("CMD_PC_LO", static_cast<std::uint32_t>(pc));
    WriteRegister("CMD_PC_HI", static_cast<std::uint32_t>(pc >> 32));
    WriteRegister("CMD_COUNT", count);
    WriteRegister("DOORBELL", 1);
    golden_.RunUntilIdle();
    ASSERT_TRUE(rtl_->RunUntilIdle(max_cycles)) << "the RTL did not finish the launch";
  }
  void ExpectSameMemory(std::uint64_t address, std::uint64_t length, const std::string& what) {
    std::vector<std::uint8_t> want(length), got(length);
    golden_.ReadMemory(address, want);
    rtl_->ReadMemory(address, got);
    std::uint64_t differing = 0;
    for (std::uint64_t i = 0; i < length; ++i) differing += got[i] != want[i];
    if (differing != 0) std::cout << what << ": " << differing << " bytes differ\n";
    for (std::uint64_t i = 0; i < length; ++i) {
      ASSERT_EQ(got[i], want[i]) << what << ": first difference at byte 0x" << std::hex
                                 << address + i << " (offset " << std::dec << i << ")";
    }
  }
  void ExpectSameState() {
    for (const auto& name : kStateRegisters) {
      const std::uint32_t offset = regs::FindRegister(name)->offset;
      EXPECT_EQ(rtl_->ReadRegister(offset), golden_.ReadRegister(offset)) << name;
    }
    EXPECT_EQ(rtl_->InterruptLine(), golden_.InterruptLine());
    for (const auto& name : kFunctionalCounters) {
      EXPECT_EQ(Read64(*rtl_, name), golden_.Counter(name)) << "PERF_" << name;
    }
  }

  model::GoldenModel golden_;
  std::unique_ptr<RtlDevice> rtl_;
};

}  // namespace systole::rtl::test
