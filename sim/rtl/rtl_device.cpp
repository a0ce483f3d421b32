// MakeRtlDevice: picks the Verilated model built for a configuration and memory backend.
#include "sim/rtl/rtl_device.hpp"

#include <stdexcept>

#include "sim/rtl/built_models.hpp"
#include "sim/rtl/verilator_context.hpp"

namespace systole::rtl {

// Defined in the generated <model>_glue.cpp files (systole_verilate_configs).
#define SYSTOLE_RTL_MODEL(name, model, backend) \
  std::unique_ptr<RtlDevice> Make_##model(const Config&, const RtlDeviceOptions&);
#include "rtl_device_configs.inc"
#undef SYSTOLE_RTL_MODEL

namespace {
using Make = std::unique_ptr<RtlDevice> (*)(const Config&, const RtlDeviceOptions&);
struct TableEntry {
  BuiltModel<Make> model;
  MemoryBackend memory;
};
constexpr TableEntry kBuilt[] = {
#define SYSTOLE_RTL_MODEL(name, model, backend) {{name, &Make_##model}, MemoryBackend::backend},
#include "rtl_device_configs.inc"
#undef SYSTOLE_RTL_MODEL
};

std::vector<BuiltModel<Make>> BuiltWith(MemoryBackend memory) {
  std::vector<BuiltModel<Make>> models;
  for (const TableEntry& entry : kBuilt) {
    if (entry.memory == memory) models.push_back(entry.model);
  }
  return models;
}
}  // namespace

const char* MemoryBackendName(MemoryBackend memory) {
  return memory == MemoryBackend::kHbm ? "hbm" : "ideal";
}

std::vector<std::string> BuiltRtlConfigs(MemoryBackend memory) {
  std::vector<std::string> names;
  for (const BuiltModel<Make>& model : BuiltWith(memory)) names.emplace_back(model.config);
  return names;
}

std::unique_ptr<RtlDevice> MakeRtlDevice(const Config& config, const RtlDeviceOptions& options) {
  const bool hbm = options.memory == MemoryBackend::kHbm;
  const std::vector<BuiltModel<Make>> built = BuiltWith(options.memory);
  const Make make = FindBuiltModel<Make>(built, config, hbm ? "rtl" : "rtl?memory=ideal",
                                         hbm ? "SYSTOLE_RTL_CONFIGS" : "SYSTOLE_RTL_IDEAL_CONFIGS");
  return make(config, options);
}

void DestroyRtlDevice(std::unique_ptr<RtlDevice> device) {
  ForgetThreadContext();
  device.reset();
}

}  // namespace systole::rtl
