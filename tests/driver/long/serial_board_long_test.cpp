// Every HLO file of examples/hlo and the corpus that fits tiny, compiled and run through the
// serial board on a pseudo-terminal (driver/sim/pty_board.hpp) and on `ref`: the same result
// bits and functional counters. Minutes (a 3 Mbaud line, simulated): make test-long.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "driver/sim/pty_board.hpp"
#include "systole/device.hpp"
#include "tests/driver/serial_hlo_run.hpp"

namespace systole {
namespace {

// Every HLO file of examples/hlo and the corpus that fits tiny (ResNet-50 is left to the rtl
// device's long test: hours through a 3 Mbaud line in simulation).
TEST(SerialBoardLong, EveryHloThatFitsTinyMatchesRef) {
  const Config config = LoadConfig("tiny");
  serial::PtyBoard board(config);
  Device serial = Device::Open(board.Uri(), config);
  std::vector<std::filesystem::path> files;
  for (const auto& dir : {std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples/hlo",
                          std::filesystem::path(SYSTOLE_SHARED_DIR) / "corpus/hlo"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".hlo" &&
          entry.path().filename().string().find("resnet50") == std::string::npos) {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  std::size_t ran = 0;
  for (const auto& file : files) {
    if (driver_test::ExpectHloMatchesRef(file, serial)) ++ran;
  }
  std::printf("%zu of %zu HLO files fit tiny and ran through the serial board\n", ran, files.size());
  // The four s8 examples. The corpus is floating point, which tiny's int8 MXU cannot run (two
  // files run entirely on the host there): a bf16 serial board (SYSTOLE_SERIAL_SIM_CONFIGS=small)
  // would take them, at the cost of Verilating the bf16 core once more.
  EXPECT_GE(ran, 4u);
  board.CheckHealthy();
}

}  // namespace
}  // namespace systole
