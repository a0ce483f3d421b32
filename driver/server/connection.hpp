// One client's TCP connection to a DeviceServer: reads frames and hands them to the device
// host, writes its replies, and enforces the per-connection limits of docs/PROTOCOL.md.
//
// Each connection reads a header, then its payload (Boost.Asio's header→body loop), and writes
// replies through a queue. Replies leave from the device host's worker thread itself when
// nothing is queued before them: a non-blocking sendmsg straight from the worker saves the
// hand-off to the I/O thread, one of the four thread wake-ups of a register round trip.
// Whatever the socket does not take at once goes to the queue, which the I/O thread drains.
// One mutex orders the two writers, keeps the socket open while the worker sends, and guards
// the counts below.
//
// What one connection can make the server hold is bounded: it stops reading while
// kMaxRequestsInFlight of its requests are unanswered or their replies unsent (a client that
// never reads its replies stops being read), a payload buffer grows only as its bytes arrive,
// and until HELLO is answered a frame may carry no more than a HELLO needs. A steady_timer
// closes the connection if HELLO does not come within hello_timeout, or once it has been idle
// for idle_timeout (no request, no reply sent, nothing of it with the device host).
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "driver/server/device_host.hpp"
#include "systole/server.hpp"

namespace systole::server {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Requests of one client that may be unanswered or have unsent replies at once.
  static constexpr std::uint32_t kMaxRequestsInFlight = 4;

  Connection(boost::asio::ip::tcp::socket socket, DeviceHost& host, std::uint64_t id,
             const ServerOptions& options);

  // On the I/O thread. Start opens a session; Drop hangs up now.
  void Start();
  void Drop() { Shutdown(); }

  // Any thread.
  bool greeted() const { return greeted_.load(); }
  bool hello_received() const { return hello_received_.load(); }
  bool closed() const { return closed_flag_.load(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct PendingWrite {
    protocol::Header header;
    std::vector<std::uint8_t> payload;
    bool close_after;
    bool answers_request;  // a reply to a request counted in in_flight_
    std::size_t skip;      // bytes the worker already sent
  };

  void ReadHeader();
  void OnHeader();
  void ReadPayload();
  void OnPayload();
  void ReplyFromWorker(const protocol::Header& header, std::vector<std::uint8_t> payload,
                       bool close);
  std::size_t SendNow(const protocol::Header& header, const std::vector<std::uint8_t>& payload);
  void WriteError(std::uint32_t request_id, protocol::ErrorCode code, std::string_view message,
                  bool close_after);
  void Write(const protocol::Header& header, std::vector<std::uint8_t> payload, bool close_after);
  void WriteNext();
  void OnWritten();
  // Under mutex_: whether another request may be read now.
  bool MayRead() const;
  void ArmTimer(Clock::duration after);
  void OnTimer();
  void Shutdown();

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer timer_;
  DeviceHost& host_;
  std::uint64_t id_;
  const ServerOptions& options_;
  // The I/O thread's alone.
  protocol::Header header_{};
  protocol::HeaderFields fields_;
  std::vector<std::uint8_t> payload_;
  std::size_t payload_received_ = 0;
  bool started_ = false;
  // Shared by the I/O thread and the worker.
  std::mutex mutex_;
  std::deque<PendingWrite> writes_;
  bool closed_ = false;
  std::uint32_t with_host_ = 0;  // requests the device host has not answered yet
  std::uint32_t in_flight_ = 0;  // those, and answered ones whose reply is not sent yet
  bool reading_paused_ = false;  // no read outstanding until MayRead() again
  Clock::time_point last_activity_;  // a request received or a reply's bytes sent
  std::atomic<bool> hello_received_ = false;  // a whole frame has arrived
  std::atomic<bool> greeted_ = false;
  std::atomic<bool> closed_flag_ = false;
};

}  // namespace systole::server
