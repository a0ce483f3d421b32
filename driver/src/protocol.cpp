// The frame codec of docs/PROTOCOL.md. CRC-32 comes from ISA-L (Intel's storage library): it is
// on the path of every byte a bulk transfer moves, twice (sender and receiver), and ISA-L picks
// a carry-less-multiply (VPCLMULQDQ/PCLMULQDQ) version at run time: 27 GB/s on the build
// machine against zlib 1.2.13's 5 GB/s, which cost tcp:// a quarter of its CPU time. It is the
// same CRC as zlib's crc32 (the reflected IEEE 802.3 one), pinned by protocol_test.
#include "systole/protocol.hpp"

#include <fmt/format.h>
#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>

namespace systole::protocol {
namespace {

void Put16(std::uint8_t* out, std::uint16_t value) {
  out[0] = static_cast<std::uint8_t>(value);
  out[1] = static_cast<std::uint8_t>(value >> 8);
}
void Put32(std::uint8_t* out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>(value >> (8 * i));
}
std::uint16_t Get16(const std::uint8_t* in) {
  return static_cast<std::uint16_t>(in[0] | (in[1] << 8));
}
std::uint32_t Get32(const std::uint8_t* in) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= std::uint32_t{in[i]} << (8 * i);
  return value;
}

// An empty span may have a null data pointer: leave the CRC alone without asking.
std::uint32_t Crc(std::uint32_t crc, std::span<const std::uint8_t> bytes) {
  return bytes.empty() ? crc : crc32_gzip_refl(crc, bytes.data(), bytes.size());
}

// CRC-32 of the first 16 header bytes, then the payload (given in up to two pieces).
std::uint32_t FrameCrc(const std::uint8_t* header, std::span<const std::uint8_t> payload,
                       std::span<const std::uint8_t> more = {}) {
  return Crc(Crc(Crc(0, {header, 16}), payload), more);
}

constexpr std::array<std::string_view, kNumRequestTypes + 1> kTypeNames = {
    "?", "HELLO", "READ_REGISTER", "WRITE_REGISTER", "READ_MEMORY",
    "WRITE_MEMORY", "ALLOCATE", "FREE", "WAIT"};

}  // namespace

bool IsRequestType(std::uint16_t type) { return type >= 1 && type <= kNumRequestTypes; }

std::string_view MessageTypeName(std::uint16_t type) {
  if (type == static_cast<std::uint16_t>(MessageType::kError)) return "ERROR";
  if (IsRequestType(type)) return kTypeNames[type];
  if ((type & kReplyBit) != 0 && IsRequestType(type & ~kReplyBit & 0xFFFF)) return "reply";
  return "unknown";
}

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kMalformed: return "MALFORMED";
    case ErrorCode::kBadChecksum: return "BAD_CHECKSUM";
    case ErrorCode::kTooLarge: return "TOO_LARGE";
    case ErrorCode::kBadVersion: return "BAD_VERSION";
    case ErrorCode::kBadMagic: return "BAD_MAGIC";
    case ErrorCode::kOutOfOrder: return "OUT_OF_ORDER";
    case ErrorCode::kUnauthorized: return "UNAUTHORIZED";
    case ErrorCode::kUnknownType: return "UNKNOWN_TYPE";
    case ErrorCode::kOutOfBounds: return "OUT_OF_BOUNDS";
    case ErrorCode::kNoMemory: return "NO_MEMORY";
    case ErrorCode::kBadRegister: return "BAD_REGISTER";
    case ErrorCode::kDevice: return "DEVICE";
    case ErrorCode::kTooManyClients: return "TOO_MANY_CLIENTS";
  }
  return "UNKNOWN_ERROR";
}

Header EncodeHeader(std::uint16_t type, std::uint32_t request_id,
                    std::span<const std::uint8_t> fields, std::span<const std::uint8_t> bulk) {
  Header header{};
  Put32(&header[0], kMagic);
  Put16(&header[4], kVersion);
  Put16(&header[6], type);
  Put32(&header[8], request_id);
  Put32(&header[12], static_cast<std::uint32_t>(fields.size() + bulk.size()));
  Put32(&header[16], FrameCrc(header.data(), fields, bulk));
  return header;
}

Header EncodeHeader(std::uint16_t type, std::uint32_t request_id,
                    std::span<const std::uint8_t> payload) {
  return EncodeHeader(type, request_id, payload, {});
}

std::vector<std::uint8_t> EncodeFrame(std::uint16_t type, std::uint32_t request_id,
                                      std::span<const std::uint8_t> payload) {
  const Header header = EncodeHeader(type, request_id, payload);
  std::vector<std::uint8_t> frame(header.begin(), header.end());
  frame.insert(frame.end(), payload.begin(), payload.end());
  return frame;
}

std::vector<std::uint8_t> ErrorPayload(ErrorCode code, std::string_view message) {
  PayloadWriter payload;
  payload.U32(static_cast<std::uint32_t>(code)).String(message);
  return std::move(payload.bytes());
}

std::vector<std::uint8_t> EncodeErrorFrame(std::uint32_t request_id, ErrorCode code,
                                           std::string_view message) {
  return EncodeFrame(static_cast<std::uint16_t>(MessageType::kError), request_id,
                     ErrorPayload(code, message));
}

// ---- FrameDecoder ------------------------------------------------------------------------------

FrameDecoder::FrameDecoder(std::uint32_t max_payload) : max_payload_(max_payload) {}

