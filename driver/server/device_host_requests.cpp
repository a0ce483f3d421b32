// The request handlers of the device host: one per message type of docs/PROTOCOL.md.
#include <fmt/format.h>

#include "driver/server/device_host.hpp"

namespace systole::server {

using protocol::ErrorCode;
using protocol::MessageType;
using protocol::PayloadReader;
using protocol::PayloadWriter;
using protocol::ProtocolError;

namespace {

// Compares without stopping at the first difference, so timing says nothing about the token.
bool SameToken(std::string_view expected, std::string_view given) {
  unsigned char difference = expected.size() == given.size() ? 0 : 1;
  for (std::size_t i = 0; i < given.size(); ++i) {
    difference |= static_cast<unsigned char>(given[i] ^ expected[i % std::max<std::size_t>(expected.size(), 1)]);
  }
  return difference == 0 && !expected.empty();
}

void CheckOwned(const Session& session, std::uint64_t address, std::uint64_t bytes) {
  if (!Covers(session.allocations, address, bytes)) {
    throw ProtocolError(ErrorCode::kOutOfBounds,
                        fmt::format("bytes 0x{:x}+{} are outside this client's allocations",
                                    address, bytes));
  }
}

}  // namespace

std::optional<std::vector<std::uint8_t>> DeviceHost::Respond(Session& session,
                                                             const protocol::Frame& frame) {
  PayloadReader request(frame.payload);
  PayloadWriter reply;
  switch (static_cast<MessageType>(frame.type)) {
    case MessageType::kHello: {
      Greet(session, request);
      reply.U64(config_.memory_bytes).U32(options_.max_payload).U64(max_allocation_bytes_);
      break;
    }
    case MessageType::kReadRegister: {
      const std::uint32_t offset = request.U32();
      request.ExpectEnd();
      std::optional<std::uint32_t> value;
      try {
        value = session.ReadRegister(offset);
      } catch (const std::out_of_range& error) {
        throw ProtocolError(ErrorCode::kBadRegister, error.what());
      }
      reply.U32(value ? *value : device_->ReadRegister(offset));
      break;
    }
    case MessageType::kWriteRegister: {
      const std::uint32_t offset = request.U32();
      const std::uint32_t value = request.U32();
      request.ExpectEnd();
      try {
        session.WriteRegister(offset, value);
      } catch (const std::out_of_range& error) {
        throw ProtocolError(ErrorCode::kBadRegister, error.what());
      }
      break;
    }
    case MessageType::kReadMemory: {
      const std::uint64_t address = request.U64();
      const std::uint32_t length = request.U32();
      request.ExpectEnd();
      if (length > options_.max_payload) {
        throw ProtocolError(ErrorCode::kTooLarge,
                            fmt::format("a read of {} bytes exceeds the frame limit of {}", length,
                                        options_.max_payload));
      }
      CheckOwned(session, address, length);
      reply.bytes().resize(length);
      device_->ReadMemory(address, reply.bytes());
      session.CountHostBytes(length);
      break;
    }
    case MessageType::kWriteMemory: {
      const std::uint64_t address = request.U64();
      const auto bytes = request.Rest();
      CheckOwned(session, address, bytes.size());
      device_->WriteMemory(address, bytes);
      AddRange(session.dirty, address, address + bytes.size());
      session.CountHostBytes(bytes.size());
      break;
    }
    case MessageType::kAllocate: {
      const std::uint64_t bytes = request.U64();
      const std::uint64_t alignment = request.U64();
      const bool fixed = request.U8() != 0;
      const std::uint64_t at = request.U64();
      request.ExpectEnd();
      const std::uint64_t size = MemoryAllocator::RoundedSize(bytes);
      if (bytes == 0 || size > max_allocation_bytes_ ||
          session.allocated_bytes > max_allocation_bytes_ - size) {
        throw ProtocolError(ErrorCode::kNoMemory,
                            fmt::format("{} more bytes would exceed this client's limit of {} "
                                        "(it holds {})",
                                        bytes, max_allocation_bytes_, session.allocated_bytes));
      }
      std::optional<std::uint64_t> address;
      if (fixed) {
        if (allocator_.AllocateAt(at, bytes)) address = at;
      } else {
        address = allocator_.Allocate(bytes, alignment);
      }
      if (!address) {
        throw ProtocolError(ErrorCode::kNoMemory,
                            fixed ? fmt::format("bytes 0x{:x}+{} are taken or outside device memory",
                                                at, bytes)
                                  : fmt::format("no room for {} bytes", bytes));
      }
      session.allocations.emplace(*address, *address + size);
      session.allocated_bytes += size;
      reply.U64(*address);
      break;
    }
    case MessageType::kFree: {
      const std::uint64_t address = request.U64();
      request.ExpectEnd();
      FreeAllocation(session, address);
      break;
    }
    case MessageType::kWait: {
      const std::uint32_t timeout_ms = request.U32();
      request.ExpectEnd();
      session.wait = PendingWait{frame.request_id, std::chrono::steady_clock::now() +
                                                       std::chrono::milliseconds(timeout_ms)};
      return std::nullopt;  // AnswerWaits replies once a launch finishes or time runs out
    }
    case MessageType::kError: break;  // not a request: HandleRequest refused it already
  }
  return std::move(reply.bytes());
}

// The token is never part of a reply or a message: a client learns only that it was wrong.
void DeviceHost::Greet(Session& session, PayloadReader& request) {
  const std::uint16_t version = request.U16();
  const std::string token = request.String(kMaxTokenBytes);
  request.ExpectEnd();
  if (version != protocol::kVersion) {
    throw ProtocolError(ErrorCode::kBadVersion,
                        fmt::format("client speaks protocol version {}, this server {}", version,
                                    protocol::kVersion));
  }
  if (!options_.token.empty() && !SameToken(options_.token, token)) {
    throw ProtocolError(ErrorCode::kUnauthorized,
                        token.empty() ? "this server needs a token (SYSTOLE_TOKEN or "
                                        "SYSTOLE_TOKEN_FILE)"
                                      : "wrong token");
  }
  if (greeted_.load() >= options_.max_clients) {
    throw ProtocolError(ErrorCode::kTooManyClients,
                        fmt::format("the server already has {} clients", options_.max_clients));
  }
  session.greeted = true;
  ++greeted_;
}

}  // namespace systole::server
