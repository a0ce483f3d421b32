// SocSim<Model>: an RtlDevice over the Verilated systole_soc (the core with the HBM controller)
// with one DramDevice per channel behind it, timed by the configuration's [dram] section.
//
// It is sim/rtl/core_sim.hpp's CoreSim with the C++ fixed-latency MemoryPort replaced by the
// controller and the DRAM models, so device memory lives only in the DRAM models and every cycle
// count includes row misses, bank conflicts and refresh. (The change RtlDevice needs to use the
// controller is exactly this one; see the final report of issue 4.)
#pragma once

#include <fmt/format.h>

#include <array>
#include <bit>
#include <stdexcept>
#include <string>

#include "dram_bus.hpp"
#include "regs/regmap.hpp"
#include "rtl/harness.hpp"
#include "rtl/rtl_device.hpp"
#include "rtl/signals.hpp"

namespace systole::rtl {

template <class Model>
class SocSim final : public RtlDevice {
 public:
  SocSim(const Config& config, const RtlDeviceOptions& options)
      : config_(config),
        bus_(config.dram, Geometry(config)),
        sim_("systole_soc/" + config.name, {.trace_path = options.trace_path, .seed = options.seed}) {
    const DramConfig& d = config.dram;
    sim_->t_burst = d.t_burst;
    sim_->t_rcd = d.t_rcd;
    sim_->t_rp = d.t_rp;
    sim_->t_ras = d.t_ras;
    sim_->t_wl = d.t_wl;
    sim_->t_wr = d.t_wr;
    sim_->t_rtp = d.t_rtp;
    sim_->t_rrd_s = d.t_rrd_s;
    sim_->t_rrd_l = d.t_rrd_l;
    sim_->t_faw = d.t_faw;
    sim_->t_ccd_s = d.t_ccd_s;
    sim_->t_ccd_l = d.t_ccd_l;
    sim_->t_wtr = d.t_wtr;
    sim_->t_rtw = d.t_rtw;
    sim_->t_refi = d.t_refi;
    sim_->t_rfc = d.t_rfc;
    sim_->starve_limit = d.starvation_cycles;
    sim_->reg_valid = 0;
    sim_->reg_write = 0;
    sim_->reg_addr = 0;
    sim_->reg_wdata = 0;
    sim_->host_req_valid = 0;
    sim_->host_req_write = 0;
    sim_->host_req_addr = 0;
    sim_->host_req_wstrb = 0;
    for (unsigned i = 0; i < 8; ++i) sim_->host_req_wdata[i] = 0;
    sim_->dram_rvalid = 0;
    sim_.Reset(8);
  }

  static dram::BusGeometry Geometry(const Config& config) {
    const auto log2 = [](std::uint64_t v) { return static_cast<unsigned>(std::countr_zero(v)); };
    const unsigned bg = log2(config.dram.bank_groups), ba = log2(config.dram.banks_per_group);
    const unsigned col = log2(config.dram.row_bytes / 32);
    return {config.memory_channels, bg, ba, log2(config.ChannelBytes()) - 5 - bg - ba - col, col};
  }

  const Config& config() const override { return config_; }
  std::uint64_t Cycle() const override { return sim_.Cycle(); }
  dram::DramBus& bus() { return bus_; }
  Harness<Model>& sim() { return sim_; }

  std::uint32_t ReadRegister(std::uint32_t offset) override {
    sim_->reg_valid = 1;
    sim_->reg_write = 0;
    sim_->reg_addr = offset;
    Step();
    sim_->reg_valid = 0;
    for (int i = 0; i < 16; ++i) {
      sim_.Eval();
      if (sim_->reg_rvalid) return sim_->reg_rdata;
      Step();
    }
    throw std::runtime_error(fmt::format("soc: register read at 0x{:03x} got no response", offset));
  }

  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    sim_->reg_valid = 1;
    sim_->reg_write = 1;
    sim_->reg_addr = offset;
    sim_->reg_wdata = value;
    Step();
    sim_->reg_valid = 0;
    sim_->reg_write = 0;
  }

  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    HostTransfer(address, bytes.size(), true, bytes.data(), nullptr);
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    HostTransfer(address, bytes.size(), false, nullptr, bytes.data());
  }

  bool RunUntilIdle(std::uint64_t max_cycles) override {
    const std::uint64_t start = sim_.Cycle();
    constexpr std::uint32_t kStatus = regs::OffsetOf("STATUS");
    constexpr auto kBusy = regs::FieldOf("STATUS", "BUSY");
    constexpr auto kLevel = regs::FieldOf("STATUS", "CMDQ_LEVEL");
    while (true) {
      const std::uint32_t status = ReadRegister(kStatus);
      if (regs::Extract(status, kBusy) == 0 && regs::Extract(status, kLevel) == 0) return true;
      if (sim_.Cycle() - start >= max_cycles) return false;
      Run(64);
    }
  }
  void Run(std::uint64_t cycles) override {
    for (std::uint64_t i = 0; i < cycles; ++i) Step();
  }
  bool InterruptLine() override {
    sim_.Eval();
    return sim_->irq != 0;
  }

 private:
  void Step() {
    bus_.BeforeEdge(sim_.dut(), sim_.Cycle());
    sim_.Tick();
  }

  // The words covering [address, address + length) through the host port, one request per
  // accepted cycle, responses in order; reads mark the wanted bytes in wstrb.
  void HostTransfer(std::uint64_t address, std::uint64_t length, bool write,
                    const std::uint8_t* in, std::uint8_t* out) {
    if (length > config_.memory_bytes || address > config_.memory_bytes - length) {
      throw std::out_of_range(fmt::format("soc: host access of {} bytes at 0x{:x} is outside "
                                          "device memory", length, address));
    }
    if (length == 0) return;
    const std::uint64_t first = address / 32, last = (address + length - 1) / 32;
    std::uint64_t next = first, answered = first, guard = 0;
    while (answered <= last) {
      sim_->host_req_valid = next <= last;
      if (next <= last) {
        std::uint32_t strobes = 0;
        std::array<std::uint8_t, 32> word{};
        for (unsigned b = 0; b < 32; ++b) {
          const std::uint64_t a = next * 32 + b;
          if (a >= address && a < address + length) {
            strobes |= 1u << b;
            if (write) word[b] = in[a - address];
          }
        }
        sim_->host_req_write = write;
        sim_->host_req_addr = next * 32;
        sim_->host_req_wstrb = strobes;
        SetSignalBytes(sim_->host_req_wdata, word);
      }
      bus_.BeforeEdge(sim_.dut(), sim_.Cycle());
      const bool accepted = sim_->host_req_valid && sim_->host_req_ready;
      if (sim_->host_rsp_valid) {
        for (unsigned b = 0; !write && b < 32; ++b) {
          const std::uint64_t a = answered * 32 + b;
          if (a >= address && a < address + length) {
            out[a - address] = SignalByte(sim_->host_rsp_rdata, b);
          }
        }
        ++answered;
      }
      sim_.Tick();
      if (accepted) ++next;
      if (++guard > 64 * (last - first + 1) + 100000) {
        throw std::runtime_error("soc: host port stopped answering");
      }
    }
    sim_->host_req_valid = 0;
  }

  Config config_;
  dram::DramBus bus_;
  Harness<Model> sim_;
};

}  // namespace systole::rtl
