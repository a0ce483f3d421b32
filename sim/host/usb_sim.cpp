// MakeUsbSimStream: picks the Verilated USB top built for a configuration.
#include "host/usb_sim_stream.hpp"

#include <string>

namespace systole::host {

// Defined in the generated usb_sim_<config>.cpp files.
#define SYSTOLE_USB_SIM_CONFIG(name, id) \
  std::unique_ptr<usb::ByteStream> MakeUsbSim_##id(const Config&);
#include "usb_sim_configs.inc"
#undef SYSTOLE_USB_SIM_CONFIG

std::unique_ptr<usb::ByteStream> MakeUsbSimStream(const Config& config) {
  struct Built {
    const char* name;
    std::unique_ptr<usb::ByteStream> (*make)(const Config&);
  };
  static constexpr Built kBuilt[] = {
#define SYSTOLE_USB_SIM_CONFIG(name, id) {name, &MakeUsbSim_##id},
#include "usb_sim_configs.inc"
#undef SYSTOLE_USB_SIM_CONFIG
  };
  std::string built;
  for (const Built& top : kBuilt) {
    built += (built.empty() ? "" : ", ") + std::string(top.name);
    if (config.name != top.name) continue;
    // Parameters were baked in at Verilation: the configuration must not have changed since.
    if (!(config == LoadConfig(top.name))) {
      throw std::invalid_argument("usb+sim: configuration '" + config.name +
                                  "' differs from the one the USB top was built with; rebuild");
    }
    return top.make(config);
  }
  throw std::invalid_argument("usb+sim: no Verilated USB top for configuration '" + config.name +
                              "' (built: " + built + "; see SYSTOLE_USB_SIM_CONFIGS)");
}

}  // namespace systole::host
