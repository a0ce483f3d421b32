// A compiled HLO program through a serial board and on `ref`: the serial board tests' check.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "systole/device.hpp"
#include "tests/compiler/compiler_test_util.hpp"
#include "tests/driver/driver_test_util.hpp"

namespace systole::driver_test {

// A compiled HLO program through the serial board and on ref: the same result bits, device
// steps, MACs, MXU busy cycles and functional counters of the last step. Returns false (and
// says why) when the file does not fit the configuration (tiny unless `config_name` says
// another): it fails to compile or has no device step.
inline bool ExpectHloMatchesRef(const std::filesystem::path& path, Device& serial,
                                const std::string& config_name = "tiny") {
  const Config config = LoadConfig(config_name);
  const std::string name = path.filename().string();
  std::optional<compiler::CompiledModel> model;
  try {
    model = compiler::Compile(compiler::testing::ReadText(path), name, config);
  } catch (const std::exception& error) {
    std::printf("%s does not compile for %s: %s\n", name.c_str(), config_name.c_str(),
                error.what());
    return false;
  }
  if (model->DeviceStepCount() == 0) {
    std::printf("%s runs entirely on the host for %s\n", name.c_str(), config_name.c_str());
    return false;
  }
  const auto inputs = hlo::RandomInputs(*model->module, 9);
  Device ref = Device::Open("ref", config);
  const auto on_ref = runtime::Execute(*model, ref, inputs);
  const auto ref_counters = ref.ReadCounters();
  const auto start = std::chrono::steady_clock::now();
  const auto on_serial = runtime::Execute(*model, serial, inputs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(compiler::testing::FirstBitDifference(on_serial.result, on_ref.result), "") << name;
  EXPECT_EQ(on_serial.stats.device_steps, on_ref.stats.device_steps) << name;
  EXPECT_EQ(on_serial.stats.macs, on_ref.stats.macs) << name;
  EXPECT_EQ(on_serial.stats.mxu_busy, on_ref.stats.mxu_busy) << name;
  driver_test::ExpectSameFunctionalCounters(serial.ReadCounters(), ref_counters, name);
  std::printf("%s on serial (%s): %zu device steps, %llu MACs, %.1f s\n", name.c_str(),
              config_name.c_str(), on_serial.stats.device_steps,
              static_cast<unsigned long long>(on_serial.stats.macs), seconds);
  return true;
}

}  // namespace systole::driver_test
