// The systolic array cycle by cycle, for students: what every processing element (PE) holds and
// passes on in each cycle of an `rtl` run (read from its waveform by sim/rtl/array_waveform.hpp),
// and a self-contained HTML page that steps through those cycles (`systole array-view`,
// docs/TRACE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace systole::trace {

// One PE in one cycle, as raw bits (int8 / int32, or bf16 / fp32 in bf16 configurations).
struct PeState {
  std::uint32_t x = 0;       // the input element it multiplies this cycle (arrived from the left)
  bool bank = false;         // which weight bank that element multiplies with (0: w0, 1: w1)
  std::uint32_t w0 = 0;      // the two weight registers (double buffering)
  std::uint32_t w1 = 0;
  std::uint32_t psum = 0;    // the partial sum it passes down (registered last cycle)
  bool loading = false;      // a weight is shifting into bank `load_bank` this cycle
  bool load_bank = false;
};

struct ArrayCycle {
  std::uint64_t cycle = 0;    // clock cycles since the waveform's first
  std::vector<PeState> pes;   // rows × cols, row-major: PE (t, j) at t·cols + j
};

struct ArrayFrames {
  std::size_t rows = 0;
  std::size_t cols = 0;
  bool bf16 = false;          // bf16 inputs and weights, fp32 partial sums; else int8 and int32
  std::string source;         // what the frames were read from, for the page's title
  std::vector<ArrayCycle> cycles;

  const PeState& At(std::size_t cycle_index, std::size_t row, std::size_t col) const {
    return cycles[cycle_index].pes[row * cols + col];
  }
};

// A page that opens offline in any browser: the frames as JSON, an SVG of the array, controls
// to step, play and jump, and a legend saying what moves where.
std::string ArrayViewHtml(const ArrayFrames& frames);

}  // namespace systole::trace
