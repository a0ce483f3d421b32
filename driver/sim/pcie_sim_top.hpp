// PcieSim<Model>: the Verilated rtl/host/systole_pcie_top as a PcieFunction — what a root
// complex and host memory would do to the board, cycle by cycle:
//  * BAR0 reads and writes are single accesses on bar0_* (the core's registers, the DMA
//    engine's at pcie::dma::kBase);
//  * BAR2 bursts become 32-byte word requests on bar2_* whose byte strobes are exactly the
//    burst's bytes (so PERF_BYTES_HOST counts what the rtl link's transfers count);
//  * the engine's AXI master reaches AxiHostMemory, where DMA buffers live in an IOVA space
//    (pcie_host_memory.hpp);
//  * device memory is C++ behind sim/rtl/memory_port.hpp with the rtl device's latency, as in
//    usb+sim, so the core sees the memory system of the `rtl` link.
// The model only runs while the host accesses it or pauses (a host's polling interval).
#pragma once

#include <fmt/format.h>

#include <array>
#include <deque>
#include <memory>
#include <stdexcept>

#include "arch/config/config.hpp"
#include "driver/sim/pcie_host_memory.hpp"
#include "sim/model/device_memory.hpp"
#include "sim/rtl/harness.hpp"
#include "sim/rtl/memory_port.hpp"
#include "sim/rtl/verilator_context.hpp"

namespace systole::host {

template <class Model>
class PcieSim final : public pcie::PcieFunction {
 public:
  static constexpr unsigned kHostLatency = 32;  // cycles of a host-memory read: a PCIe round trip

  explicit PcieSim(const Config& config)
      : config_(config),
        memory_(config.memory_bytes),
        port_(memory_, {}),
        space_(std::make_shared<IovaSpace>()),
        host_(space_, kHostLatency),
        sim_(std::make_unique<rtl::Harness<Model>>("systole_pcie_top/" + config.name)) {
    auto& m = sim_->dut();
    m.bar0_valid = m.bar0_write = 0;
    m.bar0_addr = 0;
    m.bar0_wdata = 0;
    m.bar2_req_valid = m.bar2_req_write = 0;
    m.bar2_req_addr = 0;
    m.bar2_req_wstrb = 0;
    for (unsigned i = 0; i < 8; ++i) m.bar2_req_wdata[i] = 0;
    m.mem_req_ready = m.mem_rsp_valid = 0;
    sim_->Reset(8);
  }
  ~PcieSim() override {
    Verilated::threadContextp(sim_->dut().contextp());
    sim_.reset();
    rtl::ForgetThreadContext();
  }

  std::uint32_t Read32(std::uint32_t offset) override {
    (*sim_)->bar0_valid = 1;
    (*sim_)->bar0_write = 0;
    (*sim_)->bar0_addr = offset;
    Step();
    (*sim_)->bar0_valid = 0;
    for (int i = 0; i < 16; ++i) {
      sim_->Eval();
      if ((*sim_)->bar0_rvalid) return (*sim_)->bar0_rdata;
      Step();
    }
    throw std::runtime_error(
        fmt::format("pcie+sim: BAR0 read at 0x{:03x} got no response", offset));
  }
  void Write32(std::uint32_t offset, std::uint32_t value) override {
    (*sim_)->bar0_valid = 1;
    (*sim_)->bar0_write = 1;
    (*sim_)->bar0_addr = offset;
    (*sim_)->bar0_wdata = value;
    Step();
    (*sim_)->bar0_valid = 0;
    (*sim_)->bar0_write = 0;
  }
  void WriteWindow(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    CheckBurst(address, bytes.size());
    Window(address, bytes.size(), bytes.data(), nullptr);
  }
  void ReadWindow(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    CheckBurst(address, bytes.size());
    Window(address, bytes.size(), nullptr, bytes.data());
  }
  // BAR0 is 4 KiB: the core's registers and the engine's (reg_addr is 12 bits).
  std::uint64_t RegisterBytes() const override { return 4096; }
  std::uint64_t WindowBytes() const override { return config_.memory_bytes; }
  void Pause() override {
    for (int i = 0; i < 64; ++i) Step();  // the rtl link's polling interval
  }
  std::unique_ptr<pcie::DmaBuffer> AllocateDma(std::size_t bytes) override {
    return std::make_unique<SimDmaBuffer>(space_, bytes);
  }
  std::string Access() const override {
    return "pcie+sim (Verilated systole_pcie_top, simulated host memory for DMA)";
  }

