// The netlist is the design (issue 14, docs/FPGA.md): the iCEBreaker top as Yosys synthesized it
// for the iCE40 (fpga/flow.py's netlist.v: SB_LUT4, SB_CARRY, SB_DFF*, SB_RAM40_4K and the
// device memory's SB_SPRAM256KA, simulated with Yosys's own cell models, share/ice40/cells_sim.v;
// Yosys expands the logic cells into their models' expressions first: CMakeLists.txt) runs
// behind the driver's real serial:// code, as the RTL board top does in
// tests/driver/serial_board_test.cpp: a pseudo-terminal, the bit-level UART model at the board's
// own baud (driver/sim/pty_board.hpp), the netlist's RX and TX pins. A compiled HLO program gives
// the bits, device steps, MACs and functional counters of `ref`: block-RAM inference, reset and
// initial values and the mapping to cells behave as the RTL. The PLL is the one cell without a
// model: fpga/sim/sb_pll40_pad.sv feeds the harness's clock through it (the design below the PLL).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <verilated.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "Vicebreaker_netlist.h"
#include "driver/sim/pty_board.hpp"
#include "driver/sim/uart_board.hpp"
#include "sim/rtl/verilator_context.hpp"
#include "systole/device.hpp"
#include "tests/driver/serial_hlo_run.hpp"
#include "tests/compiler/compiler_test_util.hpp"

namespace systole {
namespace {

constexpr const char* kConfig = "icebreaker";

// The synthesized icebreaker_top, seen from its pins: CLK (the PLL passes it on), RX, TX, BTN_N.
class NetlistBoard final : public serial::UartBoard {
 public:
  explicit NetlistBoard(const Config& config)
      : context_(std::make_unique<VerilatedContext>()),
        model_(std::make_unique<Vicebreaker_netlist>(context_.get(), "icebreaker_netlist")) {
    // The UART's bit period in cycles, as systole_uart_top derives it from the same numbers.
    const auto clock_hz = static_cast<std::uint64_t>(config.clock_mhz * 1e6);
    clocks_per_bit_ = static_cast<unsigned>((clock_hz + kBaud / 2) / kBaud);
    model_->CLK = 0;
    model_->RX = 1;     // the line idles high
    model_->BTN_N = 1;  // the reset button is not pressed
    model_->eval();
    // systole_board_reset holds the device in reset for 2^12 cycles after configuration (the
    // flip-flops' initial values); bytes sent before it lets go would be lost.
    for (int i = 0; i < kResetCycles; ++i) Cycle(true);
  }
  ~NetlistBoard() override {
    model_->final();
    Verilated::threadContextp(context_.get());
    model_.reset();
    rtl::ForgetThreadContext();
  }

  bool Cycle(bool host_line) override {
    model_->RX = host_line;
    model_->CLK = 1;
    model_->eval();
    model_->CLK = 0;
    model_->eval();
    return model_->TX != 0;
  }
  std::uint32_t Baud() const override { return kBaud; }
  unsigned ClocksPerBit() const override { return clocks_per_bit_; }

 private:
  static constexpr std::uint32_t kBaud = SYSTOLE_NETLIST_BAUD;  // icebreaker_top's BAUD
  static constexpr int kResetCycles = 2 * 4096;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Vicebreaker_netlist> model_;
  unsigned clocks_per_bit_ = 0;
};

// The board on a pseudo-terminal, its model built and clocked on the board's thread.
std::unique_ptr<serial::PtyBoard> StartBoard(const Config& config) {
  return std::make_unique<serial::PtyBoard>(
      [config] { return std::make_unique<NetlistBoard>(config); }, config.clock_mhz * 1e6);
}

// The board's serial:// URI with a reply timeout for the netlist's pace: it simulates a few
// thousand cycles a second (docs/FPGA.md), so a 1 KiB frame, 123 000 cycles on the 3 Mbaud
// line, takes half a minute of wall time, past the link's 20 s default.
std::string NetlistUri(const serial::PtyBoard& board) {
  return board.Uri() + "&timeout_ms=900000";
}

// Prints the cycles the board simulated since `start` and their rate (docs/FPGA.md's figures).
void PrintPace(const serial::PtyBoard& board, std::chrono::steady_clock::time_point start) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("icebreaker netlist: %llu cycles in %.1f s (%.0f cycles/s)\n",
              static_cast<unsigned long long>(board.cycles()), seconds,
              static_cast<double>(board.cycles()) / seconds);
}

TEST(IcebreakerNetlist, IdentityAndMemoryThroughThePty) {
  const Config config = LoadConfig(kConfig);
  const auto start = std::chrono::steady_clock::now();
  const auto board = StartBoard(config);
  Device device = Device::Open(NetlistUri(*board), config);
  EXPECT_EQ(device.config().name, kConfig);  // the identity registers of the netlist
  Buffer buffer = device.Allocate(2048);
  std::vector<std::uint8_t> data(1001);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 31 + 7);
  buffer.Write(data, 17);  // into the SPRAMs and back
  std::vector<std::uint8_t> back(data.size());
  buffer.Read(back, 17);
  EXPECT_EQ(back, data);
  board->CheckHealthy();
  PrintPace(*board, start);
}

// The cheapest program (a few hundred bytes over the line): 2x4 int8 through the MXU, the
// vector unit's requantizer and the store. icebreaker is tiny with another memory and clock, so
// tiny's program runs on it unchanged.
TEST(IcebreakerNetlist, AsmProgramMatchesRef) {
  const Config config = LoadConfig(kConfig);
  const auto start = std::chrono::steady_clock::now();
  const auto board = StartBoard(config);
  Device device = Device::Open(NetlistUri(*board), config);
  Device ref = Device::Open("ref", config);
  const image::Program program = driver_test::ScaleProgram(3);
  const driver_test::Outcome expected = driver_test::RunOnce(ref, program, 0);
  const driver_test::Outcome got = driver_test::RunOnce(device, program, 0);
  EXPECT_EQ(got.outputs, expected.outputs);
  driver_test::ExpectSameFunctionalCounters(got.counters, expected.counters, "netlist vs ref");
  board->CheckHealthy();
  PrintPace(*board, start);
}

TEST(IcebreakerNetlist, CompiledHloMatchesRef) {
  const Config config = LoadConfig(kConfig);
  const auto start = std::chrono::steady_clock::now();
  const auto board = StartBoard(config);
  Device device = Device::Open(NetlistUri(*board), config);
  EXPECT_TRUE(driver_test::ExpectHloMatchesRef(
      compiler::testing::ExampleFile("s8_dense_requant_host.hlo"), device, kConfig));
  board->CheckHealthy();
  PrintPace(*board, start);
}

}  // namespace
}  // namespace systole
