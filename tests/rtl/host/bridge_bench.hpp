// BridgeBench: the Verilated systole_usb_bridge with C++ stubs for everything around it — a
// register array on the core's register bus (reads answered after 1-3 cycles), a byte memory
// on the host memory port (random back-pressure and latency, strobes checked), and the two
// FIFOs, which the bench feeds and drains with random gaps (shorter than the RX timeout).
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <vector>

#include "Vvl_usb_bridge.h"
#include "sim/rtl/harness.hpp"

namespace systole::rtl::test {

// The parameters the bridge is Verilated with (tests/rtl/host/CMakeLists.txt).
inline constexpr std::uint32_t kBenchMaxPayload = 256;
inline constexpr std::uint32_t kBenchRxTimeout = 40;
inline constexpr std::uint32_t kBenchCyclesPerMs = 8;
inline constexpr std::uint64_t kBenchMemoryBytes = 8192;

class BridgeBench {
 public:
  BridgeBench(std::uint64_t seed, const std::filesystem::path& trace);

  // Sends `bytes` (with random gaps), then waits for a pause of RX timeout cycles in which the
  // bridge neither sends nor holds off the stream; returns everything it sent meanwhile.
  std::vector<std::uint8_t> Burst(std::span<const std::uint8_t> bytes);

  std::vector<std::uint32_t> registers = std::vector<std::uint32_t>(128);
  std::vector<std::uint8_t> memory = std::vector<std::uint8_t>(kBenchMemoryBytes);
  bool irq = false;
  bool full_speed = false;  // the host offers a byte and takes one every cycle
  std::uint64_t host_bytes = 0;  // strobed bytes of every host-port request
  std::uint64_t Cycle() const { return sim_.Cycle(); }

 private:
  void Step();  // one cycle of the stubs around one clock edge

  Harness<Vvl_usb_bridge> sim_;
  std::mt19937_64 rng_;
  struct Pending {
    std::uint64_t due;
    bool is_read;
    std::uint32_t data;
    std::vector<std::uint8_t> word;
  };
  std::deque<Pending> reg_rsp_;
  std::deque<Pending> mem_rsp_;
  std::vector<std::uint8_t> tx_;
};

}  // namespace systole::rtl::test
