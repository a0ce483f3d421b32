// serial://: the URI, and the Boost.Asio serial port with a pseudo-terminal as the board's
// port (sim/uart/pseudo_terminal.hpp): a fake board on the master end that speaks the frame
// protocol (registers and memory through several frames each way), and every error the link
// names the port in: no such port, not a serial port, permission denied, an unsupported baud,
// a silent board, a board that answers garbage or a frame of another version, a board that
// goes away. No Verilator here, so this runs in the sanitizer build too; the Verilated board
// is serial_board_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <map>
#include <thread>

#include "driver/serial/serial_uri.hpp"
#include "sim/uart/pseudo_terminal.hpp"
#include "systole/link.hpp"
#include "systole/protocol.hpp"

namespace systole {
namespace {

using ::testing::HasSubstr;
using protocol::MessageType;
using Bytes = std::vector<std::uint8_t>;

std::string Uri(const uart::PseudoTerminal& pty, const std::string& query = "baud=3000000") {
  return "serial://" + pty.slave_path() + "?" + query;
}

// The LinkError message of opening `uri`, or a failure if it opens.
std::string OpenError(const std::string& uri) {
  try {
    OpenLink(uri, LoadConfig("tiny"));
  } catch (const LinkError& error) {
    return error.what();
  }
  ADD_FAILURE() << uri << " opened";
  return "";
}

// Plays the board on the master end in a thread: answers each request with `answer(frame)`.
class FakeBoard {
 public:
  using Answer = std::function<Bytes(const protocol::Frame&)>;
  FakeBoard(uart::PseudoTerminal& pty, Answer answer)
      : pty_(pty), answer_(std::move(answer)), thread_([this] { Run(); }) {}
  ~FakeBoard() {
    stop_ = true;
    thread_.join();
  }

 private:
  void Run() {
    protocol::FrameDecoder decoder;
    std::array<std::uint8_t, 4096> chunk;
    while (!stop_) {
      if (!pty_.WaitReadable(20)) continue;
      decoder.Feed(std::span(chunk).first(pty_.ReadSome(chunk)));
      protocol::Frame frame;
      while (decoder.Next(frame) == protocol::FrameDecoder::Status::kFrame) {
        const Bytes reply = answer_(frame);
        for (std::size_t sent = 0; sent < reply.size() && !stop_;) {
          sent += pty_.WriteSome(std::span(reply).subspan(sent));
        }
      }
    }
  }

  uart::PseudoTerminal& pty_;
  Answer answer_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A bridge in C++: HELLO with a 256-byte payload limit (so transfers take several frames),
// registers in a map, 64 KiB of memory.
class FakeBridge {
 public:
  Bytes operator()(const protocol::Frame& request) {
    protocol::PayloadReader in(request.payload);
    protocol::PayloadWriter out;
    switch (static_cast<MessageType>(request.type)) {
      case MessageType::kHello: out.U64(memory_.size()).U32(256).U64(memory_.size()); break;
      case MessageType::kReadRegister: out.U32(registers_[in.U32()]); break;
      case MessageType::kWriteRegister: {
        const std::uint32_t offset = in.U32();
        registers_[offset] = in.U32();
        break;
      }
      case MessageType::kWriteMemory: {
        const std::uint64_t address = in.U64();
        const auto data = in.Rest();
        std::copy(data.begin(), data.end(), memory_.begin() + static_cast<std::ptrdiff_t>(address));
        break;
      }
      case MessageType::kReadMemory: {
        const std::uint64_t address = in.U64();
        const std::uint32_t length = in.U32();
        out.Bytes(std::span(memory_).subspan(address, length));
        break;
      }
      default:
        return protocol::EncodeErrorFrame(request.request_id, protocol::ErrorCode::kUnknownType, "");
    }
    return protocol::EncodeFrame(protocol::ReplyType(static_cast<MessageType>(request.type)),
                                 request.request_id, out.bytes());
  }

