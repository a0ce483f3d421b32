// DeviceServer: the TCP side. One io_context on one thread accepts clients and moves frames;
// the DeviceHost's worker does everything else. Each connection reads a header, then its
// payload (Boost.Asio's header→body loop), and writes replies through a queue.
//
// Replies leave from the worker thread itself when nothing is queued before them: a
// non-blocking sendmsg straight from the worker saves the hand-off to the I/O thread, one of
// the four thread wake-ups of a register round trip. Whatever the socket does not take at once
// goes to the queue, which the I/O thread drains. The worker also counts the request as
// answered and, if that lifts the read limit, has the I/O thread read again; otherwise the I/O
// thread is not woken at all. One mutex orders the two writers, keeps the socket open while the
// worker sends, and guards the count.
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <cerrno>
#include <deque>
#include <mutex>

#include "driver/server/device_host.hpp"
#include "systole/server.hpp"

namespace systole {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// Requests a client may have in the device host's queue before its connection stops reading:
// bounds the memory one client can make the server hold to this many frames.
constexpr std::uint32_t kMaxRequestsInFlight = 4;
constexpr std::size_t kAllSent = ~std::size_t{0};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, server::DeviceHost& host, std::uint64_t id,
             std::uint32_t max_payload, std::atomic<std::uint32_t>& clients)
      : socket_(std::move(socket)), host_(host), id_(id), max_payload_(max_payload),
        clients_(clients) {}

  void Start() {
    started_ = true;
    ++clients_;
    // The session's sender keeps the connection alive while its requests are with the host
    // (reading may be paused then, with no handler holding it); the host drops the sender when
    // Shutdown closes the session.
    host_.Open(id_, [self = shared_from_this()](protocol::Header header,
                                                std::vector<std::uint8_t> payload, bool close) {
      self->ReplyFromWorker(header, std::move(payload), close);
    });
    ReadHeader();
  }

  // Refuses a client the server has no room for.
  void Refuse(std::string_view why) {
    WriteError(0, protocol::ErrorCode::kTooManyClients, why, true);
  }

 private:
  void ReadHeader() {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      if (in_flight_ >= kMaxRequestsInFlight) {
        reading_paused_ = true;  // the worker resumes reading when it answers one
        return;
      }
    }
    asio::async_read(socket_, asio::buffer(header_),
                     [self = shared_from_this()](boost::system::error_code error, std::size_t) {
                       if (error) return self->Shutdown();
                       self->OnHeader();
                     });
  }

  void OnHeader() {
    if (auto error = protocol::ParseHeader(header_, max_payload_, fields_)) {
      // The stream cannot be trusted past a bad header: say why, then hang up.
      return WriteError(error->request_id, error->code, error->message, true);
    }
    payload_.resize(fields_.payload_bytes);
    asio::async_read(socket_, asio::buffer(payload_),
                     [self = shared_from_this()](boost::system::error_code error, std::size_t) {
                       if (error) return self->Shutdown();  // vanished mid-frame
                       self->OnPayload();
                     });
  }

  void OnPayload() {
    if (!protocol::PayloadMatches(header_, payload_)) {
      // The length was sane, so the stream is still in step: drop the frame, keep going.
      const protocol::DecodeError error = protocol::ChecksumError(header_, payload_);
      WriteError(error.request_id, error.code, error.message, false);
    } else {
      {
        std::lock_guard lock(mutex_);  // counted before the worker can answer it
        ++in_flight_;
      }
      host_.Deliver(id_, protocol::Frame{fields_.type, fields_.request_id, std::move(payload_)});
      payload_ = {};
    }
    ReadHeader();
  }

  // On the worker thread: send now if nothing is queued and the socket takes it all; queue
  // what is left (at once, so that nothing the worker sends next can overtake it). The I/O
  // thread hears of it only when it has work: a queue to start, or reading to resume.
  void ReplyFromWorker(const protocol::Header& header, std::vector<std::uint8_t> payload,
                       bool close) {
    bool start = false;
    bool resume = false;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      if (in_flight_ > 0) --in_flight_;
      if (reading_paused_ && in_flight_ < kMaxRequestsInFlight) {
        reading_paused_ = false;
        resume = true;
      }
      std::size_t sent = 0;
      if (!close && writes_.empty()) {
        sent = SendNow(header, payload);
        if (sent == protocol::kHeaderBytes + payload.size()) sent = kAllSent;
      }
      if (sent != kAllSent) {
        writes_.push_back({header, std::move(payload), close, sent});
        start = writes_.size() == 1;
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
  std::size_t SendNow(const protocol::Header& header, const std::vector<std::uint8_t>& payload) {
    iovec parts[2] = {{const_cast<std::uint8_t*>(header.data()), header.size()},
                      {const_cast<std::uint8_t*>(payload.data()), payload.size()}};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = payload.empty() ? 1 : 2;
    const ssize_t sent = ::sendmsg(socket_.native_handle(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    // Nothing sent (a full socket, or an error the I/O thread's own write will meet and report).
    return sent > 0 ? static_cast<std::size_t>(sent) : 0;
  }

  void WriteError(std::uint32_t request_id, protocol::ErrorCode code, std::string_view message,
                  bool close_after) {
    std::vector<std::uint8_t> payload = protocol::ErrorPayload(code, message);
    const protocol::Header header = protocol::EncodeHeader(
        static_cast<std::uint16_t>(protocol::MessageType::kError), request_id, payload);
    Write(header, std::move(payload), close_after);
  }

  // On the I/O thread.
  void Write(const protocol::Header& header, std::vector<std::uint8_t> payload, bool close_after) {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    writes_.push_back({header, std::move(payload), close_after, 0});
    if (writes_.size() == 1) WriteNext();
  }

  // Under mutex_, on the I/O thread. The front stays put (a deque's elements do not move
  // when the worker queues more behind it) until its write completes.
  void WriteNext() {
    const PendingWrite& next = writes_.front();
    std::array<asio::const_buffer, 2> buffers = {asio::buffer(next.header),
                                                 asio::buffer(next.payload)};
    const std::size_t skip_header = std::min(next.skip, next.header.size());
    buffers[0] += skip_header;
    buffers[1] += next.skip - skip_header;
    asio::async_write(socket_, buffers,
                      [self = shared_from_this()](boost::system::error_code error, std::size_t) {
                        if (error) return self->Shutdown();
                        std::unique_lock lock(self->mutex_);
                        if (self->closed_) return;  // Shutdown emptied the queue meanwhile
                        const bool close = self->writes_.front().close_after;
                        self->writes_.pop_front();
                        if (close) {
                          lock.unlock();
                          return self->Shutdown();
                        }
                        if (!self->writes_.empty()) self->WriteNext();
                      });
  }

  void Shutdown() {
    {
      std::lock_guard lock(mutex_);  // the worker may be sending on this socket
      if (closed_) return;
      closed_ = true;
      writes_.clear();
      boost::system::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_both, ignored);
      socket_.close(ignored);
    }
    if (started_) {
      host_.Close(id_);
      --clients_;
    }
  }

  struct PendingWrite {
    protocol::Header header;
    std::vector<std::uint8_t> payload;
    bool close_after;
    std::size_t skip;  // bytes the worker already sent
  };

  tcp::socket socket_;
  server::DeviceHost& host_;
  std::uint64_t id_;
  std::uint32_t max_payload_;
  std::atomic<std::uint32_t>& clients_;
  protocol::Header header_{};
  protocol::HeaderFields fields_;
  std::vector<std::uint8_t> payload_;
  // Shared by the I/O thread and the worker.
  std::mutex mutex_;
  std::deque<PendingWrite> writes_;
  bool closed_ = false;
  std::uint32_t in_flight_ = 0;  // requests with the device host, not yet answered
  bool reading_paused_ = false;  // at kMaxRequestsInFlight: no read outstanding
  bool started_ = false;         // the I/O thread's alone
};

asio::ip::address ParseAddress(const std::string& address) {
  if (address == "localhost") return asio::ip::address_v4::loopback();
  boost::system::error_code error;
  const asio::ip::address parsed = asio::ip::make_address(address, error);
  if (error) {
    throw ServerError(fmt::format("'{}' is not an IP address (use e.g. 127.0.0.1, ::1, 0.0.0.0)",
                                  address));
  }
  return parsed;
}

}  // namespace

struct DeviceServer::Impl {
  Impl(std::unique_ptr<Link> device, ServerOptions server_options)
      : options(std::move(server_options)), host(std::move(device), options), acceptor(io) {}

  void Accept() {
    acceptor.async_accept([this](boost::system::error_code error, tcp::socket socket) {
      if (error) {
        if (error == asio::error::operation_aborted) return;
        return Accept();
      }
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto connection = std::make_shared<Connection>(std::move(socket), host, ++next_id,
                                                     options.max_payload, clients);
      if (clients.load() >= options.max_clients) {
        connection->Refuse(fmt::format("the server already has {} clients", options.max_clients));
      } else {
        connection->Start();
      }
      Accept();
    });
  }

  ServerOptions options;
  server::DeviceHost host;
  asio::io_context io;
  tcp::acceptor acceptor;
  std::atomic<std::uint32_t> clients{0};
  std::uint64_t next_id = 0;
  std::thread io_thread;
  std::mutex stop_mutex;
  std::condition_variable stopped_cv;
  bool stopped = false;
};

DeviceServer::DeviceServer(std::unique_ptr<Link> device, ServerOptions options) {
  const asio::ip::address address = ParseAddress(options.address);
  if (!address.is_loopback() && options.token.empty()) {
    throw ServerError(fmt::format(
        "refusing to listen on {} without a token: anyone who can reach it could use the "
        "device. Pass --token-file FILE (clients send the token: tcp://HOST:PORT?token=… or "
        "SYSTOLE_TOKEN), or listen on 127.0.0.1",
        options.address));
  }
  impl_ = std::make_unique<Impl>(std::move(device), std::move(options));
  try {
    const tcp::endpoint endpoint(address, impl_->options.port);
    impl_->acceptor.open(endpoint.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(endpoint);
    impl_->acceptor.listen();
  } catch (const boost::system::system_error& error) {
    impl_->host.Stop();
    throw ServerError(fmt::format("cannot listen on {}:{}: {}", impl_->options.address,
                                  impl_->options.port, error.code().message()));
  }
  impl_->Accept();
  impl_->io_thread = std::thread([this] { impl_->io.run(); });
}

DeviceServer::~DeviceServer() { Stop(); }

std::uint16_t DeviceServer::port() const { return impl_->acceptor.local_endpoint().port(); }

std::string DeviceServer::endpoint() const {
  const tcp::endpoint local = impl_->acceptor.local_endpoint();
  const std::string host = local.address().to_string();
  return local.address().is_v6() ? fmt::format("[{}]:{}", host, local.port())
                                  : fmt::format("{}:{}", host, local.port());
}

std::uint32_t DeviceServer::clients() const { return impl_->host.sessions(); }
std::uint64_t DeviceServer::launches() const { return impl_->host.launches(); }

void DeviceServer::Wait() {
  std::unique_lock lock(impl_->stop_mutex);
  impl_->stopped_cv.wait(lock, [this] { return impl_->stopped; });
}

void DeviceServer::Stop() {
  {
    std::lock_guard lock(impl_->stop_mutex);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  // The worker first: after it stops nothing posts to the io_context any more.
  impl_->host.Stop();
  impl_->io.stop();
  if (impl_->io_thread.joinable()) impl_->io_thread.join();
  impl_->stopped_cv.notify_all();
}

}  // namespace systole
