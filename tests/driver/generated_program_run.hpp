// A random legal program (tests/rtl/core/program_generator.hpp: results independent of timing)
// run through the Device API on any path to the core, and what it left behind: the data region
// (every byte the program could touch), the dump region and the counters. The link parity and
// PCIe DMA tests compare these between paths.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "arch/isa/isa.hpp"
#include "systole/device.hpp"
#include "tests/rtl/core/program_generator.hpp"

namespace systole::driver_test {

struct Footprint {
  std::vector<std::uint8_t> data, dump;
  Counters counters;
};

// Writes `data` and the program's text at the generator's addresses of `device`, launches the
// program, and reads the footprint back.
inline Footprint RunGenerated(Device& device, const std::vector<std::uint8_t>& data,
                              const std::vector<isa::Instruction>& program) {
  Buffer memory = device.AllocateAt(0, rtl::test::kDumpAddress + 0x10000);
  memory.Write(data, rtl::test::kDataAddress);
  std::vector<std::uint8_t> text;
  for (const isa::Instruction& insn : program) {
    const isa::Word word = isa::EncodeOrThrow(insn);
    text.insert(text.end(), word.begin(), word.end());
  }
  memory.Write(text, rtl::test::kTextAddress);
  device.ClearCounters();
  EXPECT_TRUE(device.Launch(rtl::test::kTextAddress, static_cast<std::uint32_t>(program.size()))
                  .Wait(std::chrono::milliseconds(60000)))
      << device.uri();
  Footprint f{std::vector<std::uint8_t>(rtl::test::kDataBytes), std::vector<std::uint8_t>(0x10000),
              device.ReadCounters()};
  memory.Read(f.data, rtl::test::kDataAddress);
  memory.Read(f.dump, rtl::test::kDumpAddress);
  return f;
}

}  // namespace systole::driver_test
