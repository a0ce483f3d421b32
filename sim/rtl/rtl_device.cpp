// MakeRtlDevice: picks the Verilated model built for a configuration and memory backend.
#include "rtl/rtl_device.hpp"

#include <stdexcept>

namespace systole::rtl {

// Defined in the generated rtl_device_{soc,core}_<config>.cpp files.
#define SYSTOLE_RTL_MODEL(name, model, backend) \
  std::unique_ptr<RtlDevice> Make_##model(const Config&, const RtlDeviceOptions&);
#include "rtl_device_configs.inc"
#undef SYSTOLE_RTL_MODEL

namespace {
struct BuiltModel {
  const char* name;
  MemoryBackend memory;
  std::unique_ptr<RtlDevice> (*make)(const Config&, const RtlDeviceOptions&);
};
constexpr BuiltModel kBuilt[] = {
#define SYSTOLE_RTL_MODEL(name, model, backend) {name, MemoryBackend::backend, &Make_##model},
#include "rtl_device_configs.inc"
#undef SYSTOLE_RTL_MODEL
};
}  // namespace

const char* MemoryBackendName(MemoryBackend memory) {
  return memory == MemoryBackend::kHbm ? "hbm" : "ideal";
}

std::vector<std::string> BuiltRtlConfigs(MemoryBackend memory) {
  std::vector<std::string> names;
  for (const BuiltModel& model : kBuilt) {
    if (model.memory == memory) names.emplace_back(model.name);
  }
  return names;
}

std::unique_ptr<RtlDevice> MakeRtlDevice(const Config& config, const RtlDeviceOptions& options) {
  std::string built;
  for (const BuiltModel& model : kBuilt) {
    if (model.memory != options.memory) continue;
    built += (built.empty() ? "" : ", ") + std::string(model.name);
    if (config.name != model.name) continue;
    // The parameters were baked in when the model was Verilated: the configuration file must
    // still say what it said then.
    if (!(config == LoadConfig(model.name))) {
      throw std::invalid_argument("rtl: configuration '" + config.name +
                                  "' differs from the one the RTL model was built with; "
                                  "rebuild to Verilate it again");
    }
    return model.make(config, options);
  }
  const bool hbm = options.memory == MemoryBackend::kHbm;
  throw std::invalid_argument(
      "rtl: no Verilated model with " + std::string(MemoryBackendName(options.memory)) +
      " memory for configuration '" + config.name + "' in this build (built: " +
      (built.empty() ? "none" : built) + "; add it to " +
      (hbm ? "SYSTOLE_RTL_CONFIGS" : "SYSTOLE_RTL_IDEAL_CONFIGS") + " and rebuild)");
}

}  // namespace systole::rtl
