// One client of a device server: its allocations and its own copy of the register window.
//
// Every client sees a whole device. Identity registers come from the real one; the command,
// status, interrupt and counter registers are the client's own, so one client's launches,
// errors and counters never show in another's. A DOORBELL queues a launch with the session;
// the device host runs queued launches one at a time, round robin between sessions, and folds
// each launch's results (interrupt causes, error, counter increments) back into its session.
// Used only on the device host's worker thread: nothing here locks.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "arch/regs/host_registers.hpp"
#include "arch/regs/regmap.hpp"
#include "systole/memory_allocator.hpp"
#include "systole/protocol.hpp"

namespace systole::server {

// Sends one frame to the client, header and payload apart so that a large payload is never
// copied; `close` closes the connection after it.
using SendFrame =
    std::function<void(protocol::Header header, std::vector<std::uint8_t> payload, bool close)>;

using QueuedLaunch = regs::Launch;

struct PendingWait {
  std::uint32_t request_id = 0;
  std::chrono::steady_clock::time_point deadline;
};

using regs::kNumCounters;

class Session final : private regs::HostRegisterOwner {
 public:
  Session(SendFrame send, std::uint32_t command_queue_depth)
      : send_(std::move(send)), command_queue_depth_(command_queue_depth) {}

  // ---- Connection state ----
  SendFrame& send() { return send_; }
  bool greeted = false;                 // HELLO accepted
  std::uint32_t last_request_id = 0;    // request ids must increase
  std::optional<PendingWait> wait;      // a WAIT not yet answered

  // ---- Memory ----
  RangeMap allocations;   // [start, end) this client owns
  RangeMap dirty;         // bytes it (or its launches) wrote: zeroed when freed
  std::uint64_t allocated_bytes = 0;
  // Allocations the client freed while its own launch ran: gone from `allocations` (the client
  // can no longer reach them) but kept from other clients until the launch ends.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> frees_after_launch;

  // ---- Registers ----
  // The value of a register that is the session's own, or nullopt for identity registers
  // (the device's). Throws std::out_of_range for an offset that names no register.
  std::optional<std::uint32_t> ReadRegister(std::uint32_t offset);
  // Applies a write to the session's registers. A DOORBELL queues {CMD_PC, CMD_COUNT}.
  void WriteRegister(std::uint32_t offset, std::uint32_t value);

  // ---- Launches ----
  // A launch is queued and may start (it waits for its turn on the device).
  bool Runnable() const { return !launches_.empty() && registers_.error() == regs::ErrorCode::kNone; }
  // One of the session's launches is on the device now.
  bool running() const { return running_; }
  // The client asked (CTRL.ABORT, CTRL.SOFT_RESET) to stop the launch that runs.
  bool stop_requested() const { return stop_ != Stop::kNone; }
  // A WAIT is answered once the interrupt line is up or nothing is left to run.
  bool WaitSatisfied() const { return registers_.InterruptLine() || (!running_ && !Runnable()); }
  // Takes the next launch off the queue: it runs until FinishLaunch or RefuseLaunch.
  QueuedLaunch PopLaunch();
  // Folds a finished launch into the session: interrupt causes, error, counter increments.
  void FinishLaunch(std::uint32_t irq_status, std::uint32_t irq_code, regs::ErrorCode error,
                    std::uint64_t fault_pc, const std::array<std::uint64_t, kNumCounters>& counts);
  // A launch the server refused to run (it would leave the client's memory): `error` at
  // `fault_pc`, as the device would report a fault there.
  void RefuseLaunch(regs::ErrorCode error, std::uint64_t fault_pc);
  void CountHostBytes(std::uint64_t bytes);

 private:
  // regs::HostRegisterOwner: the session's launch queue. Its front is the launch that runs (or
  // runs next): the device host pops it when it starts it.
  bool Busy() const override { return running_ || Runnable(); }
  std::uint32_t WaitingLaunches() const override;
  void SoftReset() override;
  void Abort() override;
  void Doorbell(regs::Launch launch) override;

  SendFrame send_;
  std::uint32_t command_queue_depth_;
  std::deque<QueuedLaunch> launches_;
  bool running_ = false;
  // kAbort: the device's ABORTED error is the launch's outcome; kReset: its outcome is dropped
  // (the registers were reset), only its counts are kept.
  enum class Stop { kNone, kAbort, kReset } stop_ = Stop::kNone;
  regs::HostRegisters registers_;  // the rules are shared with the golden model
};

// Range bookkeeping for dirty memory.
void AddRange(RangeMap& ranges, std::uint64_t start, std::uint64_t end);
// Removes and returns the parts of `ranges` inside [start, end).
std::vector<std::pair<std::uint64_t, std::uint64_t>> TakeRanges(RangeMap& ranges,
                                                                std::uint64_t start,
                                                                std::uint64_t end);

}  // namespace systole::server
