// The simulated serial board: the Verilated rtl/host/systole_uart_top with its device memory
// in C++ (sim/rtl/memory_port.hpp, the latency of usb+sim and pcie+sim), seen from outside as
// its two serial pins. PtyBoard (pty_board.hpp) clocks it and plays the host's UART.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "arch/config/config.hpp"
#include "sim/model/device_memory.hpp"
#include "sim/rtl/harness.hpp"
#include "sim/rtl/memory_port.hpp"
#include "sim/rtl/verilator_context.hpp"

namespace systole::serial {

// A board's serial pins, one clock cycle at a time.
class UartBoard {
 public:
  virtual ~UartBoard() = default;
  // One rising edge with `host_line` on uart_rx; returns uart_tx after it.
  virtual bool Cycle(bool host_line) = 0;
  // The line rate the RTL was elaborated with (systole_uart_top's BAUD and CLKS_PER_BIT).
  virtual std::uint32_t Baud() const = 0;
  virtual unsigned ClocksPerBit() const = 0;
};

template <class Model>
class VerilatedUartBoard final : public UartBoard {
 public:
  VerilatedUartBoard(const Config& config, std::uint32_t baud, unsigned clocks_per_bit)
      : baud_(baud),
        clocks_per_bit_(clocks_per_bit),
        memory_(config.memory_bytes),
        port_(memory_, {}),
        sim_(std::make_unique<rtl::Harness<Model>>("systole_uart_top/" + config.name)) {
    (*sim_)->uart_rx = 1;
    (*sim_)->mem_req_ready = 0;
    (*sim_)->mem_rsp_valid = 0;
    for (unsigned i = 0; i < 8; ++i) (*sim_)->mem_rsp_rdata[i] = 0;
    sim_->Reset(8);
  }
  ~VerilatedUartBoard() override {
    Verilated::threadContextp(sim_->dut().contextp());
    sim_.reset();
    rtl::ForgetThreadContext();
  }

  bool Cycle(bool host_line) override {
    (*sim_)->uart_rx = host_line;
    port_.BeforeEdge(sim_->dut(), sim_->Cycle());  // evaluates the model with every input set
    sim_->Evaluated();
    sim_->Tick();
    port_.AfterEdge();
    return (*sim_)->uart_tx != 0;
  }
  std::uint32_t Baud() const override { return baud_; }
  unsigned ClocksPerBit() const override { return clocks_per_bit_; }

 private:
  std::uint32_t baud_;
  unsigned clocks_per_bit_;
  model::DeviceMemory memory_;
  rtl::MemoryPort port_;
  std::unique_ptr<rtl::Harness<Model>> sim_;  // destroyed first, in the destructor
};

}  // namespace systole::serial
