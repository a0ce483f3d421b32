// A device server: hosts one device (any link: ref, rtl, a board) for many network clients at
// once, speaking the protocol of docs/PROTOCOL.md over TCP. `systole serve` is a thin shell
// around it; tests run it in process on an ephemeral loopback port.
//
// Each client sees a whole device of its own: its own allocations (it can read and write only
// inside them, and so can its programs — checked before every launch), its own command, status,
// interrupt and counter registers. Launches from different clients run one at a time, taking
// turns. A client that disconnects, even in the middle of a transfer, is forgotten: its
// launches dropped, its memory zeroed and freed.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "systole/link.hpp"
#include "systole/protocol.hpp"

namespace systole {

// The server could not start (bad address, port taken, no token for a public address).
class ServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every limit of docs/PROTOCOL.md ("Threat model and limits"), with its default.
struct ServerOptions {
  std::string address = "127.0.0.1";  // an IP address or "localhost"
  std::uint16_t port = 7000;          // 0: any free port (see DeviceServer::port())
  // Clients must send this in HELLO. Required (non-empty) unless `address` is loopback.
  std::string token;
  std::uint32_t max_payload = protocol::kDefaultMaxPayload;  // per frame, once greeted
  // Device memory one client may hold; nullopt: a quarter of the device's (kDefaultQuotaShare),
  // so that no client can take all of it.
  std::optional<std::uint64_t> max_allocation_bytes;
  std::uint32_t max_clients = 64;  // greeted clients at once
  // Connections that have not yet been greeted; when one more arrives the oldest that has not
  // sent its HELLO is dropped (else the oldest), so silent connections cannot keep a client with
  // the token out.
  std::uint32_t max_pending = 64;
  // A connection must be greeted this soon after it opens,
  std::chrono::milliseconds hello_timeout{std::chrono::seconds(10)};
  // and is closed after this long without a request while nothing of it is in progress (no
  // request with the device, no reply the client has not read, no WAIT pending).
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(10)};
  // A wrong token is answered this long after the previous wrong one (across all
  // connections): guesses run at most 1/auth_failure_delay per second.
  std::chrono::milliseconds auth_failure_delay{500};
  // A launch that runs longer is aborted (ERROR_CODE = ABORTED), on every device.
  std::chrono::milliseconds launch_timeout{std::chrono::minutes(10)};
};

// max_allocation_bytes' default: device memory / kDefaultQuotaShare.
inline constexpr std::uint64_t kDefaultQuotaShare = 4;
// The largest HELLO payload (version, a token of up to kMaxTokenBytes): the frame limit until a
// connection is greeted, so that no one can make the server hold more before authenticating.
inline constexpr std::uint32_t kMaxTokenBytes = 4096;
inline constexpr std::uint32_t kMaxHelloPayload = 2 + 4 + kMaxTokenBytes;
// The smallest --max-frame-mib a server accepts and a client works with: room for a transfer's
// fixed fields and some data.
inline constexpr std::uint32_t kMinMaxPayload = 4096;

class DeviceServer {
 public:
  // Binds and starts serving in background threads. Throws ServerError.
  DeviceServer(std::unique_ptr<Link> device, ServerOptions options);
  ~DeviceServer();  // Stop()
  DeviceServer(const DeviceServer&) = delete;
  DeviceServer& operator=(const DeviceServer&) = delete;

  std::uint16_t port() const;
  // "127.0.0.1:7000": what a client puts after tcp://.
  std::string endpoint() const;
  // Connections open now (greeted or not), and launches run since the start.
  std::uint32_t clients() const;
  std::uint64_t launches() const;

  // Blocks until Stop() is called (from another thread or a signal handler's thread).
  void Wait();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace systole
