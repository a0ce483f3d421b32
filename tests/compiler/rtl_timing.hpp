// The golden model's cycle estimate against the RTL (issue 19): a program on `ref` (sim/timing:
// the estimate) and on `rtl` (the Verilated core with the HBM controller and DRAM models, whose
// CYCLES counter is the reference). Each case fails when |ref - rtl| / rtl > 5 %; docs/MODEL.md
// ("How close") gives the table, printed at the end, and what is left unit by unit. rtl_timing_test.cpp instantiates it for the programs that run in seconds,
// long/rtl_timing_long_test.cpp for the corpus programs that take minutes on `rtl`.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "systole/device.hpp"
#include "tests/compiler/compiler_test_util.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::compiler::testing {

constexpr double kAim = 0.05;

// kLayer: one ResNet-50 layer by itself, tests/compiler/data/ (ResNet-50 whole runs on `rtl` in
// make test-long only). kTraining: a JAX training step of examples/training/ (one step).
enum class Source { kAsmExample, kHloExample, kCorpus, kLayer, kTraining };

struct TimingCase {
  std::string file;
  std::string config;
  Source source;
};
inline void PrintTo(const TimingCase& c, std::ostream* os) { *os << c.file << " on " << c.config; }

// CYCLES of one launch of an assembly example, as `systole run PROGRAM.s` runs it.
inline std::uint64_t AsmCycles(const std::filesystem::path& path, const std::string& uri, const Config& config) {
  Device device = Device::Open(uri, config);
  Program program = device.Load(assembly::AssembleFile(path));
  device.ClearCounters();
  EXPECT_TRUE(program.Launch().Wait(std::chrono::seconds(120))) << path << " on " << uri;
  return device.ReadCounters()["CYCLES"];
}

// CYCLES summed over the device steps of a compiled HLO program.
inline std::uint64_t HloCycles(const CompiledModel& model, const std::string& uri, const Config& config) {
  Device device = Device::Open(uri, config);
  return Execute(model, device, hlo::RandomInputs(*model.module, 9)).stats.cycles;
}

inline std::vector<std::string>& Table() {
  static std::vector<std::string> table;
  return table;
}

class RtlTiming : public ::testing::TestWithParam<TimingCase> {
 public:
  static void TearDownTestSuite() {
    std::printf("\n| program | config | rtl | ref | ref vs rtl |\n|---|---|---:|---:|---:|\n");
    for (const std::string& row : Table()) std::printf("%s\n", row.c_str());
  }
};

TEST_P(RtlTiming, EstimateWithinItsBoundOfTheRtl) {
  const TimingCase& c = GetParam();
  const Config config = LoadConfig(c.config);
  try {
    Device::Open("rtl", config);
  } catch (const std::exception& error) {
    GTEST_SKIP() << "no Verilated " << c.config << " core in this build: " << error.what();
  }
  std::uint64_t ref = 0, rtl = 0;
  if (c.source == Source::kAsmExample) {
    const auto path = std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm" / c.file;
    ref = AsmCycles(path, "ref", config);
    rtl = AsmCycles(path, "rtl", config);
  } else {
    const std::filesystem::path source(SYSTOLE_SOURCE_DIR);
    const auto path = c.source == Source::kCorpus     ? CorpusFile(c.file)
                      : c.source == Source::kLayer    ? source / "tests" / "compiler" / "data" / c.file
                      : c.source == Source::kTraining ? source / "examples" / "training" / c.file
                                                      : ExampleFile(c.file);
    const CompiledModel model = Compile(ReadText(path), c.file, config);
    ref = HloCycles(model, "ref", config);
    rtl = HloCycles(model, "rtl", config);
  }
  ASSERT_GT(rtl, 0u);
  const double error = static_cast<double>(ref) / static_cast<double>(rtl) - 1.0;
  char row[200];
  std::snprintf(row, sizeof row, "| %s | %s | %llu | %llu | %+.1f %% |", c.file.c_str(), c.config.c_str(),
                static_cast<unsigned long long>(rtl), static_cast<unsigned long long>(ref), 100 * error);
  Table().emplace_back(row);
  EXPECT_LE(std::abs(error), kAim) << c.file << ": ref " << ref << " vs rtl " << rtl << " cycles";
}

// A case's test name: the file's stem and the configuration.
inline std::string TimingCaseName(const ::testing::TestParamInfo<TimingCase>& param) {
  std::string name = param.param.file.substr(0, param.param.file.find('.'));
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name + "_" + param.param.config;
}

}  // namespace systole::compiler::testing
