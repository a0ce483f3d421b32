// A bench for rtl/host/systole_host_dma alone: a C++ AXI4 slave standing for host memory and a
// C++ device memory on the engine's host-port requester, both with random latency and
// back-pressure, plus the protocol rules each side relies on (checked on every beat).
//
// Host memory is `host` at kHostBase (above 4 GiB, so the high address half is exercised);
// a beat that touches a byte outside it, or inside `fault` (a host range answering SLVERR),
// gets an error response and writes nothing. Device memory is `device` from address 0.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/rtl/harness.hpp"
#include "sim/rtl/signals.hpp"

namespace systole::rtl::test {

inline constexpr std::uint64_t kHostBase = 0x1'2345'0000ull;
inline constexpr std::uint32_t kRegHostLo = 0x00, kRegHostHi = 0x04, kRegDevLo = 0x08,
                               kRegDevHi = 0x0C, kRegLength = 0x10, kRegCtrl = 0x14,
                               kRegStatus = 0x18, kRegCount = 0x1C, kRegBytes = 0x20,
                               kRegCycles = 0x24;
inline constexpr std::uint32_t kErrMisaligned = 1, kErrRange = 2, kErrHostRead = 3,
                               kErrHostWrite = 4;

struct DmaStatus {
  bool busy, done, error;
  std::uint32_t code;
};

template <class Model>
class DmaBench {
 public:
  // Both memories filled with random bytes from `seed`; bursts longer than `burst_beats` fail.
  DmaBench(std::uint64_t seed, const std::filesystem::path& trace, std::size_t host_bytes,
           std::size_t device_bytes, unsigned burst_beats)
      : host(host_bytes), device(device_bytes),
        sim_("host_dma", {.trace_path = trace, .seed = seed}), rng_(seed),
        burst_beats_(burst_beats) {
    for (auto& b : host) b = static_cast<std::uint8_t>(rng_());
    for (auto& b : device) b = static_cast<std::uint8_t>(rng_());
    sim_->cfg_valid = 0;
    sim_->m_arready = sim_->m_rvalid = sim_->m_awready = sim_->m_wready = sim_->m_bvalid = 0;
    sim_->dev_req_ready = sim_->dev_rsp_valid = 0;
    sim_.Reset(4);
  }

  void WriteReg(std::uint32_t offset, std::uint32_t value) {
    sim_->cfg_valid = 1;
    sim_->cfg_write = 1;
    sim_->cfg_addr = offset;
    sim_->cfg_wdata = value;
    Step();
    sim_->cfg_valid = 0;
  }
  std::uint32_t ReadReg(std::uint32_t offset) {
    sim_->cfg_valid = 1;
    sim_->cfg_write = 0;
    sim_->cfg_addr = offset;
    Step();
    sim_->cfg_valid = 0;
    sim_.Eval();
    if (!sim_->cfg_rvalid) throw std::runtime_error("host_dma: no cfg_rvalid after a read");
    return sim_->cfg_rdata;
  }
  DmaStatus Status() {
    const std::uint32_t s = ReadReg(kRegStatus);
    return {(s & 1) != 0, (s & 2) != 0, (s & 4) != 0, (s >> 4) & 0xf};
  }

  // Programs and starts one transfer; `to_host`: device → host.
  void Start(std::uint64_t host_address, std::uint64_t device_address, std::uint32_t length,
             bool to_host, bool irq = true) {
    WriteReg(kRegHostLo, static_cast<std::uint32_t>(host_address));
    WriteReg(kRegHostHi, static_cast<std::uint32_t>(host_address >> 32));
    WriteReg(kRegDevLo, static_cast<std::uint32_t>(device_address));
    WriteReg(kRegDevHi, static_cast<std::uint32_t>(device_address >> 32));
    WriteReg(kRegLength, length);
    WriteReg(kRegCtrl, 1u | (to_host ? 2u : 0u) | (irq ? 4u : 0u));
  }
  // Steps until STATUS.BUSY falls (polling as a driver would), returns the cycles it took.
  std::uint64_t Finish(std::uint64_t max_cycles) {
    const std::uint64_t begin = sim_.Cycle();
    while (Status().busy) {
      for (int i = 0; i < 16; ++i) Step();
      if (sim_.Cycle() - begin > max_cycles) {
        throw std::runtime_error(fmt::format("host_dma: cycle {}: transfer still busy after {} "
                                             "cycles", sim_.Cycle(), max_cycles));
      }
    }
    return sim_.Cycle() - begin;
  }
  bool Irq() {
    sim_.Eval();
    return sim_->irq != 0;
  }

  void Step();

  std::vector<std::uint8_t> host;
  std::vector<std::uint8_t> device;
  std::uint64_t fault_begin = 0, fault_end = 0;  // host addresses answering SLVERR
  unsigned stall_pct = 25;  // how often each ready is low / each response waits
  bool fast = false;        // memories always ready, responses the next cycle
  std::uint64_t device_strobe_bytes = 0;  // bytes strobed on the device side (PERF_BYTES_HOST)
  std::size_t max_reads_in_flight = 0;    // AR bursts accepted but not fully answered
  std::size_t max_device_in_flight = 0;

 private:
  struct Burst {
    std::uint64_t address;
    unsigned beats, sent = 0;
    bool error = false;
  };
  struct DeviceRsp {
    std::uint64_t due;
    std::vector<std::uint8_t> word;
  };
  bool Chance() { return fast || rng_() % 100 >= stall_pct; }
  bool HostFault(std::uint64_t address) const {
    return address < kHostBase || address + 32 > kHostBase + host.size() ||
           (address + 32 > fault_begin && address < fault_end);
  }
  void CheckBurst(std::uint64_t address, unsigned beats, const char* what) const {
    if (address % 32 != 0 || beats == 0 || beats > burst_beats_ ||
        address / 4096 != (address + 32 * beats - 1) / 4096) {
      throw std::runtime_error(fmt::format("host_dma: {} burst of {} beats at 0x{:x}: unaligned, "
                                           "too long or across 4 KiB", what, beats, address));
    }
  }

  Harness<Model> sim_;
  std::mt19937_64 rng_;
  unsigned burst_beats_;
  std::deque<Burst> reads_, writes_;
  std::deque<std::uint64_t> b_due_;  // B responses: the cycle each may be sent, error flag below
  std::deque<bool> b_error_;
  std::deque<DeviceRsp> device_rsp_;
};

}  // namespace systole::rtl::test

#include "tests/rtl/host/dma_bench_step.hpp"
