// Reads the systolic array's PE registers out of an `rtl` run's FST waveform (`systole run
// --device rtl --fst RUN.fst`), one sample per clock cycle, for the array view
// (sim/trace/array_view.hpp). It reads the RTL's own signals by their hierarchical names
// (rtl/mxu/: u_array.g_row[t].u_row.g_col[j].u_pe), with the FST reader of Verilator's bundled
// GTKWave library, so what the page shows is what the simulated hardware did.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>

#include "sim/trace/array_view.hpp"

namespace systole::rtl {

class WaveformError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Cycles `first_cycle` … `first_cycle + max_cycles - 1` of the waveform (counted from its first
// clock edge). Throws WaveformError naming the file when it is not an FST waveform or holds no
// systolic array.
trace::ArrayFrames ReadArrayWaveform(const std::filesystem::path& fst, std::uint64_t first_cycle = 0,
                                     std::uint64_t max_cycles = 4096);

}  // namespace systole::rtl
