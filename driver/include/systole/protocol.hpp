// The Systole link protocol: frames that carry register and device-memory accesses between a
// host and a device server (tcp://) or a byte-stream bridge (usb://). docs/PROTOCOL.md is the
// specification; this header is its one implementation.
//
// Every frame is a 20-byte little-endian header followed by a payload:
//
//   magic u32 "SYLK" | version u16 | type u16 | request_id u32 | payload_bytes u32 | crc32 u32
//
// The CRC-32 (IEEE 802.3, as zlib computes it) covers the first 16 header bytes and the payload.
// The codec knows nothing about sockets: EncodeHeader/EncodeFrame write bytes, and FrameDecoder
// takes bytes in whatever chunks a transport delivers them.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace systole::protocol {

inline constexpr std::uint32_t kMagic = 0x4B4C5953;  // "SYLK" on the wire
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 20;
// Default limit on a payload; servers and decoders may be configured lower or higher.
inline constexpr std::uint32_t kDefaultMaxPayload = 16u << 20;

// Requests. The reply to a request has the request's type with kReplyBit set; any request may
// instead get a kError reply. Both carry the request's request_id.
enum class MessageType : std::uint16_t {
  kHello = 1,          // u16 version, string token            -> u64 memory_bytes, u32 max_payload,
                       //                                         u64 max_allocation_bytes
  kReadRegister = 2,   // u32 offset                           -> u32 value
  kWriteRegister = 3,  // u32 offset, u32 value                -> (empty)
  kReadMemory = 4,     // u64 address, u32 length              -> length bytes
  kWriteMemory = 5,    // u64 address, bytes (rest of payload) -> (empty)
  kAllocate = 6,       // u64 bytes, u64 alignment, u8 fixed, u64 address -> u64 address
  kFree = 7,           // u64 address                          -> (empty)
  kWait = 8,           // u32 timeout_ms                       -> u8 interrupt (0: timed out)
  kError = 0x7F,       // reply only: u32 ErrorCode, string message
};
inline constexpr std::uint16_t kReplyBit = 0x80;
inline constexpr std::uint16_t kNumRequestTypes = 8;
// ggml's rule: adding a message changes the protocol, so it must change the version too.
static_assert(kNumRequestTypes == 8 && kVersion == 1,
              "a new message type needs a protocol version bump (and docs/PROTOCOL.md)");

constexpr std::uint16_t ReplyType(MessageType request) {
  return static_cast<std::uint16_t>(static_cast<std::uint16_t>(request) | kReplyBit);
}
bool IsRequestType(std::uint16_t type);
std::string_view MessageTypeName(std::uint16_t type);  // "READ_MEMORY", "READ_MEMORY reply", …

// Codes carried by kError replies.
enum class ErrorCode : std::uint32_t {
  kMalformed = 1,       // the payload does not fit the message type
  kBadChecksum = 2,     // CRC mismatch: the frame was dropped
  kTooLarge = 3,        // payload_bytes above the limit (the connection is closed)
  kBadVersion = 4,      // another protocol version (the connection is closed)
  kBadMagic = 5,        // not a Systole frame (the connection is closed)
  kOutOfOrder = 6,      // a request before HELLO, a second HELLO, a reply, a reused request id
  kUnauthorized = 7,    // missing or wrong token
  kUnknownType = 8,     // no such message type
  kOutOfBounds = 9,     // memory access outside this client's allocations
  kNoMemory = 10,       // allocation failed or exceeds this client's limit
  kBadRegister = 11,    // no register at this offset
  kDevice = 12,         // the device itself failed
  kTooManyClients = 13, // the server has no room for another client (the connection is closed)
};
std::string_view ErrorCodeName(ErrorCode code);  // "OUT_OF_BOUNDS"

struct Frame {
  std::uint16_t type = 0;
  std::uint32_t request_id = 0;
  std::vector<std::uint8_t> payload;
};

using Header = std::array<std::uint8_t, kHeaderBytes>;

// The header of a frame with this payload (CRC included), for transports that send the header
// and a large payload without copying them together.
Header EncodeHeader(std::uint16_t type, std::uint32_t request_id,
                    std::span<const std::uint8_t> payload);
// The same for a payload sent in two pieces (a few fixed fields, then bulk bytes), so that the
// bulk bytes need not be copied next to the fields.
Header EncodeHeader(std::uint16_t type, std::uint32_t request_id,
                    std::span<const std::uint8_t> fields, std::span<const std::uint8_t> bulk);
