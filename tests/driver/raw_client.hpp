// A client that speaks raw frames to a device server, for tests of clients that misbehave.
// Reads give up after a timeout (SO_RCVTIMEO), so a server that never answers fails a test
// instead of hanging it.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "systole/protocol.hpp"

namespace systole::driver_test {

class RawClient {
 public:
  explicit RawClient(std::uint16_t port,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(10000))
      : socket_(io_) {
    socket_.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::address_v4::loopback(), port));
    timeval limit{};
    limit.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    limit.tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000);
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  }
  void SendBytes(const std::vector<std::uint8_t>& bytes) {
    boost::asio::write(socket_, boost::asio::buffer(bytes));
  }
  void Send(protocol::MessageType type, std::uint32_t id, protocol::PayloadWriter payload = {}) {
    SendBytes(protocol::EncodeFrame(static_cast<std::uint16_t>(type), id, payload.bytes()));
  }
  void SendHello(std::uint32_t id, const std::string& token = "") {
    protocol::PayloadWriter hello;
    hello.U16(protocol::kVersion).String(token);
    Send(protocol::MessageType::kHello, id, hello);
  }
  void Hello(std::uint32_t id, const std::string& token = "") {
    SendHello(id, token);
    EXPECT_EQ(Receive().type, protocol::ReplyType(protocol::MessageType::kHello));
  }
  // The next frame; throws std::runtime_error when the server closes or goes quiet.
  protocol::Frame Receive() {
    protocol::Frame frame;
    while (decoder_.Next(frame) != protocol::FrameDecoder::Status::kFrame) {
      std::array<std::uint8_t, 65536> chunk;
      const ssize_t n = ReadSome(chunk);
      if (n <= 0) throw std::runtime_error(n == 0 ? "the server closed the connection"
                                                  : "no frame from the server in time");
      decoder_.Feed({chunk.data(), static_cast<std::size_t>(n)});
    }
    return frame;
  }
  // The code of the next frame, which must be an error reply to `expected_id`.
  protocol::ErrorCode ReceiveError(std::uint32_t expected_id) {
    const protocol::Frame frame = Receive();
    EXPECT_EQ(frame.type, static_cast<std::uint16_t>(protocol::MessageType::kError));
    EXPECT_EQ(frame.request_id, expected_id);
    return protocol::DecodeErrorReply(frame.payload).code;
  }
  // True once the server has closed the connection (false if it stays open past the timeout).
  bool Closed() {
    std::array<std::uint8_t, 4096> chunk;
    for (;;) {
      const ssize_t n = ReadSome(chunk);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      if (n < 0) return false;  // timed out
    }
  }
  void Close() { socket_.close(); }
  boost::asio::ip::tcp::socket& socket() { return socket_; }

 private:
  // recv(2) itself: Asio's blocking read waits again when SO_RCVTIMEO expires.
  template <std::size_t N>
  ssize_t ReadSome(std::array<std::uint8_t, N>& chunk) {
    return ::recv(socket_.native_handle(), chunk.data(), chunk.size(), 0);
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  protocol::FrameDecoder decoder_{protocol::kDefaultMaxPayload};
};

}  // namespace systole::driver_test
