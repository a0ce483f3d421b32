// HbmBench: a Verilated hbm_tb (the HBM controller behind the core's memory arbiter) with the
// DRAM device models on its channels, requesters that send queued requests, and a scoreboard.
//
// The functional reference is the golden model's DeviceMemory: a request takes effect on it at
// the edge the controller accepts it, which is the order the requester port promises. Each
// requester's responses must then arrive in its own request order with exactly the reference's
// data (reads) or as acknowledgements (writes), and a refused request (outside the memory, not a
// multiple of 32) must come back with rsp_error and change nothing. Every mismatch throws with
// the cycle, requester and address, so a test fails at the first wrong word.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <vector>

#include "sim/dram/dram_bus.hpp"
#include "sim/model/device_memory.hpp"
#include "sim/rtl/harness.hpp"
#include "sim/rtl/signals.hpp"

namespace systole::rtl::hbm {

using dram::Word;

struct Variant {
  unsigned channels;
  unsigned interleave_log2;
  std::uint64_t memory_bytes;
  static constexpr unsigned kRequesters = 3;
  // Geometry the tb is built with: 4 bank groups x 4 banks, 1 KiB rows.
  dram::BusGeometry Geometry() const {
    const unsigned local = static_cast<unsigned>(std::countr_zero(memory_bytes / channels));
    return {channels, 2, 2, local - 5 - 2 - 5 - 2, 5};
  }
};

// One Verilated build of hbm_tb for typed tests: its model class, channels and interleave.
template <class M, unsigned C, unsigned I>
struct Build {
  using Model = M;
  static Variant Get() { return {C, I, 1u << 20}; }
};

struct Request {
  bool write = false;
  std::uint64_t address = 0;
  Word wdata{};
  std::uint32_t wstrb = 0xffffffffu;
};

template <class M>
class HbmBench {
 public:
  using Model = M;
  HbmBench(const Variant& variant, const DramConfig& timing, const HarnessOptions& options = {})
      : variant_(variant),
        sim_("hbm", options),
        bus_(timing, variant.Geometry()),
        memory_(variant.memory_bytes),
        queues_(Variant::kRequesters),
        owed_(Variant::kRequesters) {
    auto& m = sim_.dut();
    m.t_burst = timing.t_burst;
    m.t_rcd = timing.t_rcd;
    m.t_rp = timing.t_rp;
    m.t_ras = timing.t_ras;
    m.t_wl = timing.t_wl;
    m.t_wr = timing.t_wr;
    m.t_rtp = timing.t_rtp;
    m.t_rrd_s = timing.t_rrd_s;
    m.t_rrd_l = timing.t_rrd_l;
    m.t_faw = timing.t_faw;
    m.t_ccd_s = timing.t_ccd_s;
    m.t_ccd_l = timing.t_ccd_l;
    m.t_wtr = timing.t_wtr;
    m.t_rtw = timing.t_rtw;
    m.t_refi = timing.t_refi;
    m.t_rfc = timing.t_rfc;
    m.starve_limit = timing.starvation_cycles;
    m.req_valid = 0;
    m.dram_rvalid = 0;
    sim_.Reset();
  }

  void Send(unsigned requester, const Request& request) { queues_[requester].push_back(request); }
  // Each requester offers a request only while fewer than `limit` of its own are unanswered (a
  // DMA engine's credits; 0: no limit).
  void SetInFlightLimit(std::uint64_t limit) { in_flight_limit_ = limit; }

  // One clock edge: drive the requesters, the DRAM devices, check responses, take acceptances.
  void Step() {
    auto& m = sim_.dut();
    m.req_valid = 0;
    m.req_write = 0;
    for (unsigned i = 0; i < Variant::kRequesters; ++i) {
      if (queues_[i].empty()) continue;
      if (in_flight_limit_ != 0 && owed_[i].size() >= in_flight_limit_) continue;
      const Request& r = queues_[i].front();
      m.req_valid |= 1u << i;
      m.req_write |= (r.write ? 1u : 0u) << i;
      SetField(m.req_addr, 48 * i, 48, r.address);
      SetField(m.req_wstrb, 32 * i, 32, r.wstrb);
      for (unsigned b = 0; b < 32; ++b) SetField(m.req_wdata, 256 * i + 8 * b, 8, r.wdata[b]);
    }
    bus_.BeforeEdge(m, sim_.Cycle());
    for (unsigned i = 0; i < Variant::kRequesters; ++i) {
      if ((m.rsp_valid >> i & 1u) != 0) Respond(i, m);
    }
    for (unsigned i = 0; i < Variant::kRequesters; ++i) {
      if ((m.req_valid >> i & 1u) != 0 && (m.req_ready >> i & 1u) != 0) Accept(i);
    }
    if ((m.req_valid & ~m.req_ready) != 0) ++blocked_cycles_;
    sim_.Tick();
  }

