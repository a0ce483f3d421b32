// memory_bench — the HBM controller's achieved bandwidth and latency distribution for
// sequential, strided and random 32-byte reads and writes, beside the theoretical peak of the
// configuration, and how closely the cycle-approximate MemoryTimingModel predicts the RTL.
//
// Each pattern is replayed on the Verilated controller (tests/rtl/hbm/hbm_tb.sv: the core's
// memory arbiter + systole_hbm_ctrl + the DRAM device model, which checks every command) and on
// the model, for one, two (`tiny`) and four channels. A benchmark, not a test: it prints a table
// and exits 0 unless a DRAM timing rule was broken or the scoreboard failed.
//
//   build/bench/memory_bench [accesses-per-pattern]
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "Vvl_hbm_c1_i8.h"
#include "Vvl_hbm_c2_tiny.h"
#include "Vvl_hbm_c4_i5.h"
#include "arch/config/config.hpp"
#include "sim/timing/memory_timing.hpp"
#include "tests/rtl/hbm/hbm_bench.hpp"

namespace {

using systole::Config;
using systole::model::MemoryAccess;
using systole::rtl::hbm::Variant;

struct Pattern {
  std::string name;
  std::vector<MemoryAccess> accesses;
};

std::vector<Pattern> Patterns(std::uint64_t memory_bytes, std::size_t n) {
  std::mt19937_64 rng(7);
  std::vector<Pattern> patterns = {{"seq read", {}}, {"seq write", {}}, {"stride 2080B", {}},
                                   {"random read", {}}, {"random mix", {}}};
  const std::uint64_t words = memory_bytes / 32;
  for (std::size_t i = 0; i < n; ++i) {
    patterns[0].accesses.push_back({false, 32 * i % memory_bytes});
    patterns[1].accesses.push_back({true, 32 * i % memory_bytes});
    patterns[2].accesses.push_back({false, 2080 * i % memory_bytes});
    patterns[3].accesses.push_back({false, 32 * (rng() % words)});
    patterns[4].accesses.push_back({rng() % 2 == 0, 32 * (rng() % words)});
  }
  return patterns;
}

std::uint64_t Percentile(std::vector<std::uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

template <class Model>
bool Measure(const Variant& variant, std::size_t n) {
  Config config = systole::LoadConfig("tiny");
  config.memory_channels = variant.channels;
  config.interleave_bytes = 1u << variant.interleave_log2;
  config.memory_bytes = variant.memory_bytes;
  const systole::model::MemoryTimingModel model(config);
  fmt::print("\n{} channel(s), {}-byte interleave: peak {:.1f} B/cycle ({:.1f} per channel; the "
             "requester port takes at most 32)\n",
             variant.channels, config.interleave_bytes, model.PeakBytesPerCycle(),
             model.ChannelPeakBytesPerCycle());
  fmt::print("{:<13} {:>8} {:>8} {:>7} {:>5} {:>5} {:>5} {:>5} {:>9} {:>7}\n", "pattern",
             "cycles", "B/cycle", "% peak", "p50", "p90", "p99", "max", "model", "error");
  bool ok = true;
  for (const Pattern& pattern : Patterns(variant.memory_bytes, n)) {
    systole::rtl::hbm::HbmBench<Model> bench(variant, config.dram);
    for (const MemoryAccess& a : pattern.accesses) {
      bench.Send(0, {a.write, a.address, {}, 0xffffffffu});
    }
    const std::uint64_t start = bench.sim().Cycle();
    bench.Drain(100ull * n + 10000);
    // The last response arrives in the last Step(): the same cycle count as the model's.
    const std::uint64_t cycles = bench.sim().Cycle() - 1 - start;
    bench.Finish();
    if (bench.bus().ViolationCount() != 0) {
      fmt::print("DRAM timing violations:\n{}", bench.bus().Report());
      ok = false;
    }
    const auto predicted = model.Run(pattern.accesses).cycles;
    const double bandwidth = 32.0 * static_cast<double>(n) / static_cast<double>(cycles);
    const auto& lat = bench.Latencies(0);
    fmt::print("{:<13} {:>8} {:>8.2f} {:>6.1f}% {:>5} {:>5} {:>5} {:>5} {:>9} {:>6.1f}%\n",
               pattern.name, cycles, bandwidth, 100.0 * bandwidth / model.PeakBytesPerCycle(),
               Percentile(lat, 0.5), Percentile(lat, 0.9), Percentile(lat, 0.99),
               *std::max_element(lat.begin(), lat.end()), predicted,
               100.0 * (static_cast<double>(predicted) - static_cast<double>(cycles)) /
                   static_cast<double>(cycles));
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 8192;
  fmt::print("memory_bench: {} accesses of 32 bytes per pattern from one requester; latency in "
             "cycles from acceptance to response; DRAM timing from configs/tiny.toml [dram]\n", n);
  bool ok = Measure<Vvl_hbm_c1_i8>({1, 8, 1u << 20}, n);
  ok = Measure<Vvl_hbm_c2_tiny>({2, 8, 1u << 20}, n) && ok;
  ok = Measure<Vvl_hbm_c4_i5>({4, 5, 1u << 20}, n) && ok;
  return ok ? 0 : 1;
}
