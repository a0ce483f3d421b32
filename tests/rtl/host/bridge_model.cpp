// The reference semantics of the USB bridge (docs/HOST_LINKS.md, "The bridge").
#include "tests/rtl/host/bridge_model.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace systole::rtl::test {
namespace {

using protocol::ErrorCode;
using protocol::MessageType;

constexpr std::array<std::uint8_t, 4> kMagicBytes = {'S', 'Y', 'L', 'K'};

std::uint32_t Get32(std::span<const std::uint8_t> b, std::size_t at) {
  return std::uint32_t{b[at]} | std::uint32_t{b[at + 1]} << 8 | std::uint32_t{b[at + 2]} << 16 |
         std::uint32_t{b[at + 3]} << 24;
}

void Error(std::vector<std::uint8_t>& out, std::uint32_t id, ErrorCode code) {
  const auto frame = protocol::EncodeErrorFrame(id, code, "");
  out.insert(out.end(), frame.begin(), frame.end());
}

}  // namespace

std::vector<std::uint8_t> BridgeModel::Burst(std::span<const std::uint8_t> bytes, bool irq) {
  std::vector<std::uint8_t> out;
  std::size_t p = 0;
  // After a header error the bridge hunts for the next magic, starting with the last three
  // bytes it took (they may begin one): `hunt` is where that search starts.
  std::optional<std::size_t> hunt;
  while (p < bytes.size() || hunt) {
    if (hunt) {
      auto it = std::search(bytes.begin() + static_cast<std::ptrdiff_t>(*hunt), bytes.end(),
                            kMagicBytes.begin(), kMagicBytes.end());
      hunt.reset();
      if (it == bytes.end()) break;  // the pause ends the hunt silently
      p = static_cast<std::size_t>(it - bytes.begin());
    }
    const std::size_t have = bytes.size() - p;
    const auto frame_bytes = bytes.subspan(p);
    if (have < 4) { Error(out, 0, ErrorCode::kMalformed); break; }
    if (!std::equal(kMagicBytes.begin(), kMagicBytes.end(), frame_bytes.begin())) {
      Error(out, 0, ErrorCode::kBadMagic);
      hunt = p + 1;
      continue;
    }
    if (have < 6) { Error(out, 0, ErrorCode::kMalformed); break; }
    if ((frame_bytes[4] | frame_bytes[5] << 8) != protocol::kVersion) {
      Error(out, 0, ErrorCode::kBadVersion);
      hunt = p + 3;
      continue;
    }
    if (have < 16) { Error(out, 0, ErrorCode::kMalformed); break; }
    const std::uint32_t id = Get32(frame_bytes, 8), length = Get32(frame_bytes, 12);
    if (length > options_.max_payload) {
      Error(out, id, ErrorCode::kTooLarge);
      hunt = p + 13;
      continue;
    }
    if (have < protocol::kHeaderBytes) { Error(out, 0, ErrorCode::kMalformed); break; }
    if (have < protocol::kHeaderBytes + length) { Error(out, id, ErrorCode::kMalformed); break; }
    const auto header = frame_bytes.first<protocol::kHeaderBytes>();
    const auto payload = frame_bytes.subspan(protocol::kHeaderBytes, length);
    p += protocol::kHeaderBytes + length;
    if (!protocol::PayloadMatches(header, payload)) {
      Error(out, id, ErrorCode::kBadChecksum);
      continue;
    }
    protocol::Frame frame;
    frame.type = static_cast<std::uint16_t>(frame_bytes[6] | frame_bytes[7] << 8);
    frame.request_id = id;
    frame.payload.assign(payload.begin(), payload.end());
    Execute(frame, irq, out);
  }
  return out;
}

void BridgeModel::Execute(const protocol::Frame& frame, bool irq, std::vector<std::uint8_t>& out) {
  const std::uint32_t id = frame.request_id;
  const std::span<const std::uint8_t> p = frame.payload;
  const std::size_t n = p.size();
  protocol::PayloadWriter reply;
  auto send = [&] {
    const auto bytes = protocol::EncodeFrame(
        static_cast<std::uint16_t>(frame.type | protocol::kReplyBit), id, reply.bytes());
    out.insert(out.end(), bytes.begin(), bytes.end());
  };
  auto fields = [&](std::size_t at, std::size_t count) {  // little-endian, zero past the end
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < count && at + i < n; ++i) value |= std::uint64_t{p[at + i]} << 8 * i;
    return value;
  };
  if ((frame.type & protocol::kReplyBit) != 0 || frame.type == 0x7F) {
    return Error(out, id, ErrorCode::kOutOfOrder);
  }
  if (frame.type == static_cast<std::uint16_t>(MessageType::kHello)) {
    if (n < 6 || fields(2, 4) != n - 6) return Error(out, id, ErrorCode::kMalformed);
    if (fields(0, 2) != protocol::kVersion) return Error(out, id, ErrorCode::kBadVersion);
    session_ = true;
    last_id_ = id;
    reply.U64(options_.memory_bytes).U32(options_.max_payload).U64(options_.memory_bytes);
    return send();
  }
  if (!session_ || id <= last_id_) return Error(out, id, ErrorCode::kOutOfOrder);
  last_id_ = id;
  const auto type = static_cast<MessageType>(frame.type);
  switch (type) {
    case MessageType::kReadRegister:
    case MessageType::kWriteRegister: {
      if (n != (type == MessageType::kReadRegister ? 4u : 8u)) {
        return Error(out, id, ErrorCode::kMalformed);
      }
      const auto offset = static_cast<std::uint32_t>(fields(0, 4));
      if (offset >= options_.register_window || offset % 4 != 0) {
        return Error(out, id, ErrorCode::kBadRegister);
      }
      if (type == MessageType::kReadRegister) reply.U32(registers_[offset / 4]);
      else registers_[offset / 4] = static_cast<std::uint32_t>(fields(4, 4));
      return send();
    }
    case MessageType::kReadMemory:
    case MessageType::kWriteMemory: {
      const bool read = type == MessageType::kReadMemory;
      if (read ? n != 12 : n < 8) return Error(out, id, ErrorCode::kMalformed);
      const std::uint64_t address = fields(0, 8);
      const std::uint64_t length = read ? fields(8, 4) : n - 8;
      if (length > options_.max_payload) return Error(out, id, ErrorCode::kTooLarge);
      if (address > options_.memory_bytes || length > options_.memory_bytes - address) {
        return Error(out, id, ErrorCode::kOutOfBounds);
      }
      const auto at = memory_.begin() + static_cast<std::ptrdiff_t>(address);
      if (read) reply.Bytes({at, at + static_cast<std::ptrdiff_t>(length)});
      else std::copy(p.begin() + 8, p.end(), at);
      host_bytes_ += length;
      return send();
    }
    case MessageType::kWait: {
      if (n != 4) return Error(out, id, ErrorCode::kMalformed);
      const std::uint32_t status = registers_[options_.status_offset / 4];
      const bool idle = (status & 1u) == 0 && ((status >> 8) & 0xFFu) == 0;
      reply.U8(irq || idle ? 1 : 0);
      return send();
    }
    default:
      return Error(out, id, ErrorCode::kUnknownType);  // ALLOCATE and FREE too: no books here
  }
}

}  // namespace systole::rtl::test
