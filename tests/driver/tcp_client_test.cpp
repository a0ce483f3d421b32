// The tcp:// client against servers that misbehave: one that accepts and never answers, one
// that never answers a WAIT, one whose HELLO reply claims limits no transfer can work with.
// The client must give up with a clear error, never hang or loop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <sys/socket.h>

#include <atomic>
#include <thread>

#include "systole/link.hpp"
#include "systole/protocol.hpp"

namespace {

using namespace systole;
using namespace systole::protocol;
namespace asio = boost::asio;
using asio::ip::tcp;
using ::testing::HasSubstr;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// A one-connection server on an ephemeral loopback port. It answers HELLO with `max_payload`
// (when `answer_hello`) and nothing else, and reads until the client hangs up or the test ends
// (shutdown(2) wakes its blocked accept or read: a client that never came does not hang it).
class FakeServer {
 public:
  FakeServer(bool answer_hello, std::uint32_t max_payload)
      : acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)) {
    thread_ = std::thread([this, answer_hello, max_payload] {
      boost::system::error_code accepted;
      acceptor_.accept(socket_, accepted);
      if (accepted) return;
      tcp::socket& socket = socket_;
      connected_ = true;
      FrameDecoder decoder;
      for (;;) {
        std::array<std::uint8_t, 4096> chunk;
        boost::system::error_code error;
        const std::size_t n = socket.read_some(asio::buffer(chunk), error);
        if (error) return;
        decoder.Feed({chunk.data(), n});
        Frame frame;
        while (decoder.Next(frame) == FrameDecoder::Status::kFrame) {
          if (answer_hello && frame.type == static_cast<std::uint16_t>(MessageType::kHello)) {
            PayloadWriter reply;
            reply.U64(1 << 20).U32(max_payload).U64(1 << 20);
            asio::write(socket, asio::buffer(EncodeFrame(ReplyType(MessageType::kHello),
                                                         frame.request_id, reply.bytes())));
          }
        }
      }
    });
  }
  ~FakeServer() {
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    if (connected_) ::shutdown(socket_.native_handle(), SHUT_RDWR);
    thread_.join();
  }
  std::string Uri(std::string_view parameters = "") const {
    return "tcp://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) +
           std::string(parameters);
  }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_;
  tcp::socket socket_{io_};
  std::atomic<bool> connected_ = false;
  std::thread thread_;
};

TEST(TcpClient, ASilentServerTimesOut) {
  FakeServer server(/*answer_hello=*/false, 0);
  const auto start = Clock::now();
  try {
    OpenTcpLink(server.Uri("?timeout_ms=300"));
    FAIL() << "connected to a server that never answered";
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no reply to HELLO within 300 ms"));
  }
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
}

TEST(TcpClient, AWaitTheServerNeverAnswersTimesOut) {
  FakeServer server(/*answer_hello=*/true, 1 << 20);
  std::unique_ptr<Link> link = OpenTcpLink(server.Uri("?timeout_ms=300"));
  const auto start = Clock::now();
  try {
    link->WaitForInterrupt(milliseconds(200));
    FAIL() << "the WAIT returned without a reply";
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no reply to WAIT within 500 ms"));
  }
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
}

// A 16-byte payload limit leaves no room for data beside a WRITE_MEMORY's address: the client
// used to cut transfers into empty chunks forever.
TEST(TcpClient, AServerLimitTooSmallToTransferIsRefusedAtHello) {
  FakeServer server(/*answer_hello=*/true, 16);
  try {
    OpenTcpLink(server.Uri("?timeout_ms=2000"));
    FAIL() << "accepted a 16-byte payload limit";
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), HasSubstr("payload limit of 16 bytes"));
  }
}

TEST(TcpClient, UnknownUriParametersAreNamed) {
  try {
    OpenTcpLink("tcp://127.0.0.1:1?colour=blue");
    FAIL();
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), HasSubstr("colour"));
  }
}

}  // namespace
