// serial:// end to end without a board: the driver's real serial code opens the slave end of a
// pseudo-terminal whose master end drives the Verilated systole_uart_top (tiny) through a
// bit-level UART model at the RTL's baud (driver/sim/pty_board.hpp). Programs give the outputs
// and functional counters of `ref`, and every counter of usb+sim (the same core and memory
// behind the same bridge: only the UART differs).
//
// Here (make test): the board's identity and memory, the asm examples that fit tiny, one
// compiled HLO example. serial_board_long_test.cpp (label `long`, make test-long): every HLO
// file of examples/hlo and the corpus that compiles for tiny with device steps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <filesystem>

#include "driver/sim/pty_board.hpp"
#include "driver/sim/sim_links.hpp"
#include "systole/device.hpp"
#include "systole/protocol.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "tests/driver/serial_hlo_run.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole {
namespace {

using driver_test::Outcome;
using driver_test::RunOnce;

TEST(SerialBoard, IdentityAndMemoryThroughThePty) {
  const Config config = LoadConfig("tiny");
  serial::PtyBoard board(config);
  EXPECT_THAT(board.Uri(), ::testing::MatchesRegex("serial:///dev/pts/[0-9]+\\?baud=3000000"));
  EXPECT_EQ(board.clocks_per_bit(), 16u);  // 48 MHz / 3 Mbaud
  Device device = Device::Open(board.Uri(), config);
  EXPECT_EQ(device.config().name, "tiny");
  Buffer buffer = device.Allocate(2048);
  std::vector<std::uint8_t> data(1001);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 31 + 7);
  buffer.Write(data, 17);
  std::vector<std::uint8_t> back(data.size());
  buffer.Read(back, 17);
  EXPECT_EQ(back, data);
  board.CheckHealthy();
  EXPECT_GT(board.cycles(), 0u);
}

// A host that writes garbage gets one ERROR reply (the bridge then hunts for the next "SYLK"),
// and the next host session works: the board's line and bridge recover by themselves.
TEST(SerialBoard, GarbageOnTheLineGetsAnErrorReplyAndTheBoardRecovers) {
  const Config config = LoadConfig("tiny");
  serial::PtyBoard board(config);
  {
    const int fd = ::open(board.port().c_str(), O_RDWR | O_NOCTTY);
    ASSERT_GE(fd, 0);
    termios raw{};
    ASSERT_EQ(::tcgetattr(fd, &raw), 0);
    ::cfmakeraw(&raw);
    ASSERT_EQ(::tcsetattr(fd, TCSANOW, &raw), 0);
    const std::string garbage = "AT+GMR\r\nhello board\r\n";
    ASSERT_EQ(::write(fd, garbage.data(), garbage.size()), static_cast<ssize_t>(garbage.size()));
    protocol::FrameDecoder decoder;
    protocol::Frame reply;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (decoder.Next(reply) != protocol::FrameDecoder::Status::kFrame) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no reply to garbage";
      pollfd readable{.fd = fd, .events = POLLIN, .revents = 0};
      if (::poll(&readable, 1, 100) <= 0) continue;
      std::array<std::uint8_t, 64> chunk;
      const ssize_t n = ::read(fd, chunk.data(), chunk.size());
      ASSERT_GT(n, 0);
      decoder.Feed(std::span(chunk).first(static_cast<std::size_t>(n)));
    }
    EXPECT_EQ(reply.type, static_cast<std::uint16_t>(protocol::MessageType::kError));
    EXPECT_EQ(protocol::DecodeErrorReply(reply.payload).code, protocol::ErrorCode::kBadMagic);
    ::close(fd);
  }
  Device device = Device::Open(board.Uri(), config);
  EXPECT_EQ(device.config().name, "tiny");
  board.CheckHealthy();
}

TEST(SerialBoard, AsmProgramsMatchRefAndUsbSim) {
  const Config config = LoadConfig("tiny");
  serial::PtyBoard board(config);
  Device serial = Device::Open(board.Uri(), config);
  Device ref = Device::Open("ref", config);
  Device usb = Device::Open("usb+sim", config);
  const std::pair<std::string, image::Program> programs[] = {
      {"conv_pool_tiny.s", assembly::AssembleFile(driver_test::Example("conv_pool_tiny.s"))},
      {"scale 3", driver_test::ScaleProgram(3)}};
  for (const auto& [name, source] : programs) {
    SCOPED_TRACE(name);
    const Outcome expected = RunOnce(ref, source, 0);
    const Outcome got = RunOnce(serial, source, 0);
    EXPECT_EQ(got.outputs, expected.outputs);
    driver_test::ExpectSameFunctionalCounters(got.counters, expected.counters, "serial vs ref");
    EXPECT_EQ(got.counters, RunOnce(usb, source, 0).counters) << "serial vs usb+sim";
  }
  board.CheckHealthy();
}

TEST(SerialBoard, SerialSimUriOwnsItsBoard) {
  const Config config = LoadConfig("tiny");
  Device device = Device::Open("serial+sim", config);
  EXPECT_EQ(device.uri(), "serial+sim");
  const Outcome got = RunOnce(device, driver_test::ScaleProgram(-2), 0);
  Device ref = Device::Open("ref", config);
  EXPECT_EQ(got.outputs, RunOnce(ref, driver_test::ScaleProgram(-2), 0).outputs);
}

TEST(SerialBoard, AConfigurationWithoutABoardIsRefused) {
  if ((std::string(",") + SYSTOLE_SERIAL_SIM_CONFIGS + ",").find(",small,") != std::string::npos) {
    GTEST_SKIP() << "this build has a small serial board (SYSTOLE_SERIAL_SIM_CONFIGS)";
  }
  try {
    serial::PtyBoard board(LoadConfig("small"));
    ADD_FAILURE() << "a small serial board started; this build Verilates tiny's only";
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr("SYSTOLE_SERIAL_SIM_CONFIGS"));
  }
}

TEST(SerialBoard, CompiledHloMatchesRef) {
  const Config config = LoadConfig("tiny");
  serial::PtyBoard board(config);
  Device serial = Device::Open(board.Uri(), config);
  // Three device steps with host steps between them; the cheapest of the four s8 examples here.
  EXPECT_TRUE(driver_test::ExpectHloMatchesRef(
      compiler::testing::ExampleFile("s8_dense_requant_host.hlo"), serial));
  board.CheckHealthy();
}

}  // namespace
}  // namespace systole
