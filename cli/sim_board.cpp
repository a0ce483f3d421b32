// systole sim-board: the Verilated serial board (rtl/host/systole_uart_top) on a
// pseudo-terminal, for a person to reach with the real serial:// link from another shell, as
// they would a board on /dev/ttyUSB0 (docs/SERIAL.md). Only in builds with the Verilated RTL.
#include <fmt/core.h>

#include <csignal>
#include <ctime>

#include "arch/config/config.hpp"
#include "cli/commands.hpp"
#include "driver/sim/pty_board.hpp"

namespace systole::cli {
namespace {

void RunSimBoard(const std::string& config_name) {
  // SIGINT and SIGTERM are taken with sigtimedwait below: block them before the board's thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const Config config = LoadConfig(config_name);
  serial::PtyBoard board(config);
  fmt::print("systole sim-board: {} (Verilated systole_uart_top) at {} baud, {} cycles per bit "
             "of {} MHz\n  port: {}\n  try:  systole run examples/asm/conv_pool_tiny.s --config {} "
             "--device '{}'\n  Ctrl-C stops the board\n",
             config.name, board.baud(), board.clocks_per_bit(), config.clock_mhz, board.port(),
             config.name, board.Uri());
  std::fflush(stdout);
  const timespec second{.tv_sec = 1, .tv_nsec = 0};
  while (sigtimedwait(&signals, nullptr, &second) < 0) board.CheckHealthy();
  fmt::print("systole sim-board: stopping after {} simulated cycles ({:.3f} s of board time)\n",
             board.cycles(), static_cast<double>(board.cycles()) / board.clock_hz());
}

}  // namespace

void AddSimBoardCommand(CLI::App& app) {
  auto config = std::make_shared<std::string>("tiny");
  CLI::App* cmd = app.add_subcommand(
      "sim-board", "Simulate a serial board (UART + bridge + core) on a pseudo-terminal and "
                   "print the serial:// URI that reaches it");
  cmd->add_option("-c,--config", *config,
                  "Configuration (one with a Verilated serial top: SYSTOLE_SERIAL_SIM_CONFIGS)")
      ->capture_default_str();
  cmd->callback([config] { RunSimBoard(*config); });
}

}  // namespace systole::cli
