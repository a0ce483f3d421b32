// The pcie+sim function: the Verilated rtl/host/systole_pcie_top (core + DMA engine + BAR
// decoding) driven as a root complex would drive it, with a simulated host memory for DMA
// buffers (sim/host/pcie_sim_top.hpp).
#pragma once

#include <memory>

#include "config/config.hpp"
#include "systole/pcie_transport.hpp"

namespace systole::host {

// Throws std::invalid_argument when this build has no Verilated PCIe top for `config`
// (SYSTOLE_PCIE_SIM_CONFIGS).
std::unique_ptr<pcie::PcieFunction> MakePcieSimFunction(const Config& config);

}  // namespace systole::host
