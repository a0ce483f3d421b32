// The on-chip mode of rtl_core_bench: GEMMs whose operands are already in the unified buffer,
// so that the measured program is nothing but LOAD_WEIGHTS + MATMUL folds back to back
// (rtl_core_bench_onchip.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/config/config.hpp"

namespace systole::rtl {
class RtlDevice;
}

namespace systole::rtl::bench {

// A 64-bit performance counter of the core, PERF_<name>_LO/_HI (both modes of the benchmark).
std::uint64_t Counter(RtlDevice& device, const std::string& name);

struct OnChipShape {
  std::string name;
  std::uint64_t m, k, n;
};

// Prints a Markdown table: per GEMM, RTL cycles of the fold program, its MXU utilisation and
// the steady-state utilisation (the same folds run twice, minus once), checked against the
// golden model. Throws std::runtime_error naming the GEMM on any mismatch or misfit.
void OnChipTable(const Config& config, const std::vector<OnChipShape>& shapes);

}  // namespace systole::rtl::bench
