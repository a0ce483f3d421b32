// The device server against clients that try to exhaust it (docs/PROTOCOL.md, "Threat model"):
// connections that never say HELLO, headers that promise large payloads, clients that never
// read their replies, guessed tokens. Every limit is set short here so the tests stay quick.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "systole/device.hpp"
#include "systole/server.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "tests/driver/raw_client.hpp"

namespace {

using namespace systole;
using namespace systole::protocol;
using driver_test::Eventually;
using driver_test::RawClient;
using ::testing::HasSubstr;
using ::testing::Not;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Resident memory of this process (the server runs in it), from /proc/self/status.
std::uint64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// Connections that never send a byte used to fill --max-clients, locking everyone out.
TEST(ServerLimits, SilentConnectionsDoNotLockOutAClient) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.token = "s3cret";
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
  std::vector<std::unique_ptr<RawClient>> silent;
  for (int i = 0; i < 64; ++i) silent.push_back(std::make_unique<RawClient>(server.port()));
  std::this_thread::sleep_for(milliseconds(100));  // let the server accept them all
  Device device = Device::Open("tcp://" + server.endpoint() + "?token=s3cret", LoadConfig("tiny"));
  EXPECT_EQ(device.config().name, "tiny");
}

// A header promising a large payload before HELLO used to make the server allocate and zero
// it (16 MiB by default) before a byte of it arrived.
TEST(ServerLimits, ALargeFrameBeforeHelloIsRefusedAtOnce) {
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), driver_test::LoopbackServerOptions());
  RawClient client(server.port(), milliseconds(3000));
  auto frame = EncodeFrame(static_cast<std::uint16_t>(MessageType::kHello), 1,
                           std::vector<std::uint8_t>(1 << 20));
  frame.resize(kHeaderBytes);  // the header alone
  client.SendBytes(frame);
  EXPECT_EQ(client.ReceiveError(1), ErrorCode::kTooLarge);
  EXPECT_TRUE(client.Closed());
}

// A client that asks for megabytes and never reads them used to make the server queue every
// reply: 256 reads of 1 MiB held 256 MiB.
TEST(ServerLimits, AClientThatNeverReadsIsNotBufferedWithoutBound) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.max_payload = 1 << 20;
  DeviceServer server(OpenRefLink(LoadConfig("small")), options);
  RawClient client(server.port());
  client.Hello(1);
  PayloadWriter allocate;
  allocate.U64(1 << 20).U64(4096).U8(1).U64(0x100000);
  client.Send(MessageType::kAllocate, 2, allocate);
  ASSERT_EQ(client.Receive().type, ReplyType(MessageType::kAllocate));
  const std::uint64_t before = ResidentBytes();
  std::uint64_t peak = before;
  std::thread sender([&] {
    for (std::uint32_t id = 3; id < 3 + 256; ++id) {
      PayloadWriter read;
      read.U64(0x100000).U32(1 << 20);
      client.Send(MessageType::kReadMemory, id, read);
    }
  });
  for (int i = 0; i < 150; ++i) {  // 1.5 s: the server has long stopped reading by then
    peak = std::max(peak, ResidentBytes());
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_LT(peak - before, std::uint64_t{48} << 20) << "resident memory grew by " << (peak - before);
  client.Close();  // the sender's writes fail or finish now
  sender.join();
}

TEST(ServerLimits, TheTokenIsNeverEchoed) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.token = "right-token-1234";
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
  const std::string endpoint = "tcp://" + server.endpoint();
  try {
    Device::Open(endpoint + "?token=guessed-token-5678", LoadConfig("tiny"));
    FAIL() << "a wrong token was accepted";
  } catch (const DeviceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("UNAUTHORIZED"));
    EXPECT_THAT(error.what(), Not(HasSubstr("guessed-token-5678")));
  }
  Device device = Device::Open(endpoint + "?token=right-token-1234", LoadConfig("tiny"));
  EXPECT_THAT(std::string(device.uri()), Not(HasSubstr("right-token-1234")));
  try {
    std::vector<std::uint8_t> bytes(4);
    device.link().ReadMemory(0, bytes);  // not this client's memory: an error naming the device
    FAIL();
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), Not(HasSubstr("right-token-1234")));
  }
}

