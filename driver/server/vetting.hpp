// Vetting a launch before it runs, a slice at a time, so that a program as long as a client's
// whole quota (millions of instructions: seconds of reading and decoding) delays no one's
// requests by more than a slice.
//
// The ISA has no indirect addressing and no branches, so the bytes a launch can touch are known
// before it runs (launch_footprint.hpp): it runs only as far as everything it touches is the
// session's, and no STORE writes over the instructions it runs (which could turn a vetted word
// into another). Where it may not go on, the device runs the instructions before that one (a
// device completes every instruction before a fault) and the outcome is the fault the device
// would report there: its own, if it faults earlier; else the instruction's operand fault, if
// any (docs/ISA.md checks operands before ranges); else DRAM_RANGE.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "arch/regs/host_registers.hpp"
#include "systole/launch_footprint.hpp"
#include "systole/link.hpp"
#include "systole/memory_allocator.hpp"

namespace systole::server {

class Vetting {
 public:
  explicit Vetting(const regs::Launch& launch) : launch_(launch) {}

  // Reads and checks up to `words` more instructions against `allocations`; true once done.
  bool Step(Link& device, const RangeMap& allocations, const Config& config, std::uint64_t words);

  // Once done: the instructions the device may run, the fault reported at the one after them
  // (error, pc) if the launch may not run to its end, and what the runnable ones may touch.
  std::uint32_t runnable() const { return runnable_; }
  const std::optional<std::pair<regs::ErrorCode, std::uint64_t>>& refusal() const { return refusal_; }
  std::vector<TouchedRange>& ranges() { return ranges_; }

 private:
  void Refuse(regs::ErrorCode error, std::uint64_t index);
  // Done at `text_words` instructions fetched: the STORE check over them, then the verdict.
  void Finish(std::uint64_t text_words);

  regs::Launch launch_;
  std::uint64_t next_ = 0;  // the next instruction to fetch
  bool done_ = false;
  std::uint32_t runnable_ = 0;
  std::optional<std::pair<regs::ErrorCode, std::uint64_t>> refusal_;
  std::vector<TouchedRange> ranges_;
  std::vector<std::optional<regs::ErrorCode>> operand_faults_;  // one per range
  std::vector<std::uint8_t> bytes_;
};

}  // namespace systole::server
