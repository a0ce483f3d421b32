// pcie+sim: the Verilated PCIe top with a simulated host memory (sim/host/pcie_sim.hpp) when
// this build has one.
#include "systole/pcie_transport.hpp"

#if SYSTOLE_HOST_SIM
#include <stdexcept>

#include "host/pcie_sim.hpp"
#endif

namespace systole::pcie {

std::unique_ptr<PcieFunction> OpenSimFunction(const Config& config) {
#if SYSTOLE_HOST_SIM
  try {
    return host::MakePcieSimFunction(config);
  } catch (const std::invalid_argument& error) {
    throw LinkError("pcie+sim", error.what());
  }
#else
  (void)config;
  throw LinkError("pcie+sim", "this build has no Verilated core (configured with "
                              "SYSTOLE_RTL=OFF)");
#endif
}

}  // namespace systole::pcie
