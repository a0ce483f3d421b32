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
  // while fewer than that many are unanswered (a DMA engine's credits).
  MemoryTimingResult Run(std::span<const MemoryAccess> accesses,
                         std::uint64_t in_flight_limit = 0) const;

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

}  // namespace systole::model
