// The device server in process: 32 clients at once, isolation between them, limits, and the
// token rule. tcp_parity_test.cpp checks that results and counters match the hosted device's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "systole/device.hpp"
#include "systole/server.hpp"
#include "tests/driver/driver_test_util.hpp"

namespace {

using namespace systole;
using ::testing::HasSubstr;
using std::chrono::milliseconds;

TEST(Server, ThirtyTwoClientsGetExactlyTheirOwnResults) {
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), driver_test::LoopbackServerOptions());
  const std::string uri = "tcp://" + server.endpoint();
  constexpr int kClients = 32;
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      try {
        Device device = Device::Open(uri, LoadConfig("tiny"));
        const int scale = c - 16;  // every client a different program
        Program program = device.Load(driver_test::ScaleProgram(scale));
        for (int round = 0; round < 3; ++round) {
          const auto x = driver_test::ScaleInput(c + round);
          program.WriteInput(0, x);
          device.ClearCounters();
          if (!program.Launch().Wait(milliseconds(20000))) throw std::runtime_error("timed out");
          if (program.ReadOutput(0) != driver_test::ScaleExpected(scale, x)) {
            throw std::runtime_error(fmt::format("round {}: wrong output", round));
          }
          if (device.ReadCounters()["INSNS"] != 6) throw std::runtime_error("counters mixed up");
        }
      } catch (const std::exception& error) {
        failures[static_cast<std::size_t>(c)] = error.what();
      }
    });
  }
  for (std::thread& client : clients) client.join();
  for (int c = 0; c < kClients; ++c) {
    EXPECT_EQ(failures[static_cast<std::size_t>(c)], "") << "client " << c;
  }
  EXPECT_EQ(server.launches(), 3u * kClients);
}

TEST(Server, ClientsCannotTouchEachOthersMemory) {
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), driver_test::LoopbackServerOptions());
  const std::string uri = "tcp://" + server.endpoint();
  Device alice = Device::Open(uri, LoadConfig("tiny"));
  Device mallory = Device::Open(uri, LoadConfig("tiny"));
  Buffer secret = alice.AllocateAt(0x8000, 64);
  secret.Write(std::vector<std::uint8_t>(64, 0xAB));

  std::vector<std::uint8_t> bytes(64);
  try {
    mallory.link().ReadMemory(0x8000, bytes);
    FAIL() << "read another client's memory";
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), HasSubstr("OUT_OF_BOUNDS"));
  }
  EXPECT_THROW(mallory.link().WriteMemory(0x8000, bytes), LinkError);
  EXPECT_THROW(mallory.AllocateAt(0x8000, 64), DeviceError) << "taken";

  // A program that reads alice's memory: instructions in mallory's buffer, DMA outside it.
  const image::Program thief = assembly::Assemble(
      ".config tiny\n"
      "load mem=ub, dram=0x8000, stride=4, row=0, rows=1, elems=4, signal=store\n"
      "store mem=ub, dram=0x8000, stride=4, row=0, rows=1, elems=4, wait=load\n"
      "halt\n");
  Buffer text = mallory.Allocate(thief.TextBytes());
  std::vector<std::uint8_t> words;
  for (const auto& word : thief.words) words.insert(words.end(), word.begin(), word.end());
  text.Write(words);
  try {
    mallory.Launch(text.address(), 3).Wait(milliseconds(5000));
    FAIL() << "ran a program outside its memory";
  } catch (const RunError& error) {
    EXPECT_EQ(error.code(), regs::ErrorCode::kDramRange);
    EXPECT_EQ(error.fault_pc(), text.address());
  }
  EXPECT_EQ(secret.Read(), std::vector<std::uint8_t>(64, 0xAB));

  // A STORE over the program's own instructions could smuggle in an unchecked one.
  const image::Program rewriter = assembly::Assemble(
      ".config tiny\n.text at=0x10000\n"
      "store mem=ub, dram=0x10020, stride=4, row=0, rows=8, elems=4\n"  // over the HALT
      "halt\n");
  Program loaded = mallory.Load(rewriter);
  try {
    loaded.Launch().Wait(milliseconds(5000));
    FAIL() << "stored over its own instructions";
  } catch (const RunError& error) {
    EXPECT_EQ(error.code(), regs::ErrorCode::kDramRange);
  }
}

TEST(Server, LargeBuffersRoundTripInChunks) {
  DeviceServer server(OpenRefLink(LoadConfig("small")), driver_test::LoopbackServerOptions());
  Device device = Device::Open("tcp://" + server.endpoint(), LoadConfig("small"));
  std::vector<std::uint8_t> data((9u << 20) + 123);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + i / 4096);
  Buffer buffer = device.Allocate(data.size());
  buffer.Write(data);
  EXPECT_EQ(buffer.Read(), data);
}

