// Golden-model GEMM throughput, next to a naive loop with the same numerics.
//
// C (M x N) = A (M x K) x B (K x N) with M = 1024, K = N = 256 on the `small-int8` and `small`
// (bf16) configurations, tiled the way a compiler would: A's K blocks side by side in the
// unified buffer, one weight tile per (K block, N block), each N block accumulated in half of
// the accumulators and stored while the other half fills. The naive reference computes the same
// bits with scalar loops (for bf16 it must keep the MXU's accumulation order, so it sums each
// K block of R products separately), so MACs/s of the two can be compared directly.
//
//   build-model/bench/model_gemm_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/isa/isa.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/model/numerics.hpp"

namespace systole::model {
namespace {

using isa::Field;
using isa::Opcode;

constexpr std::uint32_t kM = 1024, kK = 256, kN = 256;
constexpr std::uint64_t kProgram = 0x100000, kA = 0x1000000, kB = 0x2000000, kC = 0x3000000;
constexpr std::uint8_t kLoadBit = isa::UnitBit(isa::Unit::kLoad),
                       kMxuBit = isa::UnitBit(isa::Unit::kMxu),
                       kStoreBit = isa::UnitBit(isa::Unit::kStore);

std::vector<isa::Instruction> GemmProgram(const Config& config) {
  const std::uint32_t r = config.rows, c = config.cols, e = ElementBytes(config.dtype);
  const std::uint32_t k_blocks = kK / r, n_blocks = kN / c;
  std::vector<isa::Instruction> program;
  for (std::uint32_t kb = 0; kb < k_blocks; ++kb) {
    program.push_back(isa::MakeInstruction(Opcode::kLoad, {{Field::kDram, kA + kb * r * e}, {Field::kStride, kK * e},
                                           {Field::kRow, kb * kM}, {Field::kRows, kM},
                                           {Field::kElems, r}},
                           0, kb + 1 == k_blocks ? kMxuBit : 0));
  }
  for (std::uint32_t nb = 0; nb < n_blocks; ++nb) {
    const std::uint64_t acc = (nb % 2) * kM;
    for (std::uint32_t kb = 0; kb < k_blocks; ++kb) {
      program.push_back(isa::MakeInstruction(Opcode::kLoadWeights,
                             {{Field::kDram, kB + (std::uint64_t{kb} * r * kN + nb * c) * e},
                              {Field::kStride, kN * e}, {Field::kRows, r}, {Field::kCols, c}}));
      std::uint8_t wait = 0;
      if (kb == 0 && nb == 0) wait = kLoadBit;            // A is in the UB
      if (kb == 0 && nb >= 2) wait = kStoreBit;           // this accumulator half was stored
      program.push_back(isa::MakeInstruction(Opcode::kMatmul,
                             {{Field::kUb, kb * kM}, {Field::kAcc, acc}, {Field::kRows, kM},
                              {Field::kK, r}, {Field::kPop, 1}, {Field::kAccumulate, kb > 0}},
                             wait, kb + 1 == k_blocks ? kStoreBit : 0));
    }
    program.push_back(isa::MakeInstruction(Opcode::kStore, {{Field::kMem, 1}, {Field::kDram, kC + nb * c * 4},
                                            {Field::kStride, kN * 4}, {Field::kRow, acc},
                                            {Field::kRows, kM}, {Field::kElems, c}},
                           kMxuBit, nb + 2 < n_blocks ? kMxuBit : 0));
  }
  program.push_back(isa::MakeInstruction(Opcode::kHalt, {}));
  return program;
}

struct GemmData {
  std::vector<std::uint8_t> a, b;  // raw element bytes, row-major
};

GemmData RandomData(const Config& config) {
  std::mt19937_64 rng(12345);
  const std::uint32_t e = ElementBytes(config.dtype);
  GemmData data{std::vector<std::uint8_t>(std::size_t{kM} * kK * e),
                std::vector<std::uint8_t>(std::size_t{kK} * kN * e)};
  for (auto* bytes : {&data.a, &data.b}) {
    for (std::size_t i = 0; i < bytes->size(); i += e) {
      if (e == 1) {
        (*bytes)[i] = static_cast<std::uint8_t>(rng());
      } else {
        // Moderate normal bf16 values: sign, exponent 2^-4..2^3, random fraction.
        const auto bits = static_cast<std::uint16_t>((rng() & 0x8000) | (123 + rng() % 8) << 7 |
                                                     (rng() & 0x7F));
        std::memcpy(bytes->data() + i, &bits, 2);
      }
    }
  }
  return data;
}

void ModelGemm(benchmark::State& state, const char* config_name) {
  const Config config = LoadConfig(config_name);
  GoldenModel model(config);
  const GemmData data = RandomData(config);
  model.WriteMemory(kA, data.a);
  model.WriteMemory(kB, data.b);
  const std::vector<isa::Instruction> program = GemmProgram(config);
  std::vector<std::uint8_t> bytes;
  for (const isa::Instruction& insn : program) {
    const isa::Word word = isa::EncodeOrThrow(insn);
    bytes.insert(bytes.end(), word.begin(), word.end());
  }
  model.WriteMemory(kProgram, bytes);
  const auto count = static_cast<std::uint32_t>(program.size());
  for (auto _ : state) {
    const LaunchResult result = model.Execute(kProgram, count);
    if (!result.Ok()) {
      state.SkipWithError(result.message.c_str());
      break;
    }
  }
  const double macs = double{kM} * kK * kN;
  state.counters["MACs/s"] = benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate);
  // The timing model's estimate of the hardware, per launch.
  const double launches = static_cast<double>(state.iterations());
  const double cycles = static_cast<double>(model.Counter("CYCLES")) / launches;
  state.counters["est_cycles"] = cycles;
  state.counters["est_mxu_util"] = macs / (cycles * config.rows * config.cols);
}

// The same numerics with no tiling, no vectorisation effort and no machine: the baseline.
void NaiveGemm(benchmark::State& state, const char* config_name) {
  const Config config = LoadConfig(config_name);
  const GemmData data = RandomData(config);
  const std::uint32_t r = config.rows;
  std::vector<std::uint32_t> c(std::size_t{kM} * kN);
  for (auto _ : state) {
    if (config.dtype == DType::kInt8) {
      const auto* a = reinterpret_cast<const std::int8_t*>(data.a.data());
      const auto* b = reinterpret_cast<const std::int8_t*>(data.b.data());
      for (std::uint32_t i = 0; i < kM; ++i) {
        for (std::uint32_t j = 0; j < kN; ++j) {
          std::uint32_t sum = 0;
          for (std::uint32_t k = 0; k < kK; ++k) {
            sum += static_cast<std::uint32_t>(a[i * kK + k] * b[k * kN + j]);
          }
          c[i * kN + j] = sum;
        }
      }
    } else {
      auto element = [](const std::vector<std::uint8_t>& bytes, std::size_t index) {
        return static_cast<std::uint16_t>(bytes[2 * index] | bytes[2 * index + 1] << 8);
      };
      for (std::uint32_t i = 0; i < kM; ++i) {
        for (std::uint32_t j = 0; j < kN; ++j) {
          std::uint32_t acc = 0;
          for (std::uint32_t kb = 0; kb < kK; kb += r) {
            std::uint32_t psum = 0;
            for (std::uint32_t t = 0; t < r; ++t) {
              const std::uint32_t x = Bf16ToF32(element(data.a, std::size_t{i} * kK + kb + t));
              const std::uint32_t w = Bf16ToF32(element(data.b, std::size_t{kb + t} * kN + j));
              psum = AddF32(psum, MulF32(x, w));
            }
            acc = kb == 0 ? psum : AddF32(acc, psum);
          }
          c[i * kN + j] = acc;
        }
      }
    }
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["MACs/s"] = benchmark::Counter(double{kM} * kK * kN,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_CAPTURE(ModelGemm, int8_small_int8, "small-int8")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(NaiveGemm, int8_small_int8, "small-int8")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(ModelGemm, bf16_small, "small")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(NaiveGemm, bf16_small, "small")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace systole::model

BENCHMARK_MAIN();
