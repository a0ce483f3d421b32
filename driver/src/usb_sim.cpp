// usb+sim: the Verilated USB top (sim/host/usb_sim.hpp) when this build has one.
#include "systole/usb_transport.hpp"

#if SYSTOLE_HOST_SIM
#include <stdexcept>

#include "host/usb_sim_stream.hpp"
#endif

namespace systole::usb {

std::unique_ptr<ByteStream> OpenSimUsbStream(const Config& config) {
#if SYSTOLE_HOST_SIM
  try {
    return host::MakeUsbSimStream(config);
  } catch (const std::invalid_argument& error) {
    throw LinkError("usb+sim", error.what());
  }
#else
  (void)config;
  throw LinkError("usb+sim", "this build has no Verilated USB top (configured with "
                             "SYSTOLE_RTL=OFF)");
#endif
}

}  // namespace systole::usb
