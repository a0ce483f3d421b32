// `tcp://HOST:PORT`: a device hosted by `systole serve`, reached with the frames of
// docs/PROTOCOL.md over a Boost.Asio socket. Bulk transfers are cut into chunks and pipelined
// (several requests in flight) so that the link runs near the socket's speed.
//
// Every operation has a deadline: each is started asynchronously and the io_context runs for
// at most the time left (Asio's blocking-client-with-timeouts idiom), so a server that accepts
// and never answers costs a bounded wait and a clear error, never a hang. The token never
// appears in Uri() or in a message: it is hidden as soon as the URI is parsed.
#include <fmt/format.h>

#include <algorithm>
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <cstdlib>
#include <deque>

#include "driver/tcp/tcp_uri.hpp"
#include "systole/link.hpp"
#include "systole/protocol.hpp"
#include "systole/server.hpp"  // kMinMaxPayload

namespace systole {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using protocol::MessageType;
using protocol::PayloadReader;
using protocol::PayloadWriter;

// Bulk transfers go in pieces of this. Small enough that a piece the sender has just
// checksummed is still in a 1 MiB L2 cache when the socket copies it (and likewise at the
// receiver); large enough that per-frame costs stay small. 512 KiB measured best of 128 KiB to
// 4 MiB for 64 MiB writes (CPU per byte 5-10% lower than with 1 MiB), no worse for reads.
constexpr std::uint32_t kChunkBytes = 512u << 10;
constexpr std::size_t kWindow = 8;  // chunk requests in flight at once
class TcpLink final : public Link {
 public:
  explicit TcpLink(std::string_view uri) : socket_(io_) {
    const TcpEndpoint endpoint = ParseTcpUri(uri);
    uri_ = endpoint.shown;
    timeout_ = endpoint.timeout;
    boost::system::error_code error;
    tcp::resolver resolver(io_);
    const auto addresses = resolver.resolve(endpoint.host, endpoint.port, error);
    if (!error) {
      asio::async_connect(socket_, addresses,
                          [&error](boost::system::error_code result, const tcp::endpoint&) {
                            error = result;
                          });
      if (!Complete(timeout_)) error = asio::error::timed_out;
    }
    if (error) throw LinkError(uri_, fmt::format("cannot connect: {}", error.message()));
    socket_.set_option(tcp::no_delay(true));
    PayloadWriter hello;
    hello.U16(protocol::kVersion).String(endpoint.token);
    const std::vector<std::uint8_t> reply = Call(MessageType::kHello, hello.bytes());
    try {
      PayloadReader reader(reply);
      memory_bytes_ = reader.U64();
      max_payload_ = reader.U32();
      reader.U64();  // the server's per-client allocation limit: it enforces it
      reader.ExpectEnd();
    } catch (const protocol::ProtocolError& bad) {
      throw LinkError(uri_, fmt::format("reply to HELLO: {}", bad.what()));
    }
    // A limit below this leaves a transfer no room beside its fields: chunks of nothing.
    if (max_payload_ < kMinMaxPayload) {
      throw LinkError(uri_, fmt::format("the server's payload limit of {} bytes is below the {} "
                                        "a client needs",
                                        max_payload_, kMinMaxPayload));
    }
    chunk_bytes_ = std::min<std::uint32_t>(kChunkBytes, max_payload_ - 16);
  }

  std::string_view Uri() const override { return uri_; }

