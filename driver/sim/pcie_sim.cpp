// pcie+sim: picks the Verilated PCIe top built for a configuration.
#include <stdexcept>

#include "driver/sim/sim_links.hpp"
#include "sim/rtl/built_models.hpp"

namespace systole::pcie {

using Make = std::unique_ptr<PcieFunction> (*)(const Config&);

// Defined in the generated <model>_glue.cpp files (systole_verilate_configs).
#define SYSTOLE_PCIE_SIM_MODEL(name, model) std::unique_ptr<PcieFunction> Make_##model(const Config&);
#include "pcie_sim_configs.inc"
#undef SYSTOLE_PCIE_SIM_MODEL

std::unique_ptr<PcieFunction> OpenSimFunction(const Config& config) {
  static constexpr rtl::BuiltModel<Make> kBuilt[] = {
#define SYSTOLE_PCIE_SIM_MODEL(name, model) {name, &Make_##model},
#include "pcie_sim_configs.inc"
#undef SYSTOLE_PCIE_SIM_MODEL
  };
  try {
    return rtl::FindBuiltModel<Make>(kBuilt, config, "pcie+sim", "SYSTOLE_PCIE_SIM_CONFIGS")(config);
  } catch (const std::invalid_argument& error) {
    throw LinkError("pcie+sim", error.what());
  }
}

}  // namespace systole::pcie