  bool Idle() const {
    for (unsigned i = 0; i < Variant::kRequesters; ++i) {
      if (!queues_[i].empty() || !owed_[i].empty()) return false;
    }
    return true;
  }
  // Steps until every request is answered; throws after `max_cycles`.
  void Drain(std::uint64_t max_cycles = 1'000'000) {
    for (std::uint64_t n = 0; !Idle(); ++n) {
      if (n == max_cycles) {
        throw TimeoutError(fmt::format("hbm: cycle {}: requests still unanswered after {} cycles",
                                       sim_.Cycle(), max_cycles));
      }
      Step();
    }
  }
  void Run(std::uint64_t cycles) {
    for (std::uint64_t n = 0; n < cycles; ++n) Step();
  }
  void Finish() { bus_.Finish(sim_.Cycle()); }

  Harness<Model>& sim() { return sim_; }
  dram::DramBus& bus() { return bus_; }
  model::DeviceMemory& memory() { return memory_; }
  std::uint64_t Answered() const { return answered_; }
  std::uint64_t Refused() const { return refused_; }
  std::uint64_t BlockedCycles() const { return blocked_cycles_; }
  // Cycles from acceptance to response, one per answered request of `requester`, in order.
  const std::vector<std::uint64_t>& Latencies(unsigned requester) const {
    return latencies_[requester];
  }

 private:
  struct Owed {
    Request request;
    bool refused;
    Word data;  // the reference's data for a read
    std::uint64_t accepted;
  };

  template <class Signal>
  static void SetField(Signal& signal, unsigned lsb, unsigned width, std::uint64_t value) {
    for (unsigned i = 0; i < width; ++i) {
      const unsigned bit = lsb + i;
      const auto mask = std::uint32_t{1} << (bit % 32);
      if constexpr (std::is_integral_v<Signal>) {
        const auto m64 = std::uint64_t{1} << bit;
        signal = (value >> i & 1u) ? (signal | m64) : (signal & ~m64);
      } else {
        signal[bit / 32] = (value >> i & 1u) ? (signal[bit / 32] | mask) : (signal[bit / 32] & ~mask);
      }
    }
  }

  void Accept(unsigned i) {
    Owed owed{queues_[i].front(), false, {}, sim_.Cycle()};
    queues_[i].pop_front();
    const std::uint64_t a = owed.request.address;
    owed.refused = a % 32 != 0 || !memory_.Contains(a, 32);
    if (!owed.refused) {
      memory_.Read(a, owed.data);
      if (owed.request.write) {
        Word merged = owed.data;
        for (unsigned b = 0; b < 32; ++b) {
          if ((owed.request.wstrb >> b) & 1u) merged[b] = owed.request.wdata[b];
        }
        memory_.Write(a, merged);
      }
    }
    owed_[i].push_back(owed);
  }

  void Respond(unsigned i, Model& m) {
    const std::uint64_t cycle = sim_.Cycle();
    if (owed_[i].empty()) {
      throw std::runtime_error(fmt::format("hbm: cycle {}: requester {} got a response it never "
                                           "asked for", cycle, i));
    }
    const Owed owed = owed_[i].front();
    owed_[i].pop_front();
    const std::uint64_t a = owed.request.address;
    if (static_cast<bool>(m.rsp_error) != owed.refused) {
      throw std::runtime_error(fmt::format("hbm: cycle {}: requester {}, address 0x{:x}: rsp_error "
                                           "{} but the request was {}", cycle, i, a, m.rsp_error,
                                           owed.refused ? "refused" : "legal"));
    }
    if (!owed.refused && !owed.request.write) {
      for (unsigned b = 0; b < 32; ++b) {
        if (SignalByte(m.rsp_rdata, b) != owed.data[b]) {
          throw std::runtime_error(fmt::format(
              "hbm: cycle {}: requester {}: read of 0x{:x} (accepted at cycle {}): byte {} is "
              "0x{:02x}, expected 0x{:02x}", cycle, i, a, owed.accepted, b,
              SignalByte(m.rsp_rdata, b), owed.data[b]));
        }
      }
    }
    ++answered_;
    if (owed.refused) ++refused_;
    latencies_[i].push_back(cycle - owed.accepted);
  }

  Variant variant_;
  Harness<Model> sim_;
  dram::DramBus bus_;
  model::DeviceMemory memory_;
  std::vector<std::deque<Request>> queues_;
  std::vector<std::deque<Owed>> owed_;
  std::uint64_t answered_ = 0, refused_ = 0, blocked_cycles_ = 0;
  std::uint64_t in_flight_limit_ = 0;
  std::vector<std::vector<std::uint64_t>> latencies_{Variant::kRequesters};
};

}  // namespace systole::rtl::hbm