  std::uint32_t ReadRegister(std::uint32_t offset) override {
    PayloadWriter request;
    request.U32(offset);
    const auto reply = Call(MessageType::kReadRegister, request.bytes());
    PayloadReader reader(reply);
    return reader.U32();
  }

  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    PayloadWriter request;
    request.U32(offset).U32(value);
    Call(MessageType::kWriteRegister, request.bytes());
  }

  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    std::deque<std::uint32_t> in_flight;
    for (std::size_t done = 0; done < bytes.size() || !in_flight.empty();) {
      if (done < bytes.size() && in_flight.size() < kWindow) {
        const std::size_t length = std::min<std::size_t>(chunk_bytes_, bytes.size() - done);
        PayloadWriter fields;
        fields.U64(address + done);
        in_flight.push_back(Send(MessageType::kWriteMemory, fields.bytes(), bytes.subspan(done, length)));
        done += length;
      } else {
        Receive(in_flight.front(), MessageType::kWriteMemory, nullptr);
        in_flight.pop_front();
      }
    }
  }

  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    std::deque<std::pair<std::uint32_t, std::span<std::uint8_t>>> in_flight;
    for (std::size_t asked = 0; asked < bytes.size() || !in_flight.empty();) {
      if (asked < bytes.size() && in_flight.size() < kWindow) {
        const std::size_t length = std::min<std::size_t>(chunk_bytes_, bytes.size() - asked);
        PayloadWriter request;
        request.U64(address + asked).U32(static_cast<std::uint32_t>(length));
        in_flight.emplace_back(Send(MessageType::kReadMemory, request.bytes(), {}),
                               bytes.subspan(asked, length));
        asked += length;
      } else {
        auto [id, destination] = in_flight.front();
        in_flight.pop_front();
        Receive(id, MessageType::kReadMemory, &destination);
      }
    }
  }

  bool WaitForInterrupt(std::chrono::milliseconds timeout) override {
    PayloadWriter request;
    const auto wait_ms =
        std::clamp<std::int64_t>(timeout.count(), 0, std::numeric_limits<std::uint32_t>::max());
    request.U32(static_cast<std::uint32_t>(wait_ms));
    const auto reply = Call(MessageType::kWait, request.bytes(), std::chrono::milliseconds(wait_ms));
    PayloadReader reader(reply);
    return reader.U8() != 0;
  }

  std::uint64_t Allocate(std::uint64_t bytes, std::uint64_t alignment,
                         std::optional<std::uint64_t> at) override {
    PayloadWriter request;
    request.U64(bytes).U64(alignment).U8(at ? 1 : 0).U64(at.value_or(0));
    const auto reply = Call(MessageType::kAllocate, request.bytes());
    PayloadReader reader(reply);
    return reader.U64();
  }

  void Free(std::uint64_t address) override {
    PayloadWriter request;
    request.U64(address);
    Call(MessageType::kFree, request.bytes());
  }

 private:
  std::uint32_t Send(MessageType type, std::span<const std::uint8_t> fields,
                     std::span<const std::uint8_t> bulk) {
    const std::uint32_t id = next_id_++;
    const protocol::Header header =
        protocol::EncodeHeader(static_cast<std::uint16_t>(type), id, fields, bulk);
    const std::array<asio::const_buffer, 3> buffers = {
        asio::buffer(header), asio::buffer(fields.data(), fields.size()),
        asio::buffer(bulk.data(), bulk.size())};
    const std::string_view name = protocol::MessageTypeName(static_cast<std::uint16_t>(type));
    CheckUsable();
    boost::system::error_code error;
    asio::async_write(socket_, buffers,
                      [&error](boost::system::error_code result, std::size_t) { error = result; });
    if (!Complete(timeout_)) {
      Break(fmt::format("sending {}: the server took nothing for {} ms", name, timeout_.count()));
    }
    if (error) Break(fmt::format("sending {}: {}", name, error.message()));
    return id;
  }

  // Runs the operation just started until it completes or `limit` passes. On timeout the
  // socket is closed (the stream is out of step from then on) and false returned.
  bool Complete(std::chrono::milliseconds limit) {
    io_.restart();
    io_.run_for(limit);
    if (io_.stopped()) return true;
    boost::system::error_code ignored;
    socket_.close(ignored);
    io_.run();  // the cancelled operation's handler
    return false;
  }

  // Reads exactly `buffer` within the deadline.
  void ReadExactly(asio::mutable_buffer buffer, std::chrono::steady_clock::time_point deadline,
                   std::string_view name, std::chrono::milliseconds limit) {
    boost::system::error_code error;
    asio::async_read(socket_, buffer,
                     [&error](boost::system::error_code result, std::size_t) { error = result; });
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!Complete(std::max(left, std::chrono::milliseconds(1)))) {
      Break(fmt::format("no reply to {} within {} ms", name, limit.count()));
    }
    if (error) {
      Break(fmt::format("waiting for the reply to {}: {}", name,
                        error == asio::error::eof ? "the server closed the connection"
                                                  : error.message()));
    }
  }

  // After a timeout or a broken stream, every later call fails with the first reason.
  [[noreturn]] void Break(const std::string& why) {
    broken_ = why;
    boost::system::error_code ignored;
    socket_.close(ignored);
    throw LinkError(uri_, why);
  }
  void CheckUsable() const {
    if (broken_) throw LinkError(uri_, fmt::format("unusable since: {}", *broken_));
  }

  // Reads the reply to request `id` within timeout_ (+ `extra`, for a WAIT). Its payload goes
  // to `destination` when given (and must fill it exactly), otherwise into reply_.
  void Receive(std::uint32_t id, MessageType type, std::span<std::uint8_t>* destination,
               std::chrono::milliseconds extra = std::chrono::milliseconds(0)) {
    const std::string_view name = protocol::MessageTypeName(static_cast<std::uint16_t>(type));
    CheckUsable();
    const std::chrono::milliseconds limit = timeout_ + extra;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    protocol::Header header;
    protocol::HeaderFields fields;
    try {
      ReadExactly(asio::buffer(header), deadline, name, limit);
      // An error reply may be longer than a small limit; 64 KiB covers any message.
      const std::uint32_t accept = std::max<std::uint32_t>(max_payload_, 1u << 16) + 64;
      if (auto error = protocol::ParseHeader(header, accept, fields)) {
        Break(fmt::format("reply to {}: {}", name, error->message));
      }
      const bool is_error = fields.type == static_cast<std::uint16_t>(MessageType::kError);
      std::span<std::uint8_t> payload;
      if (destination != nullptr && !is_error && fields.payload_bytes == destination->size()) {
        payload = *destination;
      } else {
        reply_.resize(fields.payload_bytes);
        payload = reply_;
      }
      ReadExactly(asio::buffer(payload.data(), payload.size()), deadline, name, limit);
      if (!protocol::PayloadMatches(header, payload)) {
        throw LinkError(uri_, fmt::format("reply to {}: {}", name,
                                          protocol::ChecksumError(header, payload).message));
      }
      if (is_error) {  // also connection-level refusals, which carry request id 0
        const protocol::ErrorReply error = protocol::DecodeErrorReply(payload);
        throw LinkError(uri_, fmt::format("the server refused {}: {} ({})", name, error.message,
                                          protocol::ErrorCodeName(error.code)));
      }
      if (fields.request_id != id) {
        throw LinkError(uri_, fmt::format("reply to {} carries request id {}, expected {}", name,
                                          fields.request_id, id));
      }
      if (fields.type != protocol::ReplyType(type) ||
          (destination != nullptr && payload.data() != destination->data())) {
        throw LinkError(uri_, fmt::format("unexpected reply to {} (type 0x{:x}, {} bytes)", name,
                                          fields.type, fields.payload_bytes));
      }
    } catch (const protocol::ProtocolError& error) {
      throw LinkError(uri_, fmt::format("reply to {}: {}", name, error.what()));
    }
  }

  std::vector<std::uint8_t> Call(MessageType type, std::span<const std::uint8_t> payload,
                                 std::chrono::milliseconds extra = std::chrono::milliseconds(0)) {
    const std::uint32_t id = Send(type, payload, {});
    Receive(id, type, nullptr, extra);
    return reply_;
  }

  std::string uri_;  // the token hidden
  std::chrono::milliseconds timeout_ = kDefaultTcpReplyTimeout;
  std::optional<std::string> broken_;
  asio::io_context io_;
  tcp::socket socket_;
  std::uint32_t next_id_ = 1;
  std::uint32_t max_payload_ = protocol::kDefaultMaxPayload;
  std::uint32_t chunk_bytes_ = kChunkBytes;
  std::uint64_t memory_bytes_ = 0;
  std::vector<std::uint8_t> reply_;
};

}  // namespace

std::unique_ptr<Link> OpenTcpLink(std::string_view uri) { return std::make_unique<TcpLink>(uri); }

}  // namespace systole
