// ResNet-50 (the corpus's 06_resnet50_inference_f32.hlo) on the SystemC platform's golden-model
// device, through the driver's `systemc` link, against `ref`: bit-identical predictions and the
// same counters. Labelled `long` (make test-long): compiling and running it twice takes ~1 min.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "systole/device.hpp"
#include "tests/compiler/compiler_test_util.hpp"

namespace systole::systemc {
namespace {

using compiler::testing::CorpusFile;
using compiler::testing::FirstBitDifference;
using compiler::testing::ReadText;

TEST(ResNet50, OnTheSystemcPlatformMatchesRefBitForBit) {
  const std::string file = "06_resnet50_inference_f32.hlo";
  if (!std::filesystem::exists(CorpusFile(file))) GTEST_SKIP() << CorpusFile(file) << " is not on this machine";
  const Config config = LoadConfig("small");
  const compiler::CompiledModel model = compiler::Compile(ReadText(CorpusFile(file)), file, config);
  const auto inputs = runtime::NetworkInputs(*model.module, 1);
  Device ref = Device::Open("ref", config);
  Device systemc = Device::Open("systemc", config);
  const runtime::RunResult expected = runtime::Execute(model, ref, inputs);
  const auto start = std::chrono::steady_clock::now();
  const runtime::RunResult got = runtime::Execute(model, systemc, inputs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(FirstBitDifference(got.result, expected.result), "");
  EXPECT_EQ(got.stats.device_steps, expected.stats.device_steps);
  EXPECT_EQ(got.stats.device_steps, 58u);  // tests/compiler/long/resnet_test.cpp says which
  EXPECT_EQ(got.stats.cycles, expected.stats.cycles);
  EXPECT_EQ(got.stats.macs, expected.stats.macs);
  EXPECT_EQ(got.stats.mxu_busy, expected.stats.mxu_busy);
  std::printf("ResNet-50 on systemc: %llu cycles, device %.1f s (ref %.1f s), whole run %.1f s\n",
              static_cast<unsigned long long>(got.stats.cycles), got.stats.device_seconds,
              expected.stats.device_seconds, seconds);
}

}  // namespace
}  // namespace systole::systemc
