// A client's connection: see connection.hpp.
#include "driver/server/connection.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>

namespace systole::server {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr std::size_t kAllSent = ~std::size_t{0};
// A payload buffer starts at most this large and then at most doubles with what has arrived,
// so a header that promises megabytes costs nothing until the bytes come (and the 512 KiB
// frames of tcp:// bulk transfers arrive in one read).
constexpr std::size_t kFirstPayloadRead = 1u << 20;

}  // namespace

Connection::Connection(tcp::socket socket, DeviceHost& host, std::uint64_t id,
                       const ServerOptions& options)
    : socket_(std::move(socket)), timer_(socket_.get_executor()), host_(host), id_(id),
      options_(options), last_activity_(Clock::now()) {}

void Connection::Start() {
  started_ = true;
  // The session's sender keeps the connection alive while its requests are with the host
  // (reading may be paused then, with no handler holding it); the host drops the sender when
  // Shutdown closes the session.
  host_.Open(id_, [self = shared_from_this()](protocol::Header header,
                                              std::vector<std::uint8_t> payload, bool close) {
    self->ReplyFromWorker(header, std::move(payload), close);
  });
  ArmTimer(options_.hello_timeout);
  ReadHeader();
}

bool Connection::MayRead() const {
  // Until HELLO is answered, one request at a time: the frame limit changes with the answer.
  return in_flight_ < (greeted_.load() ? kMaxRequestsInFlight : 1);
}

void Connection::ReadHeader() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    if (!MayRead()) {
      reading_paused_ = true;  // resumed when a reply is sent
      return;
    }
  }
  asio::async_read(socket_, asio::buffer(header_),
                   [self = shared_from_this()](boost::system::error_code error, std::size_t) {
                     if (error) return self->Shutdown();
                     self->OnHeader();
                   });
}

void Connection::OnHeader() {
  const bool greeted = greeted_.load();
  const std::uint32_t limit = greeted ? options_.max_payload : kMaxHelloPayload;
  if (auto error = protocol::ParseHeader(header_, limit, fields_)) {
    // The stream cannot be trusted past a bad header: say why, then hang up.
    if (!greeted && error->code == protocol::ErrorCode::kTooLarge) {
      error->message = fmt::format("{} (the limit until HELLO is answered)", error->message);
    }
    return WriteError(error->request_id, error->code, error->message, true);
  }
  payload_.clear();
  payload_received_ = 0;
  ReadPayload();
}

void Connection::ReadPayload() {
  const std::size_t total = fields_.payload_bytes;
  if (payload_received_ == total) return OnPayload();
  const std::size_t step = std::min(total - payload_received_,
                                    std::max(kFirstPayloadRead, payload_received_));
  payload_.resize(payload_received_ + step);
  asio::async_read(socket_, asio::buffer(payload_.data() + payload_received_, step),
                   [self = shared_from_this()](boost::system::error_code error, std::size_t n) {
                     if (error) return self->Shutdown();  // vanished mid-frame
                     self->payload_received_ += n;
                     self->ReadPayload();
                   });
}

void Connection::OnPayload() {
  hello_received_ = true;
  {
    std::lock_guard lock(mutex_);
    last_activity_ = Clock::now();
  }
  if (!protocol::PayloadMatches(header_, payload_)) {
    // The length was sane, so the stream is still in step: drop the frame, keep going.
    const protocol::DecodeError error = protocol::ChecksumError(header_, payload_);
    WriteError(error.request_id, error.code, error.message, false);
  } else {
    {
      std::lock_guard lock(mutex_);  // counted before the worker can answer it
      ++with_host_;
      ++in_flight_;
    }
    host_.Deliver(id_, protocol::Frame{fields_.type, fields_.request_id, std::move(payload_)});
    payload_ = {};
  }
  ReadHeader();
}

// On the worker thread: send now if nothing is queued and the socket takes it all; queue what
// is left (at once, so that nothing the worker sends next can overtake it). The I/O thread
// hears of it only when it has work: a queue to start, or reading to resume.
void Connection::ReplyFromWorker(const protocol::Header& header,
                                 std::vector<std::uint8_t> payload, bool close) {
  // A HELLO reply (not an error) greets the connection: bytes 6-7 of a header are its type.
  const auto type = static_cast<std::uint16_t>(header[6] | header[7] << 8);
  if (type == protocol::ReplyType(protocol::MessageType::kHello)) greeted_ = true;
  bool start = false;
  bool resume = false;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    if (with_host_ > 0) --with_host_;
    std::size_t sent = 0;
    if (!close && writes_.empty()) {
      sent = SendNow(header, payload);
      if (sent == protocol::kHeaderBytes + payload.size()) sent = kAllSent;
    }
    if (sent == kAllSent) {
      last_activity_ = Clock::now();
      if (in_flight_ > 0) --in_flight_;
    } else {
      writes_.push_back({header, std::move(payload), close, true, sent});
      start = writes_.size() == 1;
    }
    if (reading_paused_ && MayRead()) {
      reading_paused_ = false;
      resume = true;
    }
  }
  if (!start && !resume) return;
  asio::post(socket_.get_executor(), [self = shared_from_this(), start, resume] {
    if (start) {
      std::lock_guard lock(self->mutex_);
      if (!self->closed_ && !self->writes_.empty()) self->WriteNext();
    }
    if (resume) self->ReadHeader();
  });
}

