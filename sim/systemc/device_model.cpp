// The golden model's step, and the table of models by name (device_model.hpp).
#include "sim/systemc/device_model.hpp"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>

#include "sim/systemc/hls_device_model.hpp"

namespace systole::systemc {

std::uint64_t GoldenDeviceModel::Step() {
  const std::uint64_t before = model_.CyclesRun();
  // A deadline in the past runs exactly the next instruction (one more when a launch ends and
  // the next begins).
  model_.RunUntil(std::chrono::steady_clock::time_point::min());
  const std::uint64_t after = model_.CyclesRun();
  return after > before ? after - before : 0;  // an abort drops the launch's progress
}

namespace {

std::unique_ptr<DeviceModel> MakeGolden(const Config& config) {
  return std::make_unique<GoldenDeviceModel>(config);
}

std::mutex& MakersMutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, DeviceModelMaker, std::less<>>& Makers() {
  static std::map<std::string, DeviceModelMaker, std::less<>> makers = {
      {"golden", &MakeGolden}, {"hls", &MakeHlsDeviceModel}};
  return makers;
}

}  // namespace

void RegisterDeviceModel(std::string_view name, DeviceModelMaker maker) {
  const std::lock_guard lock(MakersMutex());
  Makers().insert_or_assign(std::string(name), maker);
}

std::unique_ptr<DeviceModel> MakeDeviceModel(std::string_view name, const Config& config) {
  DeviceModelMaker maker = nullptr;
  std::string known;
  {
    const std::lock_guard lock(MakersMutex());
    const auto found = Makers().find(name);
    if (found != Makers().end()) maker = found->second;
    for (const auto& [known_name, unused] : Makers()) known += (known.empty() ? "" : ", ") + known_name;
  }
  if (maker == nullptr) {
    throw std::invalid_argument(fmt::format("no device model '{}' in this program (it has: {}){}", name, known,
                                            name == "rtl" ? "; the Verilated SoC needs a build with SYSTOLE_RTL=ON" : ""));
  }
  return maker(config);
}

}  // namespace systole::systemc