void FrameDecoder::Feed(std::span<const std::uint8_t> bytes) {
  if (failed_) return;  // the stream is unusable: keep nothing
  // Drop consumed bytes once they are the larger part, so the buffer stays proportional to one
  // frame however long the stream runs.
  if (start_ > 0 && start_ >= buffer_.size() / 2) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

std::optional<DecodeError> ParseHeader(std::span<const std::uint8_t, kHeaderBytes> header,
                                       std::uint32_t max_payload, HeaderFields& fields) {
  const std::uint8_t* h = header.data();
  const std::uint32_t request_id = Get32(h + 8);
  if (Get32(h) != kMagic) {
    return DecodeError{ErrorCode::kBadMagic, request_id,
                       fmt::format("bad magic 0x{:08x} (expected 0x{:08x}, \"SYLK\")", Get32(h),
                                   kMagic),
                       false};
  }
  if (const std::uint16_t version = Get16(h + 4); version != kVersion) {
    return DecodeError{ErrorCode::kBadVersion, request_id,
                       fmt::format("protocol version {} (this side speaks {})", version, kVersion),
                       false};
  }
  const std::uint32_t length = Get32(h + 12);
  if (length > max_payload) {
    return DecodeError{ErrorCode::kTooLarge, request_id,
                       fmt::format("payload of {} bytes exceeds the limit of {}", length,
                                   max_payload),
                       false};
  }
  fields = HeaderFields{Get16(h + 6), request_id, length, Get32(h + 16)};
  return std::nullopt;
}

bool PayloadMatches(std::span<const std::uint8_t, kHeaderBytes> header,
                    std::span<const std::uint8_t> payload) {
  return FrameCrc(header.data(), payload) == Get32(header.data() + 16);
}

DecodeError ChecksumError(std::span<const std::uint8_t, kHeaderBytes> header,
                          std::span<const std::uint8_t> payload) {
  return DecodeError{ErrorCode::kBadChecksum, Get32(header.data() + 8),
                     fmt::format("CRC-32 0x{:08x} does not match the frame's 0x{:08x}",
                                 FrameCrc(header.data(), payload), Get32(header.data() + 16)),
                     true};
}

FrameDecoder::Status FrameDecoder::Next(Frame& frame) {
  if (failed_) return Status::kError;
  if (Buffered() < kHeaderBytes) return Status::kNeedMore;
  const std::span<const std::uint8_t, kHeaderBytes> header(buffer_.data() + start_, kHeaderBytes);
  HeaderFields fields;
  if (auto error = ParseHeader(header, max_payload_, fields)) {
    failed_ = true;
    error_ = std::move(*error);
    buffer_.clear();
    start_ = 0;
    return Status::kError;
  }
  if (Buffered() - kHeaderBytes < fields.payload_bytes) return Status::kNeedMore;
  const std::span<const std::uint8_t> payload(header.data() + kHeaderBytes, fields.payload_bytes);
  start_ += kHeaderBytes + fields.payload_bytes;
  if (!PayloadMatches(header, payload)) {
    error_ = ChecksumError(header, payload);
    return Status::kError;
  }
  frame.type = fields.type;
  frame.request_id = fields.request_id;
  frame.payload.assign(payload.begin(), payload.end());
  return Status::kFrame;
}

// ---- Payloads ----------------------------------------------------------------------------------

PayloadWriter& PayloadWriter::U8(std::uint8_t value) {
  bytes_.push_back(value);
  return *this;
}
PayloadWriter& PayloadWriter::U16(std::uint16_t value) {
  for (int i = 0; i < 2; ++i) bytes_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  return *this;
}
PayloadWriter& PayloadWriter::U32(std::uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  return *this;
}
PayloadWriter& PayloadWriter::U64(std::uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  return *this;
}
PayloadWriter& PayloadWriter::String(std::string_view text) {
  U32(static_cast<std::uint32_t>(text.size()));
  bytes_.insert(bytes_.end(), text.begin(), text.end());
  return *this;
}
PayloadWriter& PayloadWriter::Bytes(std::span<const std::uint8_t> bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return *this;
}

std::span<const std::uint8_t> PayloadReader::Take(std::size_t count) {
  if (payload_.size() - position_ < count) {
    throw ProtocolError(ErrorCode::kMalformed,
                        fmt::format("payload of {} bytes is too short: needs {} more at byte {}",
                                    payload_.size(), count, position_));
  }
  const auto bytes = payload_.subspan(position_, count);
  position_ += count;
  return bytes;
}

std::uint8_t PayloadReader::U8() { return Take(1)[0]; }
std::uint16_t PayloadReader::U16() { return Get16(Take(2).data()); }
std::uint32_t PayloadReader::U32() { return Get32(Take(4).data()); }
std::uint64_t PayloadReader::U64() {
  const std::uint8_t* p = Take(8).data();
  return Get32(p) | (std::uint64_t{Get32(p + 4)} << 32);
}
std::string PayloadReader::String(std::uint32_t max_length) {
  const std::uint32_t length = U32();
  if (length > max_length) {
    throw ProtocolError(ErrorCode::kMalformed,
                        fmt::format("string of {} bytes exceeds {}", length, max_length));
  }
  const auto bytes = Take(length);
  return std::string(bytes.begin(), bytes.end());
}
std::span<const std::uint8_t> PayloadReader::Rest() { return Take(payload_.size() - position_); }
void PayloadReader::ExpectEnd() const {
  if (position_ != payload_.size()) {
    throw ProtocolError(ErrorCode::kMalformed,
                        fmt::format("payload has {} unexpected trailing bytes",
                                    payload_.size() - position_));
  }
}

ErrorReply DecodeErrorReply(std::span<const std::uint8_t> payload) {
  PayloadReader reader(payload);
  ErrorReply reply{static_cast<ErrorCode>(reader.U32()), reader.String(64 * 1024)};
  reader.ExpectEnd();
  return reply;
}

}  // namespace systole::protocol