// Under mutex_: as much of the frame as the socket takes without blocking.
std::size_t Connection::SendNow(const protocol::Header& header,
                                const std::vector<std::uint8_t>& payload) {
  iovec parts[2] = {{const_cast<std::uint8_t*>(header.data()), header.size()},
                    {const_cast<std::uint8_t*>(payload.data()), payload.size()}};
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = payload.empty() ? 1 : 2;
  const ssize_t sent = ::sendmsg(socket_.native_handle(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
  // Nothing sent (a full socket, or an error the I/O thread's own write will meet and report).
  return sent > 0 ? static_cast<std::size_t>(sent) : 0;
}

void Connection::WriteError(std::uint32_t request_id, protocol::ErrorCode code,
                            std::string_view message, bool close_after) {
  std::vector<std::uint8_t> payload = protocol::ErrorPayload(code, message);
  const protocol::Header header = protocol::EncodeHeader(
      static_cast<std::uint16_t>(protocol::MessageType::kError), request_id, payload);
  Write(header, std::move(payload), close_after);
}

// On the I/O thread: a reply of the connection's own (not to a request the host answers).
void Connection::Write(const protocol::Header& header, std::vector<std::uint8_t> payload,
                       bool close_after) {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  writes_.push_back({header, std::move(payload), close_after, false, 0});
  if (writes_.size() == 1) WriteNext();
}

// Under mutex_, on the I/O thread. The front stays put (a deque's elements do not move when
// the worker queues more behind it) until its write completes.
void Connection::WriteNext() {
  const PendingWrite& next = writes_.front();
  std::array<asio::const_buffer, 2> buffers = {asio::buffer(next.header),
                                               asio::buffer(next.payload)};
  const std::size_t skip_header = std::min(next.skip, next.header.size());
  buffers[0] += skip_header;
  buffers[1] += next.skip - skip_header;
  asio::async_write(socket_, buffers,
                    [self = shared_from_this()](boost::system::error_code error, std::size_t) {
                      if (error) return self->Shutdown();
                      self->OnWritten();
                    });
}

void Connection::OnWritten() {
  bool resume = false;
  {
    std::unique_lock lock(mutex_);
    if (closed_) return;  // Shutdown emptied the queue meanwhile
    const PendingWrite& done = writes_.front();
    const bool close = done.close_after;
    if (done.answers_request && in_flight_ > 0) --in_flight_;
    writes_.pop_front();
    last_activity_ = Clock::now();
    if (close) {
      lock.unlock();
      return Shutdown();
    }
    if (!writes_.empty()) WriteNext();
    if (reading_paused_ && MayRead()) {
      reading_paused_ = false;
      resume = true;
    }
  }
  if (resume) ReadHeader();
}

void Connection::ArmTimer(Clock::duration after) {
  timer_.expires_after(after);
  timer_.async_wait([self = shared_from_this()](boost::system::error_code error) {
    if (!error) self->OnTimer();
  });
}

// Before HELLO: hang up. After: hang up once idle for idle_timeout, where a request with the
// device host (a WAIT for a long launch, say) is not idleness but a reply the client does not
// read is.
void Connection::OnTimer() {
  if (!greeted_.load()) return Shutdown();
  Clock::duration wait = options_.idle_timeout;
  bool idle_too_long = false;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    if (with_host_ == 0) {
      const Clock::duration idle = Clock::now() - last_activity_;
      idle_too_long = idle >= options_.idle_timeout;
      wait = options_.idle_timeout - idle;
    }
  }
  if (idle_too_long) return Shutdown();
  ArmTimer(wait);
}

void Connection::Shutdown() {
  {
    std::lock_guard lock(mutex_);  // the worker may be sending on this socket
    if (closed_) return;
    closed_ = true;
    closed_flag_ = true;
    writes_.clear();
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }
  timer_.cancel();
  if (started_) host_.Close(id_);
}

}  // namespace systole::server
