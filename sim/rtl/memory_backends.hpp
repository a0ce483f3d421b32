// The two device-memory backends of DeviceSim (rtl/device_sim.hpp), one per Verilated top:
//
//  * IdealMemory — behind systole_core's `mem_*` port: the fixed-latency C++ MemoryPort
//    (rtl/memory_port.hpp). Cycle counts then measure the core alone, as SCALE-Sim's on-chip
//    operands do; the core's tests use it for its seeded back-pressure.
//  * HbmMemory — behind systole_soc's `dram_*` pins: one DramDevice per channel (sim/dram),
//    timed by the configuration's [dram] section, the controller's timing inputs set from the
//    same section. Device memory then lives only in the DRAM models, and every cycle count
//    includes row misses, bank conflicts and refresh. A DRAM timing violation or an address the
//    controller refuses is an RTL bug (the sequencer checks every range): either throws at the
//    cycle it happens, naming the rule, instead of letting a run finish with wrong timing.
//
// Each backend: kTop (the module it fits), Init(model) before reset, BeforeEdge(model, cycle)
// and AfterEdge() around every clock edge.
#pragma once

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <stdexcept>

#include "arch/config/config.hpp"
#include "sim/dram/dram_bus.hpp"
#include "sim/model/device_memory.hpp"
#include "sim/rtl/memory_port.hpp"
#include "sim/rtl/rtl_device.hpp"

namespace systole::rtl {

class IdealMemory {
 public:
  static constexpr const char* kTop = "systole_core";

  IdealMemory(const Config& config, const RtlDeviceOptions& options)
      : memory_(config.memory_bytes),
        port_(memory_, {.latency = options.memory_latency,
                        .ready_percent = options.memory_ready_percent,
                        .seed = options.seed}) {}

  template <class Model>
  void Init(Model& m) {
    m.mem_req_ready = 0;
    m.mem_rsp_valid = 0;
  }
  template <class Model>
  void BeforeEdge(Model& m, std::uint64_t cycle) {
    port_.BeforeEdge(m, cycle);
  }
  void AfterEdge() { port_.AfterEdge(); }

 private:
  model::DeviceMemory memory_;  // before port_, which refers to it
  MemoryPort port_;
};

// A DRAM timing rule broken by the controller (the message lists the violations).
class DramTimingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class HbmMemory {
 public:
  static constexpr const char* kTop = "systole_soc";

  HbmMemory(const Config& config, const RtlDeviceOptions&)
      : dram_(config.dram), bus_(config.dram, Geometry(config)) {}

  // The controller's address split (docs/MEMORY.md, "Addresses") as widths of the DRAM buses.
  static dram::BusGeometry Geometry(const Config& config) {
    const auto log2 = [](std::uint64_t v) { return static_cast<unsigned>(std::countr_zero(v)); };
    const unsigned bg = log2(config.dram.bank_groups), ba = log2(config.dram.banks_per_group);
    const unsigned col = log2(config.dram.row_bytes / 32);
    return {config.memory_channels, bg, ba, log2(config.ChannelBytes()) - 5 - bg - ba - col, col};
  }

  template <class Model>
  void Init(Model& m) {
    m.t_burst = dram_.t_burst;
    m.t_rcd = dram_.t_rcd;
    m.t_rp = dram_.t_rp;
    m.t_ras = dram_.t_ras;
    m.t_wl = dram_.t_wl;
    m.t_wr = dram_.t_wr;
    m.t_rtp = dram_.t_rtp;
    m.t_rrd_s = dram_.t_rrd_s;
    m.t_rrd_l = dram_.t_rrd_l;
    m.t_faw = dram_.t_faw;
    m.t_ccd_s = dram_.t_ccd_s;
    m.t_ccd_l = dram_.t_ccd_l;
    m.t_wtr = dram_.t_wtr;
    m.t_rtw = dram_.t_rtw;
    m.t_refi = dram_.t_refi;
    m.t_rfc = dram_.t_rfc;
    m.starve_limit = dram_.starvation_cycles;
    m.dram_rvalid = 0;
  }

  template <class Model>
  void BeforeEdge(Model& m, std::uint64_t cycle) {
    bus_.BeforeEdge(m, cycle);
    // Checked every cycle (a few vector sizes) so the failure names the first broken command.
    if (bus_.ViolationCount() != 0) {
      throw DramTimingError(fmt::format("rtl: cycle {}: the HBM controller broke DRAM timing:\n{}",
                                        cycle, bus_.Report()));
    }
    if (m.mem_error) {
      throw std::out_of_range(fmt::format(
          "rtl: cycle {}: the HBM controller refused device-memory address 0x{:x} (outside "
          "memory or not a multiple of 32)", cycle, static_cast<std::uint64_t>(m.mem_error_addr)));
    }
  }
  void AfterEdge() {}

  dram::DramBus& bus() { return bus_; }
  const dram::DramBus& bus() const { return bus_; }

 private:
  DramConfig dram_;
  dram::DramBus bus_;
};

}  // namespace systole::rtl