 private:
  std::map<std::uint32_t, std::uint32_t> registers_;
  Bytes memory_ = Bytes(65536);
};

TEST(SerialUri, ParsesPathBaudAndTimeout) {
  const auto address = serial::ParseSerialUri("serial:///dev/ttyUSB0?baud=115200&timeout_ms=250");
  EXPECT_EQ(address.path, "/dev/ttyUSB0");
  EXPECT_EQ(address.baud, 115200u);
  EXPECT_EQ(address.timeout.count(), 250);
  EXPECT_EQ(serial::ParseSerialUri("serial:///dev/ttyACM1").baud, serial::kDefaultBaud);
}

TEST(SerialUri, RefusesMalformedUris) {
  const std::pair<const char*, const char*> cases[] = {
      {"serial://", "is not an absolute device path"},
      {"serial://ttyUSB0?baud=9600", "'ttyUSB0' is not an absolute device path"},
      {"serial:///dev/ttyUSB0?baud=0", "baud=0 is not a whole number from 1 to"},
      {"serial:///dev/ttyUSB0?baud=fast", "baud=fast is not a whole number"},
      {"serial:///dev/ttyUSB0?timeout_ms=-1", "timeout_ms=-1 is not a whole number"},
      {"serial:///dev/ttyUSB0?parity=even", "unknown URI parameter 'parity'"},
  };
  for (const auto& [uri, message] : cases) {
    EXPECT_THAT(OpenError(uri), HasSubstr(message)) << uri;
  }
}

TEST(SerialLink, TalksFramesToABoardThroughAPty) {
  uart::PseudoTerminal pty;
  FakeBoard board(pty, FakeBridge());
  const auto link = OpenLink(Uri(pty), LoadConfig("tiny"));
  EXPECT_EQ(link->Uri(), Uri(pty));
  link->WriteRegister(0x40, 0xC0FFEE);
  EXPECT_EQ(link->ReadRegister(0x40), 0xC0FFEEu);
  Bytes data(9001);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 3);
  link->WriteMemory(0x1235, data);  // 36 frames of at most 248 data bytes, at an odd address
  Bytes back(data.size());
  link->ReadMemory(0x1235, back);
  EXPECT_EQ(back, data);
}

TEST(SerialLink, NoSuchPortIsNamed) {
  EXPECT_THAT(OpenError("serial:///dev/ttySYSTOLE_NONE?baud=3000000"),
              HasSubstr("no such serial port /dev/ttySYSTOLE_NONE (is the board plugged in?"));
}

TEST(SerialLink, AFileThatIsNoSerialPortIsNamed) {
  EXPECT_THAT(OpenError("serial:///dev/null"), HasSubstr("/dev/null is not a serial port"));
}

TEST(SerialLink, UnsupportedBaudIsNamed) {
  uart::PseudoTerminal pty;
  EXPECT_THAT(OpenError(Uri(pty, "baud=1234567")),
              HasSubstr("unsupported baud 1234567 on serial port " + pty.slave_path()));
}

// Root opens any file, so as root the check runs in a child process (a death test) that first
// drops to the unprivileged user `nobody` (65534); otherwise the test itself opens a pty whose
// slave it has made unreadable to its owner.
TEST(SerialLink, PermissionDeniedIsNamed) {
  uart::PseudoTerminal pty;
  const std::string uri = Uri(pty);
  ASSERT_EQ(::chmod(pty.slave_path().c_str(), 0), 0);
  if (::geteuid() != 0) {
    EXPECT_THAT(OpenError(uri), HasSubstr("permission denied opening serial port " +
                                          pty.slave_path()));
    return;
  }
  // "fast": the child is forked right here (no thread runs at this point), so it sees this pty.
  GTEST_FLAG_SET(death_test_style, "fast");
  const Config config = LoadConfig("tiny");  // before: `nobody` may not read the source tree
  EXPECT_EXIT(
      {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) std::_Exit(2);
        try {
          OpenLink(uri, config);
        } catch (const std::exception& error) {
          std::fprintf(stderr, "%s\n", error.what());
          std::_Exit(0);
        }
        std::_Exit(1);
      },
      ::testing::ExitedWithCode(0), "permission denied opening serial port " + pty.slave_path());
}

TEST(SerialLink, SilentBoardTimesOutNamingTheRequest) {
  uart::PseudoTerminal pty;  // nobody answers on the master end
  EXPECT_THAT(OpenError(Uri(pty, "baud=3000000&timeout_ms=300")),
              HasSubstr("HELLO: no reply within 300 ms (nothing received)"));
}

TEST(SerialLink, GarbageNamesTheFrameFieldAndValue) {
  uart::PseudoTerminal pty;
  const std::string text = "hello, I am a modem\r\nOK\r\n";
  FakeBoard board(pty, [&](const protocol::Frame&) { return Bytes(text.begin(), text.end()); });
  EXPECT_THAT(OpenError(Uri(pty, "baud=3000000&timeout_ms=2000")),
              HasSubstr("HELLO: the bridge's reply does not decode: bad magic 0x6c6c6568"));
}

TEST(SerialLink, AFewGarbageBytesAreShown) {
  uart::PseudoTerminal pty;
  FakeBoard board(pty, [](const protocol::Frame&) { return Bytes{0xF0, 0x0F, 0x55}; });
  EXPECT_THAT(OpenError(Uri(pty, "baud=3000000&timeout_ms=300")),
              HasSubstr("HELLO: no complete reply within 300 ms; received f0 0f 55"));
}

TEST(SerialLink, FrameOfAnotherVersionIsNamed) {
  uart::PseudoTerminal pty;
  FakeBoard board(pty, [](const protocol::Frame& request) {
    Bytes reply = protocol::EncodeFrame(0x81, request.request_id, Bytes(20));
    reply[4] = 7;  // version 7
    return reply;
  });
  EXPECT_THAT(OpenError(Uri(pty, "baud=3000000&timeout_ms=2000")),
              HasSubstr("does not decode: protocol version 7"));
}

TEST(SerialLink, BoardThatGoesAwayIsNamed) {
  uart::PseudoTerminal pty;
  std::unique_ptr<Link> link;
  {
    FakeBoard board(pty, FakeBridge());
    link = OpenLink(Uri(pty), LoadConfig("tiny"));
  }
  pty.CloseMaster();
  try {
    link->ReadRegister(0);
    ADD_FAILURE() << "read a register from a closed line";
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), HasSubstr("serial port " + pty.slave_path() + " closed while"));
  }
}

}  // namespace
}  // namespace systole
