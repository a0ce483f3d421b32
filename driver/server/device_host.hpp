// The device side of a server: one device, many sessions, one worker thread.
//
// Transports (the TCP server now, a USB bridge later) hand it whole frames; every request is
// handled on the worker thread, which alone touches the device and the sessions, so nothing
// but the event queue needs a lock. Launches are queued per session and run one at a time,
// round robin between the sessions that have one ready (a fair queue); before a launch runs,
// its footprint (launch_footprint.hpp) must lie inside that session's allocations.
//
// A launch runs in slices (kLaunchSlice of device time each): between two slices the worker
// answers every request that has arrived, from every client, so a long launch delays no one's
// HELLO or transfer by more than a slice, and is aborted once it passes its launch_timeout.
// Clients' memory is disjoint, so their transfers cannot disturb the launch that runs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <optional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "driver/server/session.hpp"
#include "driver/server/vetting.hpp"
#include "systole/launch_footprint.hpp"
#include "systole/link.hpp"
#include "systole/protocol.hpp"
#include "systole/server.hpp"

namespace systole::server {

class DeviceHost {
 public:
  // `worker`: false for fuzzers and deterministic tests, which call Poll() instead.
  DeviceHost(std::unique_ptr<Link> device, const ServerOptions& options, bool worker = true);
  ~DeviceHost();
  DeviceHost(const DeviceHost&) = delete;
  DeviceHost& operator=(const DeviceHost&) = delete;

  // Thread-safe; `send` is called on the worker thread.
  void Open(std::uint64_t session, SendFrame send);
  void Deliver(std::uint64_t session, protocol::Frame frame);
  void Close(std::uint64_t session);
  // Stops the worker; nothing is sent afterwards. Idempotent.
  void Stop();
  // Without a worker: handles every event delivered so far and runs every launch to its end,
  // on the calling thread. Replies that are due later (a WAIT, a wrong token's) stay pending.
  void Poll();
  // Allocations of device memory, the server's own included: without a worker (Poll) only.
  std::size_t allocations() const { return allocator_.allocations().size(); }

  std::uint32_t sessions() const { return sessions_open_.load(); }
  std::uint32_t greeted() const { return greeted_.load(); }
  std::uint64_t launches() const { return launches_run_.load(); }
  const Config& config() const { return config_; }

 private:
  struct Event {
    enum class Kind { kOpen, kDeliver, kClose } kind;
    std::uint64_t session;
    SendFrame send;
    protocol::Frame frame;
  };
  // A reply held back: a wrong token is answered late (auth_failure_delay).
  struct DelayedReply {
    std::uint64_t session;
    std::chrono::steady_clock::time_point due;
    protocol::Header header;
    std::vector<std::uint8_t> payload;
  };
  // Reported instead of the device's outcome when a launch must stop at an instruction it may
  // not run (outside the session's memory): the device runs only the instructions before it.
  struct Refusal {
    regs::ErrorCode error;
    std::uint64_t pc;
  };
  // The launch being vetted (vetting.hpp), then run on the device.
  struct ActiveLaunch {
    std::uint64_t session;
    QueuedLaunch launch;                // as the device runs it: a prefix when `refusal` is set
    std::optional<Vetting> vetting;     // until it is done
    bool on_device = false;
    std::vector<TouchedRange> ranges;   // what it may write
    std::optional<Refusal> refusal;
    std::chrono::steady_clock::time_point deadline;
  };
  // What a launch left in the device's registers.
  struct Outcome {
    std::uint32_t irq = 0;
    std::uint32_t irq_code = 0;
    regs::ErrorCode error = regs::ErrorCode::kNone;
    std::uint64_t fault_pc = 0;
    std::array<std::uint64_t, kNumCounters> counts{};
  };

  void WorkerLoop();
  void HandleEvent(Event& event);
  void HandleRequest(Session& session, std::uint64_t id, const protocol::Frame& frame);
  // The reply's payload, or nullopt for a WAIT (AnswerWaits replies later). Throws
  // ProtocolError for an error reply.
  std::optional<std::vector<std::uint8_t>> Respond(Session& session, const protocol::Frame& frame);
  // HELLO: checks version, token and room; throws ProtocolError.
  void Greet(Session& session, protocol::PayloadReader& request);
  void AnswerWaits();
  void SendDelayedReplies();
  std::optional<std::chrono::steady_clock::time_point> NextDeadline() const;

  // device_host_launches.cpp
  // Takes the next session's launch in turn, vets it and starts it on the device.
  void StartNextLaunch();
  // Vets the active launch, or runs it, for one slice; finishes it when it ends or runs out of
  // time.
  void StepLaunch();
  // The vetting is done: refuse the launch, or start it on the device.
  void StartVetted();
  // Aborts the active launch now (its session closed) and finishes it.
  void AbortActiveLaunch();
  void FinishActiveLaunch();
  void StartOnDevice(const QueuedLaunch& launch);
  Outcome CollectOutcome();

  // device_host_scrub.cpp: the on-chip state one client leaves for the next.
  void ReserveScrubProgram();
  void ScrubIfAnotherClient(std::uint64_t session);

  void FreeAllocation(Session& session, std::uint64_t address);
  void ReleaseRange(Session& session, std::uint64_t start, std::uint64_t end);
  void CloseSession(std::uint64_t id);

  std::unique_ptr<Link> device_;
  ServerOptions options_;
  Config config_;
  std::uint64_t max_allocation_bytes_;  // per client: options_' or kDefaultQuotaShare's

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Event> events_;
  bool stopping_ = false;

  // Worker thread only.
  std::map<std::uint64_t, Session> sessions_;
  std::deque<std::uint64_t> ready_;  // sessions with a runnable launch, in turn order
  MemoryAllocator allocator_;
  std::optional<ActiveLaunch> active_;
  std::deque<DelayedReply> delayed_;  // in order of `due`
  std::chrono::steady_clock::time_point last_auth_failure_{};
  // The scrub program (device_host_scrub.cpp) and whose launch ran last (0: nobody's yet, or
  // unknown: a device starts with whatever it holds).
  std::uint64_t scrub_pc_ = 0;
  std::uint32_t scrub_count_ = 0;
  std::uint64_t last_owner_ = 0;

  std::atomic<std::uint32_t> sessions_open_{0};
  std::atomic<std::uint32_t> greeted_{0};
  std::atomic<std::uint64_t> launches_run_{0};
  std::thread worker_;
};

}  // namespace systole::server
