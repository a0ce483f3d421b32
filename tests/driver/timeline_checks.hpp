// Checks that hold for any recorded timeline against the device's own counters and the program:
// every instruction of the program shows up once on its unit, in program order; the stall
// spans add up to the stall counters; the DMA spans' bytes add up to the byte counters.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "sim/trace/timeline.hpp"
#include "systole/device.hpp"

namespace systole::driver_test {

// Instructions of `program` per unit (sequencer instructions excluded), in program order.
inline std::vector<std::vector<std::size_t>> UnitInstructions(const image::Program& program) {
  std::vector<std::vector<std::size_t>> units(isa::kNumUnits);
  for (std::size_t i = 0; i < program.words.size(); ++i) {
    const isa::Instruction insn = isa::DecodeOrThrow(program.words[i]);
    const isa::Unit unit = isa::FindOpcode(static_cast<std::uint8_t>(insn.opcode))->unit;
    if (unit != isa::Unit::kSequencer) units[static_cast<unsigned>(unit)].push_back(i);
  }
  return units;
}

// The launch `launch` of `timeline` ran `program` and left `counters`. `stall_causes`: the
// causes this device records, with the counter each must add up to.
inline void ExpectTimelineMatches(const trace::Timeline& timeline, std::size_t launch,
                                  const image::Program& program, const Counters& counters,
                                  const std::map<trace::StallCause, std::string>& stall_causes) {
  EXPECT_EQ(timeline.unmatched(), 0u);
  std::vector<std::vector<std::size_t>> seen(isa::kNumUnits);
  std::uint64_t bytes = 0;
  for (const trace::Span& span : timeline.spans()) {
    if (span.launch != launch) continue;
    ASSERT_TRUE(span.index.has_value());
    EXPECT_LT(span.begin, span.end);
    EXPECT_GE(span.begin, timeline.launches()[launch].begin);
    EXPECT_LE(span.end, timeline.launches()[launch].end);
    seen[span.unit].push_back(*span.index);
    bytes += span.bytes;
  }
  EXPECT_EQ(seen, UnitInstructions(program));
  EXPECT_EQ(bytes, counters["BYTES_DRAM_TO_UB"] + counters["BYTES_DRAM_TO_ACC"] +
                       counters["BYTES_WEIGHTS"] + counters["BYTES_UB_TO_DRAM"] +
                       counters["BYTES_ACC_TO_DRAM"]);
  std::map<trace::StallCause, std::uint64_t> stalled;
  for (const trace::Stall& stall : timeline.stalls()) {
    if (stall.launch == launch) stalled[stall.cause] += stall.end - stall.begin;
  }
  for (const auto& [cause, counter] : stall_causes) {
    EXPECT_EQ(stalled[cause], counters[counter]) << trace::StallCauseName(cause);
  }
}

}  // namespace systole::driver_test
