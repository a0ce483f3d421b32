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

struct ServerOptions {
  std::string address = "127.0.0.1";  // an IP address or "localhost"
  std::uint16_t port = 7000;          // 0: any free port (see DeviceServer::port())
  // Clients must send this in HELLO. Required (non-empty) unless `address` is loopback.
  std::string token;
  std::uint32_t max_payload = protocol::kDefaultMaxPayload;   // per frame
  std::uint64_t max_allocation_bytes = std::uint64_t{1} << 30; // per client, in total
  std::uint32_t max_clients = 64;
  std::chrono::milliseconds launch_timeout{std::chrono::minutes(10)};
};

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
  // Clients connected now, and launches run since the start.
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
