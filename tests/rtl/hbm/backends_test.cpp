// The two memory backends of the rtl device (sim/rtl/memory_backends.hpp) on the same program:
// a code-generator GEMM and each of examples/asm, with operands and result in device memory, on
// the bare core with the
// ideal fixed-latency memory and on the SoC with the HBM controller and DRAM models, and on the
// golden model. Output and functional counters (MACS, MXU_BUSY, bytes moved) must be identical
// on all three; the SoC must take longer than the ideal memory (it pays DRAM latency, row
// misses and refresh). It prints cycles, simulation speed and the golden model's estimate, the
// figures quoted in rtl/README.md and docs/MEMORY.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <cstdint>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "arch/regs/regmap.hpp"
#include "bench/rtl_gemm_workload.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/rtl/rtl_device.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"
#include "toolchain/asm/bundle.hpp"

namespace systole::rtl {
namespace {

using Shape = std::tuple<std::string, std::uint64_t, std::uint64_t, std::uint64_t>;

std::uint64_t Counter(RtlDevice& device, const std::string& name) {
  const std::uint32_t lo = regs::FindRegister("PERF_" + name + "_LO")->offset;
  const std::uint64_t low = device.ReadRegister(lo);
  return low | std::uint64_t{device.ReadRegister(lo + 4)} << 32;
}

bool Built(MemoryBackend memory, const std::string& name) {
  const auto built = BuiltRtlConfigs(memory);
  return std::find(built.begin(), built.end(), name) != built.end();
}

// A program with its data, as `systole run` loads it: segments, then the text, one launch.
struct Workload {
  std::string name;
  Config config;
  std::vector<image::DataSegment> segments;
  std::vector<std::uint8_t> text;
  std::uint64_t text_address = 0;
  std::uint32_t words = 0;
  image::TensorDesc out;
};

template <class Device>
void Launch(Device& device, const Workload& work) {
  for (const image::DataSegment& segment : work.segments) {
    device.WriteMemory(segment.address, segment.bytes);
  }
  device.WriteMemory(work.text_address, work.text);
  for (auto [reg, value] : {std::pair{"CMD_PC_LO", work.text_address},
                            std::pair{"CMD_PC_HI", work.text_address >> 32},
                            std::pair{"CMD_COUNT", std::uint64_t{work.words}},
                            std::pair{"DOORBELL", std::uint64_t{1}}}) {
    device.WriteRegister(regs::FindRegister(reg)->offset, static_cast<std::uint32_t>(value));
  }
}

// The golden model after running `work` with `timing`.
std::unique_ptr<model::GoldenModel> RunGolden(const Workload& work,
                                              const model::TimingParameters& timing) {
  auto golden = std::make_unique<model::GoldenModel>(work.config, timing);
  Launch(*golden, work);
  golden->RunUntilIdle();
  EXPECT_EQ(golden->LastErrorMessage(), "");
  return golden;
}

void CompareBackends(const Workload& work, std::uint64_t seed) {
  const std::string& name = work.config.name;
  if (!Built(MemoryBackend::kIdeal, name) || !Built(MemoryBackend::kHbm, name)) {
    GTEST_SKIP() << name << " is not built with both memory backends";
  }
  const auto golden = RunGolden(work, {});
  std::vector<std::uint8_t> want(work.out.Bytes());
  golden->ReadMemory(work.out.address, want);
  const std::uint64_t estimate = golden->Counter("CYCLES");
  model::TimingParameters fixed;
  fixed.memory = model::TimingParameters::Memory::kFixed;
  const std::uint64_t fixed_estimate = RunGolden(work, fixed)->Counter("CYCLES");

  std::uint64_t cycles[2] = {};
  for (const MemoryBackend memory : {MemoryBackend::kIdeal, MemoryBackend::kHbm}) {
    SCOPED_TRACE(MemoryBackendName(memory));
    RtlDeviceOptions options;
    options.memory = memory;
    options.seed = seed;
    auto device = MakeRtlDevice(work.config, options);
    const auto begin = std::chrono::steady_clock::now();
    const std::uint64_t start = device->Cycle();
    Launch(*device, work);
    ASSERT_TRUE(device->RunUntilIdle(50'000'000));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    const std::uint64_t simulated = device->Cycle() - start;
    cycles[memory == MemoryBackend::kHbm] = Counter(*device, "CYCLES");
    std::vector<std::uint8_t> got(work.out.Bytes());
    device->ReadMemory(work.out.address, got);
    EXPECT_EQ(got, want) << "output differs from the golden model";
    for (const char* counter : {"INSNS", "MACS", "MXU_BUSY", "BYTES_DRAM_TO_UB",
                                "BYTES_DRAM_TO_ACC", "BYTES_WEIGHTS", "BYTES_UB_TO_DRAM",
                                "BYTES_ACC_TO_DRAM"}) {
      EXPECT_EQ(Counter(*device, counter), golden->Counter(counter)) << "PERF_" << counter;
    }
    std::cout << "[ backends ] " << work.name << " on " << name << ", "
              << MemoryBackendName(memory) << ": " << cycles[memory == MemoryBackend::kHbm]
              << " cycles; " << simulated << " simulated (with host transfers) in " << seconds
              << " s = " << static_cast<std::uint64_t>(static_cast<double>(simulated) / seconds)
              << " cycles/s\n";
  }
  // The golden model's estimate with DRAM-timed DMAs (the default) and with the fixed latency
  // it used before (docs/MEMORY.md, "The golden model's estimate").
  const auto versus = [&](std::uint64_t value) {
    return 100.0 * (static_cast<double>(value) / static_cast<double>(cycles[1]) - 1.0);
  };
  std::cout << "[ backends ] " << work.name << " golden model: " << estimate << " cycles ("
            << versus(estimate) << "% vs hbm); with the fixed latency " << fixed_estimate << " ("
            << versus(fixed_estimate) << "%)\n";
  EXPECT_GT(cycles[1], cycles[0]) << "DRAM timing cost nothing";
}

class BackendsTest : public ::testing::TestWithParam<Shape> {};

TEST_P(BackendsTest, SameGemmSameResultsAndTheDramCostsCycles) {
  const auto& [name, m, k, n] = GetParam();
  const Config config = LoadConfig(name);
  const std::uint64_t seed = test::Seed();
  const bench::GemmWorkload gemm = bench::MakeGemm(config, m, k, n, seed);
  Workload work{"gemm " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n),
                config, gemm.program.data, gemm.text, gemm.program.text_address,
                static_cast<std::uint32_t>(gemm.program.words.size()), gemm.program.outputs.at(0)};
  work.segments.insert(work.segments.end(), gemm.inputs.begin(), gemm.inputs.end());
  CompareBackends(work, seed);
}

// examples/asm, each on the configuration it names.
class BackendsExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendsExampleTest, SameResultsAndTheDramCostsCycles) {
  const image::Program program = assembly::LoadProgram(
      std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm" / GetParam());
  ASSERT_TRUE(program.config.has_value());
  ASSERT_FALSE(program.outputs.empty());
  Workload work{GetParam(), LoadConfig(*program.config), program.data, {}, program.text_address,
                static_cast<std::uint32_t>(program.words.size()), program.outputs.back()};
  for (const isa::Word& word : program.words) work.text.insert(work.text.end(), word.begin(), word.end());
  CompareBackends(work, test::Seed());
}

INSTANTIATE_TEST_SUITE_P(Examples, BackendsExampleTest,
                         ::testing::Values("conv_pool_tiny.s", "mlp_bf16.s", "mlp_int8.s"),
                         [](const auto& param_info) {
                           std::string s = param_info.param;
                           return s.substr(0, s.find('.'));
                         });

INSTANTIATE_TEST_SUITE_P(Shapes, BackendsTest,
                         ::testing::Values(Shape{"tiny", 64, 16, 16},
                                           Shape{"small-int8", 128, 128, 128},
                                           Shape{"small", 64, 64, 64}),
                         [](const auto& param_info) {
                           std::string s = std::get<0>(param_info.param);
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

}  // namespace
}  // namespace systole::rtl
