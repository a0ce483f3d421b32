// The worker loop, the request handlers and the fair launch queue of device_host.hpp.
#include "driver/server/device_host.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "arch/regs/identity.hpp"

namespace systole::server {

using protocol::ErrorCode;
using protocol::MessageType;
using protocol::PayloadReader;
using protocol::PayloadWriter;
using protocol::ProtocolError;

DeviceHost::DeviceHost(std::unique_ptr<Link> device, const ServerOptions& options, bool worker)
    : device_(std::move(device)),
      options_(options),
      config_(regs::DecodeIdentity([this](std::uint32_t offset) {
        return device_->ReadRegister(offset);
      })),
      max_allocation_bytes_(
          options.max_allocation_bytes.value_or(config_.memory_bytes / kDefaultQuotaShare)),
      allocator_(config_.memory_bytes) {
  ReserveScrubProgram();
  if (worker) worker_ = std::thread([this] { WorkerLoop(); });
}

void DeviceHost::Poll() {
  for (;;) {
    std::unique_lock lock(mutex_);
    if (events_.empty()) break;
    Event event = std::move(events_.front());
    events_.pop_front();
    lock.unlock();
    HandleEvent(event);
    AnswerWaits();
  }
  while (active_ || !ready_.empty()) {
    if (active_) {
      StepLaunch();
    } else {
      StartNextLaunch();
    }
    AnswerWaits();
  }
  SendDelayedReplies();
}

DeviceHost::~DeviceHost() { Stop(); }

void DeviceHost::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) {
    worker_.join();
  } else {  // Poll's host: end what the worker would have ended
    if (active_) AbortActiveLaunch();
    while (!sessions_.empty()) CloseSession(sessions_.begin()->first);
  }
}

void DeviceHost::Open(std::uint64_t session, SendFrame send) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back({Event::Kind::kOpen, session, std::move(send), {}});
  }
  wake_.notify_one();
}

void DeviceHost::Deliver(std::uint64_t session, protocol::Frame frame) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back({Event::Kind::kDeliver, session, {}, std::move(frame)});
  }
  wake_.notify_one();
}

void DeviceHost::Close(std::uint64_t session) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back({Event::Kind::kClose, session, {}, {}});
  }
  wake_.notify_one();
}

// Events first (they are quick), then one slice of the launch on the device (or the start of
// the next one), then again: neither a long launch nor a long queue of launches delays a
// client's request by more than a slice. kMaxEventsPerSlice keeps a flood of requests from
// stalling the launch in turn.
void DeviceHost::WorkerLoop() {
  constexpr int kMaxEventsPerSlice = 256;
  int events_handled = 0;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!events_.empty() && (events_handled < kMaxEventsPerSlice || (!active_ && ready_.empty()))) {
      Event event = std::move(events_.front());
      events_.pop_front();
      lock.unlock();
      HandleEvent(event);
      AnswerWaits();
      ++events_handled;
      lock.lock();
      continue;
    }
    events_handled = 0;
    lock.unlock();
    const bool device_busy = active_ || !ready_.empty();
    if (active_) {
      StepLaunch();
    } else if (!ready_.empty()) {
      StartNextLaunch();
    }
    AnswerWaits();
    SendDelayedReplies();
    const auto deadline = NextDeadline();
    lock.lock();
    if (device_busy || !events_.empty() || stopping_) continue;
    if (deadline) {
      wake_.wait_until(lock, *deadline);
    } else {
      wake_.wait(lock);
    }
  }
  lock.unlock();
  if (active_) AbortActiveLaunch();
  while (!sessions_.empty()) CloseSession(sessions_.begin()->first);
}

void DeviceHost::HandleEvent(Event& event) {
  switch (event.kind) {
    case Event::Kind::kOpen:
      sessions_.emplace(event.session,
                        Session(std::move(event.send), config_.command_queue_depth));
      ++sessions_open_;
      break;
    case Event::Kind::kDeliver:
      if (auto it = sessions_.find(event.session); it != sessions_.end()) {
        HandleRequest(it->second, event.session, event.frame);
        Session& session = it->second;
        if (session.Runnable() &&
            std::find(ready_.begin(), ready_.end(), event.session) == ready_.end()) {
          ready_.push_back(event.session);
        }
      }
      break;
    case Event::Kind::kClose: CloseSession(event.session); break;
  }
}

