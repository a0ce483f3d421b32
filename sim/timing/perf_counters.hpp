// The PERF_* counters of the register map, as an array the model updates directly.
#pragma once

#include <array>
#include <cstdint>

namespace systole::model {

// In register order (PERF_CYCLES_LO is counter 0, each pair 8 bytes further); registers.cpp
// checks this order against regs::Counters() when the model is built.
enum class Perf : std::uint8_t {
  kCycles,
  kInsns,
  kMxuBusy,
  kMacs,
  kStallToken,
  kStallWfifo,
  kStallMemory,
  kStallDispatch,
  kBytesDramToUb,
  kBytesDramToAcc,
  kBytesWeights,
  kBytesUbToDram,
  kBytesAccToDram,
  kBytesHost,
  kCount_,
};
inline constexpr unsigned kNumPerfCounters = static_cast<unsigned>(Perf::kCount_);

using PerfCounters = std::array<std::uint64_t, kNumPerfCounters>;

inline std::uint64_t& At(PerfCounters& counters, Perf counter) {
  return counters[static_cast<unsigned>(counter)];
}

}  // namespace systole::model
