// MakePcieSimFunction: picks the Verilated PCIe top built for a configuration.
#include "host/pcie_sim.hpp"

#include <stdexcept>
#include <string>

namespace systole::host {

// Defined in the generated pcie_sim_<config>.cpp files.
#define SYSTOLE_PCIE_SIM_CONFIG(name, id) \
  std::unique_ptr<pcie::PcieFunction> MakePcieSim_##id(const Config&);
#include "pcie_sim_configs.inc"
#undef SYSTOLE_PCIE_SIM_CONFIG

std::unique_ptr<pcie::PcieFunction> MakePcieSimFunction(const Config& config) {
  struct Built {
    const char* name;
    std::unique_ptr<pcie::PcieFunction> (*make)(const Config&);
  };
  static constexpr Built kBuilt[] = {
#define SYSTOLE_PCIE_SIM_CONFIG(name, id) {name, &MakePcieSim_##id},
#include "pcie_sim_configs.inc"
#undef SYSTOLE_PCIE_SIM_CONFIG
  };
  std::string built;
  for (const Built& top : kBuilt) {
    built += (built.empty() ? "" : ", ") + std::string(top.name);
    if (config.name != top.name) continue;
    // Parameters were baked in at Verilation: the configuration must not have changed since.
    if (!(config == LoadConfig(top.name))) {
      throw std::invalid_argument("pcie+sim: configuration '" + config.name +
                                  "' differs from the one the PCIe top was built with; rebuild");
    }
    return top.make(config);
  }
  throw std::invalid_argument("pcie+sim: no Verilated PCIe top for configuration '" +
                              config.name + "' (built: " + built +
                              "; see SYSTOLE_PCIE_SIM_CONFIGS)");
}

}  // namespace systole::host
