// The simulated devices: links whose far end is Verilated RTL in this process.
//
//   rtl[?memory=hbm|ideal]  the whole core (sim/rtl/rtl_device.hpp)
//   usb+sim                 the USB top (bridge + core) behind the frame protocol
//   pcie+sim                the PCIe top (core + DMA engine) behind a simulated root complex
//   serial+sim              the serial top (UART + bridge + core) on a pseudo-terminal, reached
//                           through the real serial:// link (pty_board.hpp)
//
// They live in their own library, systole_sim_links (driver/sim/), because they carry the
// Verilated models: a program that never runs RTL (the compiler's tests, a board's host, the
// sanitizer build) does not build or link them. The library is an OBJECT library that
// registers its schemes with OpenLink (RegisterLinkScheme, systole/link.hpp) when it is linked
// in, so `Device::Open("rtl")` works in exactly the programs that link it.
#pragma once

#include <memory>
#include <string_view>

#include "arch/config/config.hpp"
#include "systole/link.hpp"
#include "systole/pcie_transport.hpp"
#include "systole/usb_transport.hpp"

namespace systole {

// The Verilated core with its device memory behind the HBM controller and DRAM models ("hbm",
// the default: cycle counts include DRAM timing) or a fixed-latency memory ("ideal": the bare
// core, several times faster to simulate, the memory the usb+sim and pcie+sim tops have).
// Throws LinkError when there is no model for the configuration and memory, or `memory` is
// neither.
std::unique_ptr<Link> OpenRtlLink(const Config& config, std::string_view memory = "hbm");

namespace usb {
// The Verilated rtl/host/systole_usb_top of `config`, in process, with device memory in C++.
// Throws LinkError when this build has no Verilated USB top for the configuration
// (SYSTOLE_USB_SIM_CONFIGS).
std::unique_ptr<ByteStream> OpenSimUsbStream(const Config& config);
}  // namespace usb

namespace pcie {
// The Verilated systole_pcie_top of `config` (core + DMA engine) with its BARs driven as a
// root complex would and a simulated host memory behind an IOVA allocator for DMA buffers.
// Throws LinkError when this build has no such top for `config` (SYSTOLE_PCIE_SIM_CONFIGS).
std::unique_ptr<PcieFunction> OpenSimFunction(const Config& config);
}  // namespace pcie

namespace serial {
// A PtyBoard of `config` (driver/sim/pty_board.hpp) and a serial:// link to it, as one Link that
// stops the board when it goes. Throws LinkError when this build has no serial top for
// `config` (SYSTOLE_SERIAL_SIM_CONFIGS).
std::unique_ptr<Link> OpenSerialSimLink(const Config& config, std::string_view uri);
}  // namespace serial

}  // namespace systole
