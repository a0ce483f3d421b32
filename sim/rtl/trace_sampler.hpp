// TraceSampler: turns the core's per-cycle trace ports (trace_accept, trace_done, trace_stall of
// systole_core, one bit per unit) into a trace::Timeline — each unit's instructions as spans
// from the edge that accepted them to the edge of their `done`, and runs of stall cycles.
// `done` pulses come in acceptance order per unit (rtl/README.md, "Unit command interface"),
// so the oldest open instruction is the one that finished.
#pragma once

#include <array>
#include <cstdint>
#include <deque>

#include "arch/isa/isa.hpp"
#include "sim/trace/timeline.hpp"

namespace systole::rtl {

class TraceSampler {
 public:
  explicit TraceSampler(trace::Timeline& timeline) : timeline_(timeline) {}

  // The port values just before the rising edge that ends `cycle`.
  void Sample(std::uint64_t cycle, unsigned accept, unsigned done, unsigned stall) {
    for (unsigned unit = 0; unit < isa::kNumUnits; ++unit) {
      const bool accepted = (accept >> unit & 1u) != 0;
      auto& open = open_[unit];
      if ((done >> unit & 1u) != 0) {
        if (!open.empty()) {
          timeline_.UnitInstruction(unit, open.front(), cycle + 1);
          open.pop_front();
        } else if (accepted) {  // accepted and finished at the same edge
          timeline_.UnitInstruction(unit, cycle, cycle + 1);
          continue;
        }
      }
      if (accepted) open.push_back(cycle);
      const bool stalled = (stall >> unit & 1u) != 0;
      if (stalled && !stalling_[unit]) stall_begin_[unit] = cycle;
      if (!stalled && stalling_[unit]) timeline_.UnitStall(unit, Cause(unit), stall_begin_[unit], cycle);
      stalling_[unit] = stalled;
    }
  }

 private:
  static trace::StallCause Cause(unsigned unit) {
    return unit == static_cast<unsigned>(isa::Unit::kMxu) ? trace::StallCause::kWeightFifo
                                                           : trace::StallCause::kMemory;
  }

  trace::Timeline& timeline_;
  std::array<std::deque<std::uint64_t>, isa::kNumUnits> open_{};
  std::array<bool, isa::kNumUnits> stalling_{};
  std::array<std::uint64_t, isa::kNumUnits> stall_begin_{};
};

}  // namespace systole::rtl
