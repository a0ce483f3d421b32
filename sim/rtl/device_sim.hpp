// DeviceSim<Model, Memory>: RtlDevice for one Verilated top with its device-memory backend —
// systole_soc with HbmMemory (the `rtl` device: core, HBM controller, DRAM models) or
// systole_core with IdealMemory (the fixed-latency port; the core's own tests and benchmark).
// Registers, host transfers and runs are the same code for both: the two tops share the core's
// register bus and host port (rtl/README.md); only the device-memory side differs
// (rtl/memory_backends.hpp). Included by the generated per-model translation units
// (rtl_device_{soc,core}_<config>.cpp) and by tests that need the backend itself.
#pragma once

#include <fmt/format.h>

#include <array>
#include <optional>
#include <stdexcept>
#include <string>

#include "arch/regs/regmap.hpp"
#include "sim/model/device_memory.hpp"
#include "sim/rtl/harness.hpp"
#include "sim/rtl/memory_backends.hpp"
#include "sim/rtl/rtl_device.hpp"
#include "sim/rtl/signals.hpp"
#include "sim/rtl/trace_sampler.hpp"

namespace systole::rtl {

template <class Model, class Memory>
class DeviceSim final : public RtlDevice {
 public:
  DeviceSim(const Config& config, const RtlDeviceOptions& options)
      : config_(config),
        memory_(config, options),
        sim_(std::string(Memory::kTop) + "/" + config.name,
             {.trace_path = options.trace_path, .seed = options.seed}) {
    memory_.Init(sim_.dut());
    sim_->reg_valid = 0;
    sim_->reg_write = 0;
    sim_->reg_addr = 0;
    sim_->reg_wdata = 0;
    sim_->host_req_valid = 0;
    sim_->host_req_write = 0;
    sim_->host_req_addr = 0;
    sim_->host_req_wstrb = 0;
    for (unsigned i = 0; i < 8; ++i) sim_->host_req_wdata[i] = 0;
    sim_.Reset(8);
  }

  const Config& config() const override { return config_; }
  std::uint64_t Cycle() const override { return sim_.Cycle(); }

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
    throw std::runtime_error(fmt::format("rtl: register read at 0x{:03x} got no response", offset));
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
    CheckRange(address, bytes.size(), "write");
    HostTransfer(address, bytes.size(), true, bytes.data(), nullptr);
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    CheckRange(address, bytes.size(), "read");
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

  HostPinsOut ClockEdge(const HostPinsIn& pins) override {
    sim_->reg_valid = pins.reg_valid;
    sim_->reg_write = pins.reg_write;
    sim_->reg_addr = pins.reg_addr;
    sim_->reg_wdata = pins.reg_wdata;
    sim_->host_req_valid = pins.host_req_valid;
    sim_->host_req_write = pins.host_req_write;
    sim_->host_req_addr = pins.host_req_addr;
    sim_->host_req_wstrb = pins.host_req_wstrb;
    SetSignalBytes(sim_->host_req_wdata, pins.host_req_wdata);
    memory_.BeforeEdge(sim_.dut(), sim_.Cycle());  // evaluates the model with the pins above
    sim_.Evaluated();
    HostPinsOut out;
    out.reg_rvalid = sim_->reg_rvalid != 0;
    out.reg_rdata = sim_->reg_rdata;
    out.host_req_ready = sim_->host_req_ready != 0;
    out.host_rsp_valid = sim_->host_rsp_valid != 0;
    for (unsigned b = 0; b < kHostWordBytes; ++b) out.host_rsp_rdata[b] = SignalByte(sim_->host_rsp_rdata, b);
    if (sampler_) sampler_->Sample(sim_.Cycle(), sim_->trace_accept, sim_->trace_done, sim_->trace_stall);
    sim_.Tick();
    memory_.AfterEdge();
    out.irq_after_edge = sim_->irq != 0;  // Tick left the model evaluated
    sim_->reg_valid = 0;
    sim_->reg_write = 0;
    sim_->host_req_valid = 0;
    return out;
  }

  void RecordWaveform(const std::filesystem::path& path) override {
    if (path.empty()) {
      sim_.StopTrace();
    } else {
      sim_.StartTrace(path);
    }
  }

  void Record(trace::Timeline* timeline) override {
    sampler_.reset();
    if (timeline != nullptr) sampler_.emplace(*timeline);
  }

  Memory& memory() { return memory_; }
  Harness<Model>& sim() { return sim_; }

 private:
  // One clock edge with the device memory serviced.
  void Step() {
    memory_.BeforeEdge(sim_.dut(), sim_.Cycle());
    sim_.Evaluated();
    if (sampler_) {
      sim_.Eval();  // the ports as the rising edge will see them, with this cycle's inputs
      sampler_->Sample(sim_.Cycle(), sim_->trace_accept, sim_->trace_done, sim_->trace_stall);
    }
    sim_.Tick();
    memory_.AfterEdge();
  }

  void CheckRange(std::uint64_t address, std::uint64_t length, const char* what) const {
    if (length > config_.memory_bytes || address > config_.memory_bytes - length) {
      throw std::out_of_range(fmt::format(
          "rtl: host {} of {} bytes at 0x{:x} is outside device memory ({} bytes)", what, length,
          address, config_.memory_bytes));
    }
  }

  // Streams the words covering [address, address+length) through the host port: one request
  // per accepted cycle, responses collected in order. Reads mark the wanted bytes in wstrb.
  void HostTransfer(std::uint64_t address, std::uint64_t length, bool write,
                    const std::uint8_t* in, std::uint8_t* out) {
    if (length == 0) return;
    const std::uint64_t first = address / 32, last = (address + length - 1) / 32;
    std::uint64_t next = first, answered = first;
    std::uint64_t guard = 0;
    while (answered <= last) {
      if (next <= last) {
        const std::uint64_t base = next * 32;
        std::uint32_t strobes = 0;
        std::array<std::uint8_t, 32> word{};
        for (unsigned b = 0; b < 32; ++b) {
          const std::uint64_t a = base + b;
          if (a >= address && a < address + length) {
            strobes |= 1u << b;
            if (write) word[b] = in[a - address];
          }
        }
        sim_->host_req_valid = 1;
        sim_->host_req_write = write;
        sim_->host_req_addr = base;
        sim_->host_req_wstrb = strobes;
        SetSignalBytes(sim_->host_req_wdata, word);
      } else {
        sim_->host_req_valid = 0;
      }
      memory_.BeforeEdge(sim_.dut(), sim_.Cycle());
      sim_.Evaluated();
      const bool accepted = sim_->host_req_valid && sim_->host_req_ready;
      if (sim_->host_rsp_valid) {
        if (!write) {
          const std::uint64_t base = answered * 32;
          for (unsigned b = 0; b < 32; ++b) {
            const std::uint64_t a = base + b;
            if (a >= address && a < address + length) {
              out[a - address] = SignalByte(sim_->host_rsp_rdata, b);
            }
          }
        }
        ++answered;
      }
      sim_.Tick();
      memory_.AfterEdge();
      if (accepted) ++next;
      if (++guard > 64 * (last - first + 1) + 100000) {
        throw std::runtime_error("rtl: host port stopped answering");
      }
    }
    sim_->host_req_valid = 0;
  }

  Config config_;
  Memory memory_;
  Harness<Model> sim_;
  std::optional<TraceSampler> sampler_;
};

}  // namespace systole::rtl
