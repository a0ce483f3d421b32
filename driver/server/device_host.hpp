// The device side of a server: one device, many sessions, one worker thread.
//
// Transports (the TCP server now, a USB bridge later) hand it whole frames; every request is
// handled on the worker thread, which alone touches the device and the sessions, so nothing
// but the event queue needs a lock. Launches are queued per session and run one at a time,
// round robin between the sessions that have one ready (a fair queue); before a launch runs,
// its footprint (launch_footprint.hpp) must lie inside that session's allocations.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "driver/server/session.hpp"
#include "systole/launch_footprint.hpp"
#include "systole/link.hpp"
#include "systole/protocol.hpp"
#include "systole/server.hpp"

namespace systole::server {

class DeviceHost {
 public:
  DeviceHost(std::unique_ptr<Link> device, const ServerOptions& options);
  ~DeviceHost();
  DeviceHost(const DeviceHost&) = delete;
  DeviceHost& operator=(const DeviceHost&) = delete;

  // Thread-safe; `send` is called on the worker thread.
  void Open(std::uint64_t session, SendFrame send);
  void Deliver(std::uint64_t session, protocol::Frame frame);
  void Close(std::uint64_t session);
  // Stops the worker; nothing is sent afterwards. Idempotent.
  void Stop();

  std::uint32_t sessions() const { return sessions_open_.load(); }
  std::uint64_t launches() const { return launches_run_.load(); }
  const Config& config() const { return config_; }

 private:
  struct Event {
    enum class Kind { kOpen, kDeliver, kClose } kind;
    std::uint64_t session;
    SendFrame send;
    protocol::Frame frame;
  };

  void WorkerLoop();
  void HandleEvent(Event& event);
  void HandleRequest(Session& session, const protocol::Frame& frame);
  // The reply's payload, or nullopt for a WAIT (AnswerWaits replies later). Throws
  // ProtocolError for an error reply.
  std::optional<std::vector<std::uint8_t>> Respond(Session& session, const protocol::Frame& frame);
  void AnswerWaits(bool timeouts_only);
  void RunNextLaunch();
  // Runs the launch if everything it can touch is the session's; refuses it (DRAM_RANGE at the
  // first offending instruction) otherwise.
  void RunVetted(Session& session, const QueuedLaunch& launch);
  // `ranges`: what the launch may write, to be zeroed when the session frees that memory.
  void RunOnDevice(Session& session, const QueuedLaunch& launch,
                   const std::vector<TouchedRange>& ranges);
  void FreeAllocation(Session& session, std::uint64_t address);
  void CloseSession(std::uint64_t id);

  std::unique_ptr<Link> device_;
  ServerOptions options_;
  Config config_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Event> events_;
  bool stopping_ = false;

  // Worker thread only.
  std::map<std::uint64_t, Session> sessions_;
  std::deque<std::uint64_t> ready_;  // sessions with a runnable launch, in turn order
  MemoryAllocator allocator_;

  std::atomic<std::uint32_t> sessions_open_{0};
  std::atomic<std::uint64_t> launches_run_{0};
  std::thread worker_;
};

}  // namespace systole::server
