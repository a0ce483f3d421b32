// The systolic array alone (rtl/mxu/systole_systolic_array, no control, buffers or memory),
// Verilated with the same options as the whole core and kept fully busy: the ceiling that the
// whole core's simulated PE-updates per second are measured against (issue 19's aim: the core
// at >= 0.5 of the bare array of its element type).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "arch/config/config.hpp"

namespace systole::rtl::bench {

struct BareArraySpeed {
  std::string shape;           // "16x16 int8"
  std::uint64_t cycles = 0;    // clocked
  double seconds = 0;          // CPU time
  double pe_updates_per_second = 0;
};

// Clocks the bare array of `config`'s shape and element type for `cycles` cycles with a new
// input row every cycle and a weight tile row shifting in every other cycle (so both banks and
// both skews are live). Built: 16x16 int8, 16x16 bf16 and 4x4 int8; another shape gets the
// 16x16 array of its element type, and `shape` says which was measured.
//
// `beside`, when given, runs after every cycle of the array (the bench passes one idle cycle of
// the whole core): the array's code and data then share the caches with the core's, as its
// copy inside the core does. `seconds` is the time of both together.
BareArraySpeed MeasureBareArray(const Config& config, std::uint64_t cycles,
                                const std::function<void()>& beside = {});

}  // namespace systole::rtl::bench
