// The process's CPU time, which the RTL benchmarks divide simulated cycles by (wall time would
// count whatever else the shared machine runs).
#pragma once

#include <ctime>

namespace systole::rtl::bench {

inline double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace systole::rtl::bench
