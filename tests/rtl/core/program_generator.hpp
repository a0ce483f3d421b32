// Random legal Systole programs whose results do not depend on timing.
//
// Every instruction gets random fields inside the configuration's limits. Units run
// concurrently on the hardware, so the generator orders every pair of instructions of
// different units whose footprints conflict (one writes a UB row, accumulator row or
// device-memory byte the other reads or writes) with a dependency token: the earlier unit's
// latest instruction signals, the later instruction waits. A program built this way gives the
// same memory contents on any correct implementation, however its units are scheduled — which
// is what lets the whole-core test compare the RTL with the sequential golden model.
//
// Layout in device memory: the program at kTextAddress, random input data in
// [kDataAddress, +kDataBytes) (read by LOAD and LOAD_WEIGHTS; its upper half also written by
// STORE), and the final dump of every used UB and accumulator row at kDumpAddress.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/isa/isa.hpp"

namespace systole::rtl::test {

inline constexpr std::uint64_t kTextAddress = 0x1000;
inline constexpr std::uint64_t kDataAddress = 0x20000;
inline constexpr std::uint64_t kDataBytes = 0x10000;
inline constexpr std::uint64_t kDumpAddress = 0x40000;

struct GeneratedProgram {
  std::vector<isa::Instruction> instructions;  // ends with the dump and HALT
  std::uint64_t ub_rows_used = 0;              // rows [0, ub_rows_used) are dumped
  std::uint64_t acc_rows_used = 0;
};

// `length` random instructions (before the dump), drawn from `rng`.
GeneratedProgram GenerateProgram(const Config& config, std::mt19937_64& rng, unsigned length);

}  // namespace systole::rtl::test
