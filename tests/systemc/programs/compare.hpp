// Shared by the program tests of the SystemC platform (programs/, long/): an HLO program compiled
// and run on ref and on a systemc device with the same inputs.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>

#include "systole/device.hpp"
#include "tests/compiler/compiler_test_util.hpp"

namespace systole::systemc::testing {

struct Model {
  std::string file;
  std::string config;
  bool example;  // examples/hlo, else the shared corpus
};
inline void PrintTo(const Model& m, std::ostream* os) { *os << m.file << " on " << m.config; }
// Compiles `m`, runs it with the same random inputs on ref and on `uri`: bit-identical outputs,
// the same device steps, MACs and MXU busy cycles, and (`same_cycles`) the same cycle counts.
inline void ExpectMatchesRef(const Model& m, const std::string& uri, bool same_cycles) {
  const auto path = m.example ? compiler::testing::ExampleFile(m.file) : compiler::testing::CorpusFile(m.file);
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is not on this machine";
  }
  const Config config = LoadConfig(m.config);
  const compiler::CompiledModel model = compiler::Compile(compiler::testing::ReadText(path), m.file, config);
  const auto inputs = hlo::RandomInputs(*model.module, 5);
  Device ref = Device::Open("ref", config);
  Device device = Device::Open(uri, config);
  const runtime::RunResult expected = runtime::Execute(model, ref, inputs);
  const runtime::RunResult got = runtime::Execute(model, device, inputs);
  EXPECT_EQ(compiler::testing::FirstBitDifference(got.result, expected.result), "") << m.file << " on " << uri;
  EXPECT_EQ(got.stats.device_steps, expected.stats.device_steps);
  EXPECT_EQ(got.stats.macs, expected.stats.macs);
  EXPECT_EQ(got.stats.mxu_busy, expected.stats.mxu_busy);
  if (same_cycles) {
    EXPECT_EQ(got.stats.cycles, expected.stats.cycles);
  }
}

}  // namespace systole::systemc::testing
