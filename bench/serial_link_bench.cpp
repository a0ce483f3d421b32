// serial_link_bench: the serial:// link against the simulated board on a pseudo-terminal
// (driver/sim/pty_board.hpp), measured in the board's own time — simulated cycles over its
// clock — so the figures are what the RTL and the line allow at the configured baud, not how
// fast this machine simulates. Bulk writes and reads through Link (4 KiB frames) and register
// round trips, beside the line rate (baud / 10 bytes per second: 8N1 spends ten bits a byte).
// docs/SERIAL.md has a table of its output.
//
//   serial_link_bench [--config tiny] [--bytes 32768] [--round-trips 20]
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/regs/regmap.hpp"
#include "driver/sim/pty_board.hpp"
#include "systole/link.hpp"

namespace {

using namespace systole;

struct Measure {
  std::uint64_t cycles = 0;
  double wall_seconds = 0;
};

// Board cycles until the work's last reply byte was complete, so the host's time to wake up
// after it (long on a loaded machine) is not counted as the link's. `single_request`: count
// from the cycle the board took that request from the pty, not from the call.
template <class Work>
Measure Time(const serial::PtyBoard& board, Work work, bool single_request = false) {
  const auto wall = std::chrono::steady_clock::now();
  const std::uint64_t before = board.cycles();
  work();
  Measure m;
  m.cycles = board.reply_end_cycle() - (single_request ? board.request_start_cycle() : before);
  m.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_name = "tiny";
  std::size_t bytes = 32768;
  int round_trips = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--config") == 0) config_name = argv[i + 1];
    else if (std::strcmp(argv[i], "--bytes") == 0) bytes = std::strtoull(argv[i + 1], nullptr, 0);
    else if (std::strcmp(argv[i], "--round-trips") == 0) round_trips = std::atoi(argv[i + 1]);
    else {
      fmt::print(stderr, "usage: serial_link_bench [--config NAME] [--bytes N] [--round-trips N]\n");
      return 2;
    }
  }
  const Config config = LoadConfig(config_name);
  serial::PtyBoard board(config);
  const auto link = OpenLink(board.Uri(), config);
  const double hz = board.clock_hz();
  const double line_rate = board.baud() / 10.0;
  fmt::print("serial link to the simulated {} board: {} at {} baud ({} cycles per bit of {} MHz), "
             "line rate {:.0f} bytes/s\n\n",
             config.name, board.port(), board.baud(), board.clocks_per_bit(), config.clock_mhz,
             line_rate);
  fmt::print("| measurement | bytes | board cycles | board time | bytes/s | of line rate | wall s |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|\n");

  std::vector<std::uint8_t> data(bytes), back(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<std::uint8_t>(i * 13 + 1);
  const auto row = [&](const char* what, std::size_t n, const Measure& m) {
    const double seconds = static_cast<double>(m.cycles) / hz;
    fmt::print("| {} | {} | {} | {:.2f} ms | {:.0f} | {:.3f} | {:.1f} |\n", what, n, m.cycles,
               seconds * 1e3, static_cast<double>(n) / seconds, static_cast<double>(n) / seconds / line_rate,
               m.wall_seconds);
  };
  row("write memory (WRITE_MEMORY frames of 4088 bytes)", bytes,
      Time(board, [&] { link->WriteMemory(0, data); }));
  row("read memory (READ_MEMORY frames of 4096 bytes)", bytes,
      Time(board, [&] { link->ReadMemory(0, back); }));
  if (back != data) {
    fmt::print(stderr, "read back differs from what was written\n");
    return 1;
  }

  // A register read is a 24-byte request and a 24-byte reply: 480 bits on the line.
  std::vector<std::uint64_t> trips;
  double wall = 0;
  for (int i = 0; i < round_trips; ++i) {
    const Measure m =
        Time(board, [&] { link->ReadRegister(regs::OffsetOf("ID_MAGIC")); }, true);
    trips.push_back(m.cycles);
    wall += m.wall_seconds;
  }
  std::sort(trips.begin(), trips.end());
  const double median_us = static_cast<double>(trips[trips.size() / 2]) / hz * 1e6;
  const double line_us = 48 * 10 / static_cast<double>(board.baud()) * 1e6;
  fmt::print("\nregister round trip (READ_REGISTER, 24 + 24 bytes): median {:.1f} us of board time "
             "({} cycles; min {}, max {} over {}), line time alone {:.1f} us; {:.2f} ms wall each\n",
             median_us, trips[trips.size() / 2], trips.front(), trips.back(), trips.size(), line_us,
             wall / round_trips * 1e3);
  board.CheckHealthy();
  return 0;
}
