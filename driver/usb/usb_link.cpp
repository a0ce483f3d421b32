// usb://…, usb+sim: the frame protocol over a byte stream to the bridge of rtl/host/. One
// request at a time (the bridge answers each before it takes the next byte), ids increasing
// from HELLO's, memory transfers cut to the payload limit HELLO reported.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

#include "systole/protocol.hpp"
#include "systole/usb_transport.hpp"

namespace systole::usb {
namespace {

using protocol::MessageType;
using protocol::PayloadReader;
using protocol::PayloadWriter;
using std::chrono::milliseconds;

class UsbLink final : public Link {
 public:
  UsbLink(std::unique_ptr<ByteStream> stream, std::string_view uri, milliseconds reply_timeout)
      : uri_(uri), stream_(std::move(stream)), reply_timeout_(reply_timeout) {
    PayloadWriter hello;
    hello.U16(protocol::kVersion).String("");  // USB is local: no token
    const protocol::Frame reply = Request(MessageType::kHello, hello.bytes(), reply_timeout_);
    PayloadReader fields(reply.payload);
    memory_bytes_ = fields.U64();
    max_payload_ = fields.U32();
    if (max_payload_ <= 8) {
      throw LinkError(uri_, fmt::format("the bridge reports a payload limit of {} bytes",
                                        max_payload_));
    }
  }

  std::string_view Uri() const override { return uri_; }

  std::uint32_t ReadRegister(std::uint32_t offset) override {
    PayloadWriter w;
    w.U32(offset);
    const auto reply = Request(MessageType::kReadRegister, w.bytes(), reply_timeout_);
    PayloadReader r(reply.payload);
    const std::uint32_t value = r.U32();
    r.ExpectEnd();
    return value;
  }

  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    PayloadWriter w;
    w.U32(offset).U32(value);
    Request(MessageType::kWriteRegister, w.bytes(), reply_timeout_);
  }

  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    const std::size_t chunk = max_payload_ - 8;  // the address takes 8 bytes of the payload
    for (std::size_t done = 0; done < bytes.size(); done += chunk) {
      const auto piece = bytes.subspan(done, std::min(chunk, bytes.size() - done));
      PayloadWriter w;
      w.U64(address + done).Bytes(piece);
      Request(MessageType::kWriteMemory, w.bytes(), reply_timeout_);
    }
  }

  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    for (std::size_t done = 0; done < bytes.size(); done += max_payload_) {
      const auto piece =
          bytes.subspan(done, std::min<std::size_t>(max_payload_, bytes.size() - done));
      PayloadWriter w;
      w.U64(address + done).U32(static_cast<std::uint32_t>(piece.size()));
      const auto reply = Request(MessageType::kReadMemory, w.bytes(), reply_timeout_);
      if (reply.payload.size() != piece.size()) {
        throw LinkError(uri_, fmt::format("READ_MEMORY of {} bytes at 0x{:x} returned {} bytes",
                                          piece.size(), address + done, reply.payload.size()));
      }
      std::copy(reply.payload.begin(), reply.payload.end(), piece.begin());
    }
  }

  bool WaitForInterrupt(milliseconds timeout) override {
    const auto ms = static_cast<std::uint32_t>(
        std::clamp<std::int64_t>(timeout.count(), 0, std::int64_t{0xFFFFFFFF}));
    PayloadWriter w;
    w.U32(ms);
    // The bridge counts the timeout in device cycles; give the reply that long plus the margin.
    const auto reply = Request(MessageType::kWait, w.bytes(), milliseconds(ms) + reply_timeout_);
    PayloadReader r(reply.payload);
    const bool raised = r.U8() != 0;
    r.ExpectEnd();
    return raised;
  }

 private:
  // Sends one request and returns its reply; an ERROR reply, a reply to something else, or
  // silence throw LinkError naming the request.
  protocol::Frame Request(MessageType type, std::span<const std::uint8_t> payload,
                          milliseconds timeout) {
    const auto type_code = static_cast<std::uint16_t>(type);
    const std::string_view name = protocol::MessageTypeName(type_code);
    const std::uint32_t id = next_id_++;
    stream_->Write(protocol::EncodeFrame(type_code, id, payload));
    protocol::Frame reply;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::array<std::uint8_t, 4096> chunk;
    std::vector<std::uint8_t> first_bytes;  // of this reply, for the message if it never completes
    while (true) {
      const auto status = decoder_.Next(reply);
      if (status == protocol::FrameDecoder::Status::kFrame) break;
      if (status == protocol::FrameDecoder::Status::kError) {
        throw LinkError(uri_, fmt::format("{}: the bridge's reply does not decode: {}", name,
                                          decoder_.error().message));
      }
      const auto left = std::chrono::duration_cast<milliseconds>(
          deadline - std::chrono::steady_clock::now());
      const std::size_t got = stream_->Read(chunk, std::max(left, milliseconds(1)));
      if (got == 0 && std::chrono::steady_clock::now() >= deadline) {
        throw LinkError(uri_, NoReply(name, timeout, first_bytes));
      }
      const auto bytes = std::span(chunk).first(got);
      first_bytes.insert(first_bytes.end(), bytes.begin(),
                         bytes.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(
                                             got, kShownBytes - std::min(kShownBytes,
                                                                         first_bytes.size()))));
      decoder_.Feed(bytes);
    }
    if (reply.request_id != id) {
      throw LinkError(uri_, fmt::format("{}: reply to request {} while waiting for {}", name,
                                        reply.request_id, id));
    }
    if (reply.type == static_cast<std::uint16_t>(MessageType::kError)) {
      const auto error = protocol::DecodeErrorReply(reply.payload);
      throw LinkError(uri_, fmt::format("the bridge refused {}{}: {}", name, Detail(type, payload),
                                        protocol::ErrorCodeName(error.code)));
    }
    if (reply.type != protocol::ReplyType(type)) {
      throw LinkError(uri_, fmt::format("{}: unexpected {} in reply", name,
                                        protocol::MessageTypeName(reply.type)));
    }
    return reply;
  }

  // Silence, or bytes that never made a whole frame (a board at another baud, another
  // bitstream): the message says which, with the first bytes that came.
  static constexpr std::size_t kShownBytes = 16;
  static std::string NoReply(std::string_view name, milliseconds timeout,
                             const std::vector<std::uint8_t>& first_bytes) {
    if (first_bytes.empty()) {
      return fmt::format("{}: no reply within {} ms (nothing received)", name, timeout.count());
    }
    return fmt::format("{}: no complete reply within {} ms; received {:02x} (not a whole frame: "
                       "a board at another baud or with another bitstream?)",
                       name, timeout.count(), fmt::join(first_bytes, " "));
  }

  // What the refused request asked for (the bridge's error messages are empty).
  static std::string Detail(MessageType type, std::span<const std::uint8_t> payload) {
    PayloadReader r(payload);
    switch (type) {
      case MessageType::kReadRegister:
      case MessageType::kWriteRegister: return fmt::format(" at register 0x{:x}", r.U32());
      case MessageType::kReadMemory: {
        const std::uint64_t address = r.U64();
        return fmt::format(" of {} bytes at 0x{:x}", r.U32(), address);
      }
      case MessageType::kWriteMemory: {
        const std::uint64_t address = r.U64();
        return fmt::format(" of {} bytes at 0x{:x}", r.Rest().size(), address);
      }
      default: return "";
    }
  }

  std::string uri_;
  std::unique_ptr<ByteStream> stream_;
  milliseconds reply_timeout_;
  protocol::FrameDecoder decoder_;
  std::uint32_t next_id_ = 1;
  std::uint64_t memory_bytes_ = 0;
  std::uint32_t max_payload_ = 0;
};

