// MemoryPort: device memory in C++ behind a Verilated top's device-memory port (the `mem_*`
// pins of rtl/README.md: 32-byte words, one response per request, in order).
//
// The `ideal` memory backend (rtl/memory_backends.hpp) of the bare core, for the core's own
// tests and benchmark (the `rtl` device's default is the HBM controller with DRAM models): it
// accepts one request per cycle (or, with `ready_percent` < 100, on a random subset of cycles,
// to exercise back-pressure), and answers each after `latency` cycles, in order — reads with
// the data as it was when the request was accepted, writes with an acknowledgement after
// applying the byte strobes. An access outside the memory is an RTL bug (the sequencer checks every range): it
// throws std::out_of_range naming the cycle and address instead of touching anything.
//
// Drive it once per clock edge, around the harness's Tick():
//
//   port.BeforeEdge(sim.dut(), sim.Cycle());   // present a response, sample a request
//   sim.Tick();
//   port.AfterEdge();
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <stdexcept>
#include <string>

#include "sim/model/device_memory.hpp"
#include "sim/rtl/signals.hpp"

namespace systole::rtl {

struct MemoryPortOptions {
  unsigned latency = 8;         // cycles from request to response
  unsigned ready_percent = 100; // share of cycles a request is accepted on
  std::uint64_t seed = 1;
};

class MemoryPort {
 public:
  static constexpr unsigned kWordBytes = 32;

  MemoryPort(model::DeviceMemory& memory, const MemoryPortOptions& options = {})
      : memory_(memory), options_(options), rng_(options.seed) {}

  template <class Model>
  void BeforeEdge(Model& m, std::uint64_t cycle) {
    // A response whose time has come is presented for exactly this cycle.
    presenting_ = !pending_.empty() && pending_.front().due <= cycle;
    m.mem_rsp_valid = presenting_;
    if (presenting_) {
      SetSignalBytes(m.mem_rsp_rdata, pending_.front().data);
    }
    m.mem_req_ready = options_.ready_percent >= 100 || rng_() % 100 < options_.ready_percent;
    m.eval();
    if (!(m.mem_req_valid && m.mem_req_ready)) return;

    Response response;
    response.due = cycle + options_.latency;
    const std::uint64_t address = m.mem_req_addr;
    if (address % kWordBytes != 0 || !memory_.Contains(address, kWordBytes)) {
      throw std::out_of_range(fmt::format("memory port: cycle {}: request for address 0x{:x} {}",
                                          cycle, address,
                                          address % kWordBytes != 0 ? "(not a multiple of 32)"
                                                                    : "outside device memory"));
    }
    memory_.Read(address, response.data);
    if (m.mem_req_write) {
      const std::uint32_t strobes = m.mem_req_wstrb;
      for (unsigned b = 0; b < kWordBytes; ++b) {
        if ((strobes >> b) & 1u) response.data[b] = SignalByte(m.mem_req_wdata, b);
      }
      memory_.Write(address, response.data);
      ++writes_;
    } else {
      ++reads_;
    }
    // Keep responses in order even if the latency were to change between requests.
    if (!pending_.empty() && pending_.back().due > response.due) response.due = pending_.back().due;
    pending_.push_back(response);
  }

  void AfterEdge() {
    if (presenting_) pending_.pop_front();
    presenting_ = false;
  }

  bool Idle() const { return pending_.empty(); }
  std::uint64_t Reads() const { return reads_; }
  std::uint64_t Writes() const { return writes_; }

 private:
  struct Response {
    std::uint64_t due = 0;
    std::array<std::uint8_t, kWordBytes> data{};  // read data (writes: ignored)
  };

  model::DeviceMemory& memory_;
  MemoryPortOptions options_;
  std::mt19937_64 rng_;
  std::deque<Response> pending_;
  bool presenting_ = false;
  std::uint64_t reads_ = 0;
  std::uint64_t writes_ = 0;
};

}  // namespace systole::rtl
