// UartBench: the Verilated systole_uart (receiver, RX FIFO, transmitter) clocked beside its
// cycle-exact C++ reference (sim/uart/uart_line.hpp), every output compared every cycle.
// A host LineDriver drives uart_rx_i; the test chooses when the bridge side takes bytes
// (rx_ready) and which bytes it offers to send (tx_valid/tx_data).
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/rtl/harness.hpp"
#include "sim/uart/uart_line.hpp"

namespace systole::rtl::test {

template <class Model>
class UartBench {
 public:
  UartBench(unsigned clks_per_bit, unsigned fifo_depth, std::uint64_t period_num,
            std::uint64_t period_den, std::uint64_t seed, const std::filesystem::path& trace)
      : clks_(clks_per_bit),
        depth_(fifo_depth),
        sim_("uart", {.trace_path = trace, .seed = seed}),
        host_(period_num, period_den),
        rx_ref_(clks_per_bit),
        tx_ref_(clks_per_bit),
        tx_decoder_(clks_per_bit) {
    sim_->uart_rx_i = 1;
    sim_->rx_ready_i = 0;
    sim_->tx_valid_i = 0;
    sim_->tx_data_i = 0;
    sim_.Reset();
  }

  uart::LineDriver& host() { return host_; }

  // One cycle. `rx_ready`: the bridge takes a byte; `offer`: a byte offered to the transmitter.
  // Returns whether the offered byte was taken. Throws std::logic_error at the first mismatch.
  bool Step(bool rx_ready, std::optional<std::uint8_t> offer = std::nullopt) {
    const bool line = host_.Line();
    sim_->uart_rx_i = line;
    sim_->rx_ready_i = rx_ready;
    sim_->tx_valid_i = offer.has_value();
    sim_->tx_data_i = offer.value_or(0);
    sim_.Eval();
    Expect("rx_valid_o", sim_->rx_valid_o, !fifo_.empty());
    if (!fifo_.empty()) Expect("rx_data_o", sim_->rx_data_o, fifo_.front());
    Expect("tx_ready_o", sim_->tx_ready_o, tx_ref_.ready());

    // The reference's edge, in the RTL's order: every register from the values before it.
    const bool push = rx_ref_.valid();
    const std::uint8_t pushed = rx_ref_.data();
    const bool full = fifo_.size() == depth_;
    const bool pop = rx_ready && !fifo_.empty();
    if (pop) {
      received_.push_back(fifo_.front());
      fifo_.pop_front();
    }
    if (push && !full) fifo_.push_back(pushed);
    overflow_ref_ = push && full;
    rx_ref_.Edge(line);
    const bool taken = tx_ref_.Edge(offer);
    if (taken) sent_.push_back(*offer);

    sim_.Tick();
    host_.Advance();
    tx_decoder_.Edge(sim_->uart_tx_o);
    if (tx_decoder_.valid()) tx_line_bytes_.push_back(tx_decoder_.data());
    Expect("frame_error_o", sim_->frame_error_o, rx_ref_.frame_error());
    Expect("overflow_o", sim_->overflow_o, overflow_ref_);
    Expect("uart_tx_o", sim_->uart_tx_o, tx_ref_.line());
    frame_errors_ += sim_->frame_error_o ? 1 : 0;
    overflows_ += sim_->overflow_o ? 1 : 0;
    return taken;
  }

  // Steps with rx_ready high until the host has sent everything, then `tail` more cycles (so the
  // last byte passes the synchronizer, the receiver and the FIFO).
  void Drain(std::uint64_t tail = 0) {
    while (!host_.Idle()) Step(true);
    for (std::uint64_t i = 0; i < tail + 4ull * clks_; ++i) Step(true);
  }

  const std::vector<std::uint8_t>& received() const { return received_; }  // taken from the FIFO
  const std::vector<std::uint8_t>& sent() const { return sent_; }  // taken by the transmitter
  const std::vector<std::uint8_t>& tx_line_bytes() const { return tx_line_bytes_; }
  unsigned frame_errors() const { return frame_errors_; }
  unsigned overflows() const { return overflows_; }
  std::uint64_t Cycle() const { return sim_.Cycle(); }
  unsigned clks() const { return clks_; }

 private:
  template <class A, class B>
  void Expect(const char* what, A rtl, B reference) {
    if (static_cast<unsigned>(rtl) == static_cast<unsigned>(reference)) return;
    std::ostringstream message;
    message << "cycle " << sim_.Cycle() << ": " << what << " is " << static_cast<unsigned>(rtl)
            << ", the reference says " << static_cast<unsigned>(reference);
    throw std::logic_error(message.str());
  }

  unsigned clks_, depth_;
  Harness<Model> sim_;
  uart::LineDriver host_;
  uart::RxReference rx_ref_;
  uart::TxReference tx_ref_;
  uart::RxReference tx_decoder_;  // reads the transmitter's line back, as a host would
  std::deque<std::uint8_t> fifo_;
  bool overflow_ref_ = false;
  std::vector<std::uint8_t> received_, sent_, tx_line_bytes_;
  unsigned frame_errors_ = 0, overflows_ = 0;
};

}  // namespace systole::rtl::test