std::uint16_t ParseHex16(std::string_view text, std::string_view uri, std::string_view what) {
  std::uint16_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.size() != 4 || error != std::errc() || end != text.data() + text.size()) {
    throw LinkError(uri, fmt::format("{} '{}' is not four hex digits (expected "
                                     "usb://VID:PID[/SERIAL], e.g. usb://1d50:6018)", what, text));
  }
  return value;
}

}  // namespace

UsbAddress ParseUsbUri(std::string_view uri) {
  if (!uri.starts_with("usb://")) throw LinkError(uri, "expected usb://VID:PID[/SERIAL]");
  std::string_view rest = uri.substr(6);
  UsbAddress address;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    address.serial = std::string(rest.substr(slash + 1));
    if (address.serial.empty()) throw LinkError(uri, "empty serial number after '/'");
    rest = rest.substr(0, slash);
  }
  const auto colon = rest.find(':');
  if (colon == std::string_view::npos) throw LinkError(uri, "expected usb://VID:PID[/SERIAL]");
  address.vendor = ParseHex16(rest.substr(0, colon), uri, "vendor id");
  address.product = ParseHex16(rest.substr(colon + 1), uri, "product id");
  return address;
}

std::unique_ptr<Link> MakeUsbLink(std::unique_ptr<ByteStream> stream, std::string_view uri,
                                  std::chrono::milliseconds reply_timeout) {
  return std::make_unique<UsbLink>(std::move(stream), uri, reply_timeout);
}

}  // namespace systole::usb
