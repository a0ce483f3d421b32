// MakeRtlDevice: picks the Verilated core built for a configuration.
#include "rtl/rtl_device.hpp"

#include <stdexcept>

namespace systole::rtl {

// Defined in the generated rtl_device_<config>.cpp files.
#define SYSTOLE_RTL_CONFIG(name, id) \
  std::unique_ptr<RtlDevice> MakeCore_##id(const Config&, const RtlDeviceOptions&);
#include "rtl_device_configs.inc"
#undef SYSTOLE_RTL_CONFIG

namespace {
struct BuiltCore {
  const char* name;
  std::unique_ptr<RtlDevice> (*make)(const Config&, const RtlDeviceOptions&);
};
constexpr BuiltCore kBuilt[] = {
#define SYSTOLE_RTL_CONFIG(name, id) {name, &MakeCore_##id},
#include "rtl_device_configs.inc"
#undef SYSTOLE_RTL_CONFIG
};
}  // namespace

std::vector<std::string> BuiltRtlConfigs() {
  std::vector<std::string> names;
  for (const BuiltCore& core : kBuilt) names.emplace_back(core.name);
  return names;
}

std::unique_ptr<RtlDevice> MakeRtlDevice(const Config& config, const RtlDeviceOptions& options) {
  std::string built;
  for (const BuiltCore& core : kBuilt) {
    built += (built.empty() ? "" : ", ") + std::string(core.name);
    if (config.name != core.name) continue;
    // The parameters were baked in when the model was Verilated: the configuration file must
    // still say what it said then.
    if (!(config == LoadConfig(core.name))) {
      throw std::invalid_argument("rtl: configuration '" + config.name +
                                  "' differs from the one the RTL model was built with; "
                                  "rebuild to Verilate it again");
    }
    return core.make(config, options);
  }
  throw std::invalid_argument("rtl: no Verilated core for configuration '" + config.name +
                              "' in this build (built: " + built +
                              "; add it to SYSTOLE_RTL_CONFIGS and rebuild)");
}

}  // namespace systole::rtl