 private:
  // One clock edge with host memory and device memory serviced.
  void Step() {
    auto& m = sim_->dut();
    host_.Drive(m, sim_->Cycle());
    port_.BeforeEdge(m, sim_->Cycle());  // evaluates the model with every input set
    sim_->Evaluated();
    host_.Sample(m, sim_->Cycle());
    accepted_ = m.bar2_req_valid && m.bar2_req_ready;
    if (m.bar2_rsp_valid) {
      std::array<std::uint8_t, 32> word{};
      for (unsigned b = 0; b < 32; ++b) word[b] = rtl::SignalByte(m.bar2_rsp_rdata, b);
      responses_.push_back(word);
    }
    sim_->Tick();
    port_.AfterEdge();
  }

  // A burst a root complex would not emit is a bug in the link above.
  static void CheckBurst(std::uint64_t address, std::size_t bytes) {
    if (bytes > kMaxBurstBytes || (bytes > 0 && address / 4096 != (address + bytes - 1) / 4096)) {
      throw std::logic_error(fmt::format("pcie+sim: a burst of {} bytes at 0x{:x} is larger than "
                                         "{} bytes or crosses a 4 KiB boundary", bytes, address,
                                         kMaxBurstBytes));
    }
  }

  // The words of [address, address + length) through BAR2, one request per accepted cycle,
  // responses in order; each word's strobes are the burst's bytes in it.
  void Window(std::uint64_t address, std::size_t length, const std::uint8_t* in,
              std::uint8_t* out) {
    if (length == 0) return;
    auto& m = sim_->dut();
    const std::uint64_t first = address / 32, last = (address + length - 1) / 32;
    std::uint64_t next = first, answered = first;
    responses_.clear();
    for (std::uint64_t guard = 0; answered <= last; ++guard) {
      if (guard > 100000) throw std::runtime_error("pcie+sim: BAR2 burst got no response");
      m.bar2_req_valid = next <= last;
      if (next <= last) {
        std::uint32_t strobes = 0;
        std::array<std::uint8_t, 32> word{};
        for (unsigned b = 0; b < 32; ++b) {
          const std::uint64_t a = next * 32 + b;
          if (a < address || a >= address + length) continue;
          strobes |= 1u << b;
          if (in != nullptr) word[b] = in[a - address];
        }
        m.bar2_req_write = in != nullptr;
        m.bar2_req_addr = next * 32;
        m.bar2_req_wstrb = strobes;
        rtl::SetSignalBytes(m.bar2_req_wdata, word);
      }
      Step();
      if (accepted_) ++next;
      for (; !responses_.empty(); responses_.pop_front(), ++answered) {
        if (out == nullptr) continue;
        for (unsigned b = 0; b < 32; ++b) {
          const std::uint64_t a = answered * 32 + b;
          if (a >= address && a < address + length) out[a - address] = responses_.front()[b];
        }
      }
    }
    m.bar2_req_valid = 0;
  }

  Config config_;
  model::DeviceMemory memory_;
  rtl::MemoryPort port_;
  std::shared_ptr<IovaSpace> space_;  // shared with the DMA buffers, which may outlive this
  AxiHostMemory host_;
  std::unique_ptr<rtl::Harness<Model>> sim_;  // destroyed first, in ~PcieSim
  bool accepted_ = false;
  std::deque<std::array<std::uint8_t, 32>> responses_;
};

}  // namespace systole::host
