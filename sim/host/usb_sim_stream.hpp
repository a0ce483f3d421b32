// The usb+sim byte stream's factory, apart from the Verilated template (usb_sim.hpp), so that
// the driver can open it without Verilator's headers.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "systole/usb_transport.hpp"

namespace systole::host {

// The USB top built for `config`; throws std::invalid_argument naming the built ones.
std::unique_ptr<usb::ByteStream> MakeUsbSimStream(const Config& config);

}  // namespace systole::host