// Header and payload in one buffer.
std::vector<std::uint8_t> EncodeFrame(std::uint16_t type, std::uint32_t request_id,
                                      std::span<const std::uint8_t> payload);
std::vector<std::uint8_t> EncodeErrorFrame(std::uint32_t request_id, ErrorCode code,
                                           std::string_view message);
std::vector<std::uint8_t> ErrorPayload(ErrorCode code, std::string_view message);

// Why a stream stopped decoding (or a frame was dropped).
struct DecodeError {
  ErrorCode code = ErrorCode::kMalformed;
  std::uint32_t request_id = 0;  // of the offending frame, when the header got that far
  std::string message;
  // True when the stream can go on (a bad checksum: the frame's length was still trusted).
  bool recoverable = false;
};

// The fields of a header that ParseHeader accepted.
struct HeaderFields {
  std::uint16_t type = 0;
  std::uint32_t request_id = 0;
  std::uint32_t payload_bytes = 0;
  std::uint32_t crc = 0;
};

// Checks magic, version and the payload limit; on success fills `fields` and returns nullopt.
// Transports that read a header and then its payload (the TCP server and client) use this and
// PayloadMatches; FrameDecoder is built from the same two.
std::optional<DecodeError> ParseHeader(std::span<const std::uint8_t, kHeaderBytes> header,
                                       std::uint32_t max_payload, HeaderFields& fields);
// True when the header's CRC matches header and payload.
bool PayloadMatches(std::span<const std::uint8_t, kHeaderBytes> header,
                    std::span<const std::uint8_t> payload);
DecodeError ChecksumError(std::span<const std::uint8_t, kHeaderBytes> header,
                          std::span<const std::uint8_t> payload);

// An incremental decoder: feed it bytes in chunks of any size, take frames out.
class FrameDecoder {
 public:
  enum class Status { kNeedMore, kFrame, kError };

  explicit FrameDecoder(std::uint32_t max_payload = kDefaultMaxPayload);

  void Feed(std::span<const std::uint8_t> bytes);
  // kFrame: `frame` holds the next frame. kNeedMore: nothing complete yet. kError: see error();
  // after a recoverable error the bad frame is gone and decoding goes on with the next call;
  // after any other error every later call returns kError again.
  Status Next(Frame& frame);
  const DecodeError& error() const { return error_; }
  // Bytes fed but not yet returned as frames (a client that stops mid-frame leaves some).
  std::size_t Buffered() const { return buffer_.size() - start_; }

 private:
  std::uint32_t max_payload_;
  std::vector<std::uint8_t> buffer_;
  std::size_t start_ = 0;  // first byte not yet consumed
  bool failed_ = false;
  DecodeError error_;
};

// Thrown for a payload that does not fit its message, and by clients for error replies.
class ProtocolError : public std::runtime_error {
 public:
  ProtocolError(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// Builds a payload of little-endian fields.
class PayloadWriter {
 public:
  PayloadWriter& U8(std::uint8_t value);
  PayloadWriter& U16(std::uint16_t value);
  PayloadWriter& U32(std::uint32_t value);
  PayloadWriter& U64(std::uint64_t value);
  PayloadWriter& String(std::string_view text);  // u32 length, then the bytes
  PayloadWriter& Bytes(std::span<const std::uint8_t> bytes);  // raw, no length
  std::vector<std::uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

// Reads a payload field by field; throws ProtocolError(kMalformed) past the end.
class PayloadReader {
 public:
  explicit PayloadReader(std::span<const std::uint8_t> payload) : payload_(payload) {}
  std::uint8_t U8();
  std::uint16_t U16();
  std::uint32_t U32();
  std::uint64_t U64();
  std::string String(std::uint32_t max_length);
  std::span<const std::uint8_t> Rest();  // everything not read yet
  void ExpectEnd() const;                // throws if bytes are left over

 private:
  std::span<const std::uint8_t> Take(std::size_t count);
  std::span<const std::uint8_t> payload_;
  std::size_t position_ = 0;
};

// The error reply's fields.
struct ErrorReply {
  ErrorCode code;
  std::string message;
};
ErrorReply DecodeErrorReply(std::span<const std::uint8_t> payload);

}  // namespace systole::protocol