// Replies leave from the device thread when the socket takes them whole and through the I/O
// thread's queue when it does not (a large read reply, a client slow to read): several clients
// moving megabytes at once, each reading its own bytes back in order, exercise both.
TEST(Server, ConcurrentLargeTransfersStayInOrder) {
  DeviceServer server(OpenRefLink(LoadConfig("small")), driver_test::LoopbackServerOptions());
  const std::string uri = "tcp://" + server.endpoint();
  constexpr int kClients = 4;
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      try {
        Device device = Device::Open(uri, LoadConfig("small"));
        std::vector<std::uint8_t> data((3u << 20) + 4096u * static_cast<unsigned>(c) + 5);
        Buffer buffer = device.Allocate(data.size());
        for (int round = 0; round < 3; ++round) {
          const auto salt = static_cast<std::size_t>(c * 5 + round);
          for (std::size_t i = 0; i < data.size(); ++i) {
            data[i] = static_cast<std::uint8_t>(i * 13 + i / 1000 + salt);
          }
          buffer.Write(data);
          if (buffer.Read() != data) throw std::runtime_error(fmt::format("round {}", round));
          // A register round trip between the bulk transfers: a small reply after large ones.
          if (device.link().ReadRegister(0) != 0x53595354) throw std::runtime_error("ID_MAGIC");
        }
      } catch (const std::exception& error) {
        failures[static_cast<std::size_t>(c)] = error.what();
      }
    });
  }
  for (std::thread& client : clients) client.join();
  for (int c = 0; c < kClients; ++c) {
    EXPECT_EQ(failures[static_cast<std::size_t>(c)], "") << "client " << c;
  }
}

TEST(Server, AllocationLimitPerClient) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.max_allocation_bytes = 4096;
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
  Device device = Device::Open("tcp://" + server.endpoint(), LoadConfig("tiny"));
  Buffer a = device.Allocate(4000);
  try {
    device.Allocate(128);
    FAIL();
  } catch (const DeviceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("NO_MEMORY"));
    EXPECT_THAT(error.what(), HasSubstr("limit of 4096"));
  }
}

TEST(Server, PublicAddressNeedsAToken) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.address = "0.0.0.0";
  try {
    DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
    FAIL() << "listened on 0.0.0.0 without a token";
  } catch (const ServerError& error) {
    EXPECT_THAT(error.what(), HasSubstr("without a token"));
  }
  options.token = "s3cret";
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
  const std::string endpoint = "127.0.0.1:" + std::to_string(server.port());
  try {
    Device::Open("tcp://" + endpoint, LoadConfig("tiny"));
    FAIL() << "connected without the token";
  } catch (const DeviceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("UNAUTHORIZED"));
  }
  EXPECT_THROW(Device::Open("tcp://" + endpoint + "?token=wrong", LoadConfig("tiny")),
               DeviceError);
  Device device = Device::Open("tcp://" + endpoint + "?token=s3cret", LoadConfig("tiny"));
  EXPECT_EQ(device.config().name, "tiny");
}

TEST(Server, RefusesClientsBeyondTheLimit) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.max_clients = 2;
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), options);
  const std::string uri = "tcp://" + server.endpoint();
  Device a = Device::Open(uri, LoadConfig("tiny"));
  Device b = Device::Open(uri, LoadConfig("tiny"));
  try {
    Device::Open(uri, LoadConfig("tiny"));
    FAIL();
  } catch (const DeviceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("TOO_MANY_CLIENTS"));
  }
}

}  // namespace

// Stop() ends service at once, not when the server object goes: the connected client's next
// request fails (the server hung up) instead of waiting out its deadline, and the port no
// longer accepts connections.
TEST(Server, StopHangsUpOnClientsAndClosesThePort) {
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), driver_test::LoopbackServerOptions());
  const std::string endpoint = server.endpoint();
  Device client = Device::Open("tcp://" + endpoint + "?timeout_ms=20000", LoadConfig("tiny"));
  EXPECT_NO_THROW(client.ReadCounters());
  server.Stop();
  EXPECT_EQ(server.endpoint(), endpoint);  // still says where it was
  const auto start = std::chrono::steady_clock::now();
  EXPECT_ANY_THROW(client.ReadCounters());
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000)) << "the client waited for its deadline";
  EXPECT_ANY_THROW(Device::Open("tcp://" + endpoint + "?timeout_ms=2000", LoadConfig("tiny")));
}
