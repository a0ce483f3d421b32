#include "bench/rtl_bare_array.hpp"

#include <fmt/format.h>

#include <array>
#include <ctime>
#include <random>
#include <vector>

#include "Vvl_bench_array_bf16.h"
#include "bench/cpu_time.hpp"
#include "Vvl_bench_array_int8.h"
#include "Vvl_bench_array_tiny.h"
#include "sim/rtl/harness.hpp"
#include "sim/rtl/signals.hpp"
#include "sim/rtl/verilator_context.hpp"

namespace systole::rtl::bench {
namespace {

template <class Model>
BareArraySpeed Measure(const char* dtype, std::uint64_t cycles, const std::function<void()>& beside) {
  Harness<Model> sim(std::string("bare array ") + dtype);
  // A pool of random rows (the same bytes serve as input rows and weight rows), drawn before
  // timing so that the random generator is not what is measured.
  constexpr std::size_t kPool = 64;
  const std::size_t row_bytes = sizeof(sim->in_row);
  std::mt19937_64 rng(1);
  std::vector<std::vector<std::uint8_t>> pool(kPool, std::vector<std::uint8_t>(row_bytes));
  for (auto& row : pool) {
    for (auto& byte : row) byte = static_cast<std::uint8_t>(rng());
  }
  const std::size_t weight_bytes = sizeof(sim->wload_row);
  const double start = CpuSeconds();
  for (std::uint64_t i = 0; i < cycles; ++i) {
    SetSignalBytes(sim->in_row, pool[i % kPool]);
    sim->in_bank = (i >> 5) & 1u;
    sim->wload_en = i & 1u;
    sim->wload_bank = ~(i >> 5) & 1u;
    SetSignalBytes(sim->wload_row, std::span(pool[(i + 7) % kPool]).first(weight_bytes));
    sim.Tick();
    if (beside) beside();
  }
  BareArraySpeed speed;
  speed.seconds = CpuSeconds() - start;
  // The array's shape, from its port widths: ROWS*EW input bits, COLS*32 output bits.
  const std::size_t element_bytes = std::string(dtype) == "bf16" ? 2 : 1;
  const std::size_t rows = row_bytes / element_bytes, cols = sizeof(sim->out_row) / 4;
  speed.shape = fmt::format("{}x{} {}", rows, cols, dtype);
  speed.cycles = cycles;
  speed.pe_updates_per_second = double(cycles) * double(rows * cols) / speed.seconds;
  return speed;
}

}  // namespace

BareArraySpeed MeasureBareArray(const Config& config, std::uint64_t cycles,
                                const std::function<void()>& beside) {
  const bool tiny_shape = config.dtype == DType::kInt8 && config.rows == 4 && config.cols == 4;
  const BareArraySpeed speed = config.dtype == DType::kBf16 ? Measure<Vvl_bench_array_bf16>("bf16", cycles, beside)
                               : tiny_shape                 ? Measure<Vvl_bench_array_tiny>("int8", cycles, beside)
                                                            : Measure<Vvl_bench_array_int8>("int8", cycles, beside);
  // The array's context is gone: models destroyed later must not reach it (verilator_context.hpp).
  ForgetThreadContext();
  return speed;
}

}  // namespace systole::rtl::bench
