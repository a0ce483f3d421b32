// The USB link: URIs, libusb's errors without hardware, and the whole simulated path —
// driver framing, byte stream, Verilated bridge, core (usb+sim).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "arch/regs/regmap.hpp"
#include "driver/sim/sim_links.hpp"
#include "systole/device.hpp"
#include "systole/protocol.hpp"
#include "systole/usb_transport.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "toolchain/asm/assembler.hpp"

namespace {

using namespace systole;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using std::chrono::milliseconds;

using driver_test::OpenError;

TEST(UsbUri, ParsesVidPidAndSerial) {
  const auto a = usb::ParseUsbUri("usb://1d50:6018");
  EXPECT_EQ(a.vendor, 0x1d50);
  EXPECT_EQ(a.product, 0x6018);
  EXPECT_EQ(a.serial, "");
  const auto b = usb::ParseUsbUri("usb://0403:6010/FT4ABCD");
  EXPECT_EQ(b.vendor, 0x0403);
  EXPECT_EQ(b.serial, "FT4ABCD");
  EXPECT_THAT(OpenError("usb://1d50"), HasSubstr("expected usb://VID:PID"));
  EXPECT_THAT(OpenError("usb://1d5:6018"), HasSubstr("vendor id '1d5' is not four hex digits"));
  EXPECT_THAT(OpenError("usb://1d50:60x8"), HasSubstr("product id '60x8'"));
  EXPECT_THAT(OpenError("usb://1d50:6018/"), HasSubstr("empty serial"));
}

// No board is attached here: the error names the device and says what went wrong (no such
// device, or no USB at all in this container).
TEST(UsbLibusb, AbsentDeviceIsAClearError) {
  const std::string message = OpenError("usb://1d50:fffe/NOPE");
  EXPECT_THAT(message, HasSubstr("usb://1d50:fffe/NOPE"));
  EXPECT_THAT(message, AnyOf(HasSubstr("no USB device 1d50:fffe with serial 'NOPE' is connected"),
                             HasSubstr("cannot initialise libusb")));
}

TEST(UsbSim, RegistersAndMemoryThroughTheBridge) {
  auto link = OpenLink("usb+sim", LoadConfig("tiny"));
  EXPECT_EQ(link->ReadRegister(regs::OffsetOf("ID_MAGIC")), regs::kMagic);
  EXPECT_EQ(link->ReadRegister(regs::OffsetOf("CFG_MEM_SIZE_LO")), LoadConfig("tiny").memory_bytes);
  // Larger than the bridge's payload limit and oddly aligned: cut into several frames.
  std::vector<std::uint8_t> data(9001);
  std::iota(data.begin(), data.end(), std::uint8_t{7});
  link->WriteMemory(0x1003, data);
  std::vector<std::uint8_t> back(data.size());
  link->ReadMemory(0x1003, back);
  EXPECT_EQ(back, data);
  std::vector<std::uint8_t> edge(3);
  link->ReadMemory(0x1003 + 9000, edge);
  EXPECT_EQ(edge[0], data.back());
  EXPECT_EQ(edge[1], 0);
  EXPECT_TRUE(link->WaitForInterrupt(milliseconds(100))) << "nothing to run: idle at once";
}

TEST(UsbSim, RefusalsBecomeLinkErrorsNamingTheRequest) {
  auto link = OpenLink("usb+sim", LoadConfig("tiny"));
  std::vector<std::uint8_t> bytes(16);
  const std::uint64_t end = LoadConfig("tiny").memory_bytes;
  try {
    link->ReadMemory(end - 8, bytes);
    FAIL();
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), HasSubstr("READ_MEMORY of 16 bytes at 0x"));
    EXPECT_THAT(error.what(), HasSubstr("OUT_OF_BOUNDS"));
  }
  EXPECT_THAT([&] { link->ReadRegister(0x1000); },
              ::testing::ThrowsMessage<LinkError>(HasSubstr("BAD_REGISTER")));
  EXPECT_THROW(link->Allocate(1ull << 40, 64, std::nullopt), LinkError);
  link->WriteMemory(0, bytes);  // the link goes on working
}

// WAIT with a launch still running: the bridge counts the timeout in device cycles and says
// "timed out"; a longer wait sees the launch finish.
TEST(UsbSim, WaitTimesOutWhileALaunchRuns) {
  Device device = Device::Open("usb+sim", LoadConfig("tiny"));
  Program program = device.Load(assembly::AssembleFile(
      std::string(SYSTOLE_SOURCE_DIR) + "/examples/asm/conv_pool_tiny.s"));
  systole::Run run = program.Launch();
  EXPECT_FALSE(run.Wait(milliseconds(0)));
  EXPECT_TRUE(run.Wait(milliseconds(60000)));
  EXPECT_GT(device.ReadCounters()["INSNS"], 0u);
}

// Raw frames into the simulated bridge: a corrupt frame and garbage get ERROR replies with the
// documented codes, and the next good frame is answered.
TEST(UsbSim, HostileFramesGetErrorsAndTheBridgeKeepsWorking) {
  auto stream = usb::OpenSimUsbStream(LoadConfig("tiny"));
  protocol::FrameDecoder decoder;
  auto exchange = [&](const std::vector<std::uint8_t>& bytes) {
    stream->Write(bytes);
    protocol::Frame frame;
    std::array<std::uint8_t, 256> chunk;
    while (decoder.Next(frame) != protocol::FrameDecoder::Status::kFrame) {
      const std::size_t n = stream->Read(chunk, milliseconds(20000));
      if (n == 0) ADD_FAILURE() << "no reply";
      if (n == 0) return frame;
      decoder.Feed(std::span(chunk).first(n));
    }
    return frame;
  };
  auto code = [](const protocol::Frame& f) { return protocol::DecodeErrorReply(f.payload).code; };
  protocol::PayloadWriter hello;
  hello.U16(protocol::kVersion).String("");
  EXPECT_EQ(exchange(protocol::EncodeFrame(1, 1, hello.bytes())).type, 0x81);
  protocol::PayloadWriter read;
  read.U32(0);
  auto frame = protocol::EncodeFrame(2, 2, read.bytes());
  frame[20] ^= 1;
  auto reply = exchange(frame);
  EXPECT_EQ(reply.type, 0x7F);
  EXPECT_EQ(code(reply), protocol::ErrorCode::kBadChecksum);
  reply = exchange({'n', 'o', 'i', 's', 'e'});
  EXPECT_EQ(code(reply), protocol::ErrorCode::kBadMagic);
  reply = exchange(protocol::EncodeFrame(6, 3, std::vector<std::uint8_t>(25)));
  EXPECT_EQ(code(reply), protocol::ErrorCode::kUnknownType) << "ALLOCATE: the host keeps the books";
  reply = exchange(protocol::EncodeFrame(2, 4, read.bytes()));
  ASSERT_EQ(reply.type, 0x82);
  EXPECT_EQ(reply.request_id, 4u);
  EXPECT_EQ(protocol::PayloadReader(reply.payload).U32(), regs::kMagic);
}

}  // namespace