void DeviceHost::HandleRequest(Session& session, std::uint64_t id, const protocol::Frame& frame) {
  bool close = false;
  std::uint16_t type = static_cast<std::uint16_t>(MessageType::kError);
  std::vector<std::uint8_t> payload;
  try {
    if (frame.request_id <= session.last_request_id) {
      throw ProtocolError(ErrorCode::kOutOfOrder,
                          fmt::format("request id {} does not follow {}", frame.request_id,
                                      session.last_request_id));
    }
    session.last_request_id = frame.request_id;
    if (!protocol::IsRequestType(frame.type)) {
      const bool reply_type = frame.type == static_cast<std::uint16_t>(MessageType::kError) ||
                              protocol::IsRequestType(frame.type & ~protocol::kReplyBit & 0xFFFF);
      throw ProtocolError(reply_type ? ErrorCode::kOutOfOrder : ErrorCode::kUnknownType,
                          reply_type ? "a client sends requests, not replies"
                                     : fmt::format("no message type 0x{:x}", frame.type));
    }
    const bool hello = frame.type == static_cast<std::uint16_t>(MessageType::kHello);
    if (hello == session.greeted) {
      throw ProtocolError(ErrorCode::kOutOfOrder,
                          hello ? "HELLO was already sent" : "the first request must be HELLO");
    }
    if (session.wait) {
      throw ProtocolError(ErrorCode::kOutOfOrder, "a WAIT is still pending");
    }
    auto reply = Respond(session, frame);
    if (!reply) return;  // a WAIT: answered later
    type = protocol::ReplyType(static_cast<MessageType>(frame.type));
    payload = std::move(*reply);
  } catch (const ProtocolError& error) {
    close = error.code() == ErrorCode::kUnauthorized || error.code() == ErrorCode::kBadVersion ||
            error.code() == ErrorCode::kTooManyClients;
    payload = protocol::ErrorPayload(error.code(), error.what());
    if (error.code() == ErrorCode::kUnauthorized) {
      // One wrong token answered per auth_failure_delay, across all connections: guessing is
      // slow however many connections guess at once. The connection reads nothing meanwhile.
      const auto now = std::chrono::steady_clock::now();
      last_auth_failure_ = std::max(now, last_auth_failure_) + options_.auth_failure_delay;
      delayed_.push_back({id, last_auth_failure_,
                          protocol::EncodeHeader(type, frame.request_id, payload),
                          std::move(payload)});
      return;
    }
  } catch (const std::exception& error) {
    payload = protocol::ErrorPayload(ErrorCode::kDevice, error.what());
  }
  const protocol::Header header = protocol::EncodeHeader(type, frame.request_id, payload);
  session.send()(header, std::move(payload), close);
}

void DeviceHost::SendDelayedReplies() {
  const auto now = std::chrono::steady_clock::now();
  while (!delayed_.empty() && delayed_.front().due <= now) {
    DelayedReply reply = std::move(delayed_.front());
    delayed_.pop_front();
    if (auto it = sessions_.find(reply.session); it != sessions_.end()) {
      it->second.send()(reply.header, std::move(reply.payload), true);
    }
  }
}

std::optional<std::chrono::steady_clock::time_point> DeviceHost::NextDeadline() const {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (!delayed_.empty()) deadline = delayed_.front().due;
  for (const auto& [id, session] : sessions_) {
    if (session.wait && (!deadline || session.wait->deadline < *deadline)) {
      deadline = session.wait->deadline;
    }
  }
  return deadline;
}

void DeviceHost::AnswerWaits() {
  const auto now = std::chrono::steady_clock::now();
  for (auto& [id, session] : sessions_) {
    if (!session.wait) continue;
    const bool satisfied = session.WaitSatisfied();
    if (!satisfied && now < session.wait->deadline) continue;
    std::vector<std::uint8_t> payload = {static_cast<std::uint8_t>(satisfied ? 1 : 0)};
    const protocol::Header header = protocol::EncodeHeader(
        protocol::ReplyType(MessageType::kWait), session.wait->request_id, payload);
    session.send()(header, std::move(payload), false);
    session.wait.reset();
  }
}

void DeviceHost::CloseSession(std::uint64_t id) {
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  if (active_ && active_->session == id) AbortActiveLaunch();  // its memory is about to go
  Session& session = it->second;
  while (!session.allocations.empty()) {
    try {
      FreeAllocation(session, session.allocations.begin()->first);
    } catch (const std::exception& error) {
      // FreeAllocation released the allocation before zeroing failed: report and go on.
      fmt::print(stderr, "systole serve: zeroing a closed session's memory: {}\n", error.what());
    }
  }
  if (session.greeted) --greeted_;
  sessions_.erase(it);
  --sessions_open_;
}

// A session's own launch may still use the allocation: then it leaves the session's books now
// (the client can no longer reach it) and returns to everyone's when the launch ends.
void DeviceHost::FreeAllocation(Session& session, std::uint64_t address) {
  const auto it = session.allocations.find(address);
  if (it == session.allocations.end()) {
    throw ProtocolError(ErrorCode::kOutOfBounds,
                        fmt::format("no allocation of this client starts at 0x{:x}", address));
  }
  const auto [start, end] = *it;
  session.allocations.erase(it);
  if (session.running()) {
    session.frees_after_launch.emplace_back(start, end);
  } else {
    ReleaseRange(session, start, end);
  }
}

void DeviceHost::ReleaseRange(Session& session, std::uint64_t start, std::uint64_t end) {
  session.allocated_bytes -= end - start;
  allocator_.Free(start);
  // Zero what the client wrote, so the next owner of these bytes cannot read them.
  static const std::vector<std::uint8_t> zeros(1u << 20);
  for (auto [first, last] : TakeRanges(session.dirty, start, end)) {
    for (std::uint64_t at = first; at < last;) {
      const std::uint64_t length = std::min<std::uint64_t>(last - at, zeros.size());
      device_->WriteMemory(at, {zeros.data(), length});
      at += length;
    }
  }
}

}  // namespace systole::server
