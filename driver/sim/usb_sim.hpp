// UsbSim<Model>: the Verilated rtl/host/systole_usb_top as a usb::ByteStream — what the host
// writes enters the bridge's rx FIFO a byte per cycle, what the bridge sends comes back from
// Read. The simulation runs only while the host reads (like a device that is paused while
// nobody listens, which changes no counter: they count launch cycles and host-port bytes).
// Device memory is C++ behind sim/rtl/memory_port.hpp, with the rtl device's latency, so the
// core sees exactly the memory system of the `rtl` link.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <stdexcept>

#include "arch/config/config.hpp"
#include "sim/model/device_memory.hpp"
#include "sim/rtl/harness.hpp"
#include "sim/rtl/memory_port.hpp"
#include "sim/rtl/verilator_context.hpp"
#include "systole/usb_transport.hpp"

namespace systole::host {

template <class Model>
class UsbSim final : public usb::ByteStream {
 public:
  explicit UsbSim(const Config& config)
      : memory_(config.memory_bytes),
        port_(memory_, {}),
        sim_(std::make_unique<rtl::Harness<Model>>("systole_usb_top/" + config.name)) {
    (*sim_)->rx_valid = 0;
    (*sim_)->rx_data = 0;
    (*sim_)->tx_ready = 0;
    (*sim_)->mem_req_ready = 0;
    (*sim_)->mem_rsp_valid = 0;
    for (unsigned i = 0; i < 8; ++i) (*sim_)->mem_rsp_rdata[i] = 0;
    sim_->Reset(8);
  }
  ~UsbSim() override {
    Verilated::threadContextp(sim_->dut().contextp());
    sim_.reset();
    rtl::ForgetThreadContext();
  }

  void Write(std::span<const std::uint8_t> bytes) override {
    to_device_.insert(to_device_.end(), bytes.begin(), bytes.end());
  }

  std::size_t Read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // Run until the bridge has sent something and then stopped sending (a whole reply, as a
    // USB bulk transfer would deliver it), or the time is up.
    for (std::uint64_t cycle = 1; from_device_.empty() || (*sim_)->tx_valid; ++cycle) {
      Step();
      if (cycle % 4096 == 0 && std::chrono::steady_clock::now() >= deadline) break;
    }
    const std::size_t n = std::min(out.size(), from_device_.size());
    std::copy_n(from_device_.begin(), n, out.begin());
    from_device_.erase(from_device_.begin(), from_device_.begin() + static_cast<std::ptrdiff_t>(n));
    return n;
  }

 private:
  void Step() {
    const bool offer = !to_device_.empty();
    (*sim_)->rx_valid = offer;
    (*sim_)->rx_data = offer ? to_device_.front() : 0;
    (*sim_)->tx_ready = 1;
    port_.BeforeEdge(sim_->dut(), sim_->Cycle());  // evaluates the model with every input set
    sim_->Evaluated();
    if (offer && (*sim_)->rx_ready) to_device_.pop_front();
    if ((*sim_)->tx_valid) from_device_.push_back((*sim_)->tx_data);
    sim_->Tick();
    port_.AfterEdge();
  }

  model::DeviceMemory memory_;
  rtl::MemoryPort port_;
  std::unique_ptr<rtl::Harness<Model>> sim_;  // destroyed first, in ~UsbSim
  std::deque<std::uint8_t> to_device_;
  std::deque<std::uint8_t> from_device_;
};

}  // namespace systole::host