// Wrong tokens were answered at once: thousands of guesses a second. Each failure is now
// answered only after a delay, one at a time across all connections.
TEST(ServerLimits, WrongTokensAreAnsweredSlowly) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.token = "s3cret";
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
  const auto start = Clock::now();
  std::vector<std::thread> guessers;
  for (int i = 0; i < 4; ++i) {
    guessers.emplace_back([&, i] {
      RawClient client(server.port());
      client.SendHello(1, "guess" + std::to_string(i));
      EXPECT_EQ(client.ReceiveError(1), ErrorCode::kUnauthorized);
    });
  }
  for (std::thread& guesser : guessers) guesser.join();
  EXPECT_GE(Clock::now() - start, milliseconds(1500)) << "4 guesses, at most 2 a second";
  RawClient right(server.port());
  const auto hello = Clock::now();
  right.Hello(1, "s3cret");
  EXPECT_LT(Clock::now() - hello, milliseconds(400)) << "the right token is not delayed";
}

// No HELLO within hello_timeout, or nothing for idle_timeout: the connection is closed. A
// client whose request is with the device (a WAIT) is not idle; one that does not read is.
TEST(ServerLimits, SilentAndIdleConnectionsAreClosed) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.hello_timeout = milliseconds(200);
  options.idle_timeout = milliseconds(300);
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
  RawClient silent(server.port());
  RawClient idle(server.port());
  idle.Hello(1);
  RawClient unread(server.port());
  unread.Hello(1);
  PayloadWriter allocate;
  allocate.U64(256 << 10).U64(4096).U8(1).U64(0x40000);
  unread.Send(MessageType::kAllocate, 2, allocate);
  ASSERT_EQ(unread.Receive().type, ReplyType(MessageType::kAllocate));
  for (std::uint32_t id = 3; id < 3 + 64; ++id) {  // 16 MiB of replies it will never read
    PayloadWriter read;
    read.U64(0x40000).U32(256 << 10);
    unread.Send(MessageType::kReadMemory, id, read);
  }
  const auto start = Clock::now();
  EXPECT_TRUE(silent.Closed());
  EXPECT_LT(Clock::now() - start, milliseconds(1500));
  EXPECT_TRUE(idle.Closed());
  EXPECT_GE(Clock::now() - start, milliseconds(250));
  EXPECT_TRUE(Eventually([&] { return server.clients() == 0; }, milliseconds(3000)))
      << "the client that does not read is closed too";
}

TEST(ServerLimits, MaxClientsCountsGreetedClientsOnly) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.max_clients = 1;
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
  RawClient silent(server.port());  // connected, not greeted: not a client yet
  RawClient first(server.port());
  first.Hello(1);
  RawClient second(server.port());
  second.SendHello(1);
  EXPECT_EQ(second.ReceiveError(1), ErrorCode::kTooManyClients);
  EXPECT_TRUE(second.Closed());
}

TEST(ServerLimits, OptionsOutsideTheirRangeAreNamed) {
  auto refused = [](auto change) {
    ServerOptions options = driver_test::LoopbackServerOptions();
    change(options);
    try {
      DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
      return std::string("accepted");
    } catch (const ServerError& error) {
      return std::string(error.what());
    }
  };
  EXPECT_THAT(refused([](ServerOptions& o) { o.max_payload = 16; }), HasSubstr("max_payload 16"));
  EXPECT_THAT(refused([](ServerOptions& o) { o.max_clients = 0; }), HasSubstr("max_clients 0"));
  EXPECT_THAT(refused([](ServerOptions& o) { o.max_allocation_bytes = 0; }),
              HasSubstr("max_allocation_bytes 0"));
  EXPECT_THAT(refused([](ServerOptions& o) { o.idle_timeout = milliseconds(0); }),
              HasSubstr("idle_timeout 0 ms"));
}

}  // namespace
