// MemoryTimingModel: a cycle-approximate model of the HBM controller (rtl/memory/hbm) and its
// DRAM, for the performance model and the toolchain's cycle estimates, where simulating the RTL
// would be far too slow.
//
// It replays a stream of 32-byte accesses through the controller's structure — the channel
// interleave, per-channel request queues of the RTL's depth, the reorder buffer, and the same
// per-channel scheduling policy (refresh first, then first-ready column commands, then
// first-come ACT/PRE with the open-page rule and the starvation bound) against the [dram]
// timing rules — and reports when each access is answered. It models the DRAM's timing but
// stores no data (the golden model's DeviceMemory does that). bench/memory_bench.cpp measures
// how closely it predicts the RTL; docs/MEMORY.md records the figures.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "arch/config/config.hpp"

namespace systole::model {

struct MemoryAccess {
  bool write = false;
  std::uint64_t address = 0;  // a multiple of 32, inside the memory
};

// Where a 32-byte access lands (docs/MEMORY.md, "Addresses").
struct DramLocation {
  unsigned channel = 0, group = 0, bank = 0;  // bank: within its group
  std::uint64_t row = 0, column = 0;
  std::uint64_t word = 0;                      // the channel-local word address / 32
};

struct MemoryTimingOptions {
  unsigned queue_depth = 16;  // per channel, as systole_hbm_ctrl's QUEUE_DEPTH
  unsigned rob_depth = 64;    // requests in flight, as its ROB_DEPTH
  // Requests the core's arbiter lets be in flight (OUTSTANDING of systole_mem_arbiter as
  // rtl/systole_core.sv instantiates it); RunStreams only, where the core's requesters meet.
  unsigned arbiter_outstanding = 32;
};

// One requester's burst of accesses for SharedMemory and RunStreams: a DMA instruction's words,
// or one fetched instruction word.
struct MemoryStream {
  unsigned requester = 0;        // the arbiter port: 0 fetch, 1 LOAD, 2 WEIGHT, 3 STORE
  std::uint64_t release = 0;     // the first cycle its first access may be offered
  std::vector<MemoryAccess> accesses;
  std::uint64_t credits = 0;     // the requester's limit on accesses in flight (0: none)
  // Cycles a credit comes back later than the cycle after its response (0: a response in cycle
  // t lets the requester offer again in t + 1). The core's row reader counts a word in flight
  // until it leaves its response FIFO (rtl/dma/systole_row_reader.sv): the golden model's
  // TimingParameters::credit_return.
  std::uint64_t credit_delay = 0;
  // SharedMemory: a response does not return its credit; the requester's consumer does, with
  // Release (a LOAD into the accumulators holds its words until it may write their row). Held
  // streams are recorded.
  bool held = false;
  // SharedMemory keeps the cycle each access was taken and answered (Accepts, Responses).
  bool record = false;
};

// When each stream's accesses were taken and answered (cycles from RunStreams' time 0).
struct MemoryStreamTiming {
  std::uint64_t last_accept = 0;
  std::uint64_t first_response = 0;
  std::uint64_t last_response = 0;
  // Cycles its requester offered one of its accesses and the arbiter did not take it (another
  // requester's turn, a full channel queue, OUTSTANDING reached): the RTL's memory stall.
  std::uint64_t refused = 0;
};

struct MemoryTimingResult {
  std::uint64_t cycles = 0;                 // from the first request to the last response
  std::vector<std::uint64_t> latencies;     // per access: acceptance to response
};

class MemoryTimingModel {
 public:
  explicit MemoryTimingModel(const Config& config, MemoryTimingOptions options = {});

  // The accesses, offered one per cycle in order by one requester (as the arbiter's output
  // does), each as soon as the controller accepts it and, when `in_flight_limit` is not 0,
  // while fewer than that many hold a credit (a DMA engine's credits, each back `credit_delay`
  // cycles after the cycle following its response: MemoryStream::credit_delay).
  MemoryTimingResult Run(std::span<const MemoryAccess> accesses, std::uint64_t in_flight_limit = 0,
                         std::uint64_t credit_delay = 0) const;

  // Several requesters together (SharedMemory below), each stream run to its end.
  std::vector<MemoryStreamTiming> RunStreams(std::span<const MemoryStream> streams,
                                             std::span<const std::uint64_t> open_rows = {}) const;

  // The 32-byte words a DMA touches, in the order the DMA engines request them: `rows` rows of
  // `row_bytes` bytes, the first at `address`, each `stride` bytes after the previous one (a
  // word that a row only partly covers is still one access).
  static std::vector<MemoryAccess> DmaAccesses(std::uint64_t address, std::uint64_t stride,
                                               std::uint64_t rows, std::uint64_t row_bytes,
                                               bool write);
  // Cycles of that DMA alone on an idle memory system: what the golden model's TimingModel can
  // use in place of its fixed latency + beats formula.
  std::uint64_t DmaCycles(std::uint64_t address, std::uint64_t stride, std::uint64_t rows,
                          std::uint64_t row_bytes, bool write) const {
    return Run(DmaAccesses(address, stride, rows, row_bytes, write)).cycles;
  }

  // The channel, bank and row of the access at `address`.
  DramLocation Locate(std::uint64_t address) const;

  // Theoretical peak of the configuration, bytes per cycle: every channel's data bus busy, but
  // never more than the 32-byte requester port takes per cycle.
  double PeakBytesPerCycle() const;
  double ChannelPeakBytesPerCycle() const;

 private:
  Config config_;
  MemoryTimingOptions options_;
};

// The core's requesters meeting at its round-robin arbiter in front of one controller, cycle by
// cycle, with streams added as the caller learns of them (the golden model's shared schedule:
// timing.hpp). Each requester offers its streams in the order they were added, a stream's
// first access no sooner than its release and after the requester's previous stream has
// offered its last; the arbiter grants one access a cycle, rotating past the requester granted
// last, and a grant the controller cannot take (the channel's queue full) blocks the port that
// cycle; at most OUTSTANDING accesses are in flight; responses come back one a cycle in the
// order of the requests.
class SharedMemory {
 public:
  // `open_rows`: addresses whose DRAM rows are open at time 0 (the host's last writes).
  SharedMemory(const Config& config, MemoryTimingOptions options, std::span<const std::uint64_t> open_rows);
  ~SharedMemory();
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  // Adds a stream; its release must lie after the cycles already simulated. Returns its index.
  // A stream with no access is answered at its release (at once: it is never simulated).
  std::size_t Add(MemoryStream stream);
  // Simulates the next cycle, or, with nothing queued, in flight or offered, jumps to the next
  // release (or refresh), but no further than `limit`. False when nothing is left to do and
  // there is no limit.
  bool Step(std::int64_t limit = -1);
  // Returns `count` credits of a requester whose streams are `held`, from the next cycle on.
  void Release(unsigned requester, std::uint64_t count);
  // A recorded stream: the cycle each access was taken, and answered (-1: not yet).
  const std::vector<std::int64_t>& Accepts(std::size_t stream) const;
  const std::vector<std::int64_t>& Responses(std::size_t stream) const;
  // The last cycle simulated (-1 before the first).
  std::int64_t Now() const;

  const MemoryStreamTiming& Timing(std::size_t stream) const;
  // Streams whose last access was taken, or whose last response came back, in the last Step.
  const std::vector<std::size_t>& NewlyAccepted() const;
  const std::vector<std::size_t>& NewlyAnswered() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace systole::model
