// Clients that misbehave: malformed, truncated, oversized and out-of-order frames get an error
// reply; clients that vanish mid-transfer are cleaned up; other clients never notice.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <thread>

#include "systole/device.hpp"
#include "systole/server.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "tests/driver/raw_client.hpp"

namespace {

using namespace systole;
using namespace systole::protocol;
namespace asio = boost::asio;
using asio::ip::tcp;
using std::chrono::milliseconds;

using driver_test::Eventually;
using driver_test::RawClient;

ServerOptions Small() {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.max_payload = 1 << 20;
  return options;
}

// A well-behaved client runs a program: the server is still healthy.
void ExpectHealthy(const DeviceServer& server, int scale) {
  Device device = Device::Open("tcp://" + server.endpoint(), LoadConfig("tiny"));
  Program program = device.Load(driver_test::ScaleProgram(scale));
  const auto x = driver_test::ScaleInput(scale);
  program.WriteInput(0, x);
  ASSERT_TRUE(program.Launch().Wait(milliseconds(5000)));
  EXPECT_EQ(program.ReadOutput(0), driver_test::ScaleExpected(scale, x));
}

TEST(ServerHostile, RecoverableErrorsGetARepliesAndTheConnectionGoesOn) {
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), Small());
  RawClient client(server.port());
  Device bystander = Device::Open("tcp://" + server.endpoint(), LoadConfig("tiny"));

  PayloadWriter read_id;
  read_id.U32(0);
  client.Send(MessageType::kReadRegister, 1, read_id);
  EXPECT_EQ(client.ReceiveError(1), ErrorCode::kOutOfOrder) << "before HELLO";
  client.Hello(2);
  client.Send(MessageType::kHello, 3, {});
  EXPECT_EQ(client.ReceiveError(3), ErrorCode::kOutOfOrder) << "a second HELLO";

  auto corrupt =
      EncodeFrame(static_cast<std::uint16_t>(MessageType::kReadRegister), 4, read_id.bytes());
  corrupt.back() ^= 0xFF;
  client.SendBytes(corrupt);
  EXPECT_EQ(client.ReceiveError(4), ErrorCode::kBadChecksum);

  PayloadWriter short_payload;
  short_payload.U16(0);
  client.Send(MessageType::kReadRegister, 5, short_payload);
  EXPECT_EQ(client.ReceiveError(5), ErrorCode::kMalformed) << "truncated payload";

  PayloadWriter long_payload;
  long_payload.U32(0).U32(0);
  client.Send(MessageType::kReadRegister, 6, long_payload);
  EXPECT_EQ(client.ReceiveError(6), ErrorCode::kMalformed) << "trailing bytes";

  client.SendBytes(EncodeFrame(0x55, 7, {}));
  EXPECT_EQ(client.ReceiveError(7), ErrorCode::kUnknownType);
  client.SendBytes(EncodeFrame(ReplyType(MessageType::kReadRegister), 8, {}));
  EXPECT_EQ(client.ReceiveError(8), ErrorCode::kOutOfOrder) << "a reply from a client";
  client.Send(MessageType::kReadRegister, 8, read_id);
  EXPECT_EQ(client.ReceiveError(8), ErrorCode::kOutOfOrder) << "a reused request id";

  PayloadWriter bad_register;
  bad_register.U32(0x1F0);
  client.Send(MessageType::kReadRegister, 9, bad_register);
  EXPECT_EQ(client.ReceiveError(9), ErrorCode::kBadRegister);

  PayloadWriter outside;
  outside.U64(0).U32(16);
  client.Send(MessageType::kReadMemory, 10, outside);
  EXPECT_EQ(client.ReceiveError(10), ErrorCode::kOutOfBounds);

  client.Send(MessageType::kReadRegister, 11, read_id);
  const Frame ok = client.Receive();
  EXPECT_EQ(ok.type, ReplyType(MessageType::kReadRegister));
  PayloadReader magic(ok.payload);
  EXPECT_EQ(magic.U32(), regs::kMagic) << "still served";
  EXPECT_EQ(bystander.config().name, "tiny");
  ExpectHealthy(server, 3);
}

TEST(ServerHostile, FatalErrorsGetAReplyThenTheConnectionCloses) {
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), Small());
  struct Case {
    const char* name;
    std::size_t byte;
    std::uint8_t value;
    ErrorCode code;
  };
  for (const Case& c : {Case{"magic", 1, 'Z', ErrorCode::kBadMagic},
                        Case{"version", 4, 7, ErrorCode::kBadVersion},
                        Case{"oversized", 15, 0x7F, ErrorCode::kTooLarge}}) {
    SCOPED_TRACE(c.name);
    RawClient client(server.port());
    client.Hello(1);
    auto frame = EncodeFrame(static_cast<std::uint16_t>(MessageType::kReadRegister), 2,
                             std::vector<std::uint8_t>(4));
    frame[c.byte] = c.value;
    client.SendBytes(frame);
    EXPECT_EQ(client.ReceiveError(2), c.code);
    EXPECT_TRUE(client.Closed());
  }
  EXPECT_TRUE(Eventually([&] { return server.clients() == 0; }));
  ExpectHealthy(server, 2);
}

TEST(ServerHostile, AClientKilledMidTransferIsCleanedUp) {
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), Small());
  Device bystander = Device::Open("tcp://" + server.endpoint(), LoadConfig("tiny"));
  {
    RawClient client(server.port());
    client.Hello(1);
    PayloadWriter allocate;
    allocate.U64(4096).U64(64).U8(1).U64(0x40000);
    client.Send(MessageType::kAllocate, 2, allocate);
    ASSERT_EQ(client.Receive().type, ReplyType(MessageType::kAllocate));
    PayloadWriter write;
    write.U64(0x40000).Bytes(std::vector<std::uint8_t>(4096, 0x5A));
    client.Send(MessageType::kWriteMemory, 3, write);
    ASSERT_EQ(client.Receive().type, ReplyType(MessageType::kWriteMemory));
    // Half a frame: a header promising 64 KiB, a little of it, then the client dies.
    PayloadWriter partial;
    partial.U64(0x40000).Bytes(std::vector<std::uint8_t>(65536));
    auto frame = EncodeFrame(static_cast<std::uint16_t>(MessageType::kWriteMemory), 4,
                             partial.bytes());
    frame.resize(3000);
    client.SendBytes(frame);
    client.Close();
  }
  EXPECT_TRUE(Eventually([&] { return server.clients() == 1; }));
  // Its memory is free again, and zeroed: the next owner sees nothing of it.
  Buffer reused = bystander.AllocateAt(0x40000, 4096);
  EXPECT_EQ(reused.Read(), std::vector<std::uint8_t>(4096, 0));
  ExpectHealthy(server, 4);
}

TEST(ServerHostile, ConnectAndVanishRepeatedly) {
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), Small());
  for (int i = 0; i < 20; ++i) {
    RawClient client(server.port());
    if (i % 2 == 0) client.SendBytes({0x53, 0x59});  // two bytes of a header
  }
  EXPECT_TRUE(Eventually([&] { return server.clients() == 0; }));
  ExpectHealthy(server, 5);
}

}  // namespace
