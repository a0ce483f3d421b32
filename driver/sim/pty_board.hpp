// PtyBoard: the simulated serial board on a pseudo-terminal. The Verilated systole_uart_top
// (uart_board.hpp) runs on a thread of its own; a bit-level UART model (sim/uart/uart_line.hpp)
// turns the bytes the host writes to /dev/pts/N into its uart_rx line, one bit every
// CLKS_PER_BIT cycles, and its uart_tx line back into bytes for the host. The driver's real
// serial code opens serial:///dev/pts/N?baud=... as it would a board's /dev/ttyUSB0.
//
//   host (serial://) ─► /dev/pts/N ═ pty master ─► LineDriver ─► uart_rx ┐
//                                                                        systole_uart_top ─ mem
//   host (serial://) ◄─ /dev/pts/N ═ pty master ◄─ RxReference ◄─ uart_tx ┘
//
// Simulated time is cycles; wall time is whatever the simulation takes (about a million cycles
// a second). When neither side has sent anything for 32 bit periods and every request seen has
// been answered, the board sleeps until the host writes again (time stands still meanwhile,
// which no counter sees: they count launch cycles and bytes), so an idle board costs no CPU.
// docs/SERIAL.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "arch/config/config.hpp"
#include "sim/uart/pseudo_terminal.hpp"

namespace systole::serial {

class UartBoard;

class PtyBoard {
 public:
  // Starts the board of `config` (a configuration this build Verilated a serial top for:
  // SYSTOLE_SERIAL_SIM_CONFIGS). Throws LinkError("serial+sim", …) when there is none.
  explicit PtyBoard(const Config& config);
  // Starts the board that `make` builds (on the board's thread), e.g. a board top's synthesized
  // netlist (tests/fpga/netlist); `clock_hz` is its clock, for measurements in board time.
  using MakeBoard = std::function<std::unique_ptr<UartBoard>()>;
  PtyBoard(MakeBoard make, double clock_hz);
  ~PtyBoard();
  PtyBoard(const PtyBoard&) = delete;
  PtyBoard& operator=(const PtyBoard&) = delete;

  // serial:///dev/pts/N?baud=BAUD: what a host opens to reach the board.
  std::string Uri() const;
  const std::string& port() const { return pty_.slave_path(); }
  std::uint32_t baud() const { return baud_; }
  unsigned clocks_per_bit() const { return clocks_per_bit_; }
  double clock_hz() const { return clock_hz_; }
  // Cycles simulated so far (read while the board runs: a measure of simulated time).
  std::uint64_t cycles() const { return cycles_.load(std::memory_order_relaxed); }
  // For measurements in board time: the cycle at which the host's latest request started
  // arriving (its first bytes taken from the pty while the host's line was idle), and the cycle
  // at which the board's latest byte to the host was complete (its stop bit sampled).
  std::uint64_t request_start_cycle() const { return request_start_.load(std::memory_order_relaxed); }
  std::uint64_t reply_end_cycle() const { return reply_end_.load(std::memory_order_relaxed); }
  // Throws what stopped the board's thread, if anything did (an RTL assertion, a memory fault).
  void CheckHealthy() const;

 private:
  void Run(std::unique_ptr<UartBoard> board);

  uart::PseudoTerminal pty_;
  std::uint32_t baud_ = 0;
  unsigned clocks_per_bit_ = 0;
  double clock_hz_ = 0;
  std::atomic<std::uint64_t> cycles_{0};
  std::atomic<std::uint64_t> request_start_{0};
  std::atomic<std::uint64_t> reply_end_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr failure_;
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace systole::serial
