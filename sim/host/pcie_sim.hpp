// The pcie+sim function: an MMIO/memory-window shim onto the Verilated core of the rtl device
// (sim/rtl/rtl_device.hpp). BAR0 reads and writes become register-bus transactions, window
// bursts become host-memory-port requests (byte strobes exactly the burst's bytes), and a
// host's pause while polling becomes clock cycles.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "systole/pcie_transport.hpp"

namespace systole::host {

// Throws std::invalid_argument when this build has no Verilated core for `config`.
std::unique_ptr<pcie::PcieFunction> MakePcieSimFunction(const Config& config);

}  // namespace systole::host
