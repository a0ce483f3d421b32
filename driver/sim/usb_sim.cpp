// usb+sim: picks the Verilated USB top built for a configuration.
#include <stdexcept>

#include "driver/sim/sim_links.hpp"
#include "sim/rtl/built_models.hpp"

namespace systole::usb {

using Make = std::unique_ptr<ByteStream> (*)(const Config&);

// Defined in the generated <model>_glue.cpp files (systole_verilate_configs).
#define SYSTOLE_USB_SIM_MODEL(name, model) std::unique_ptr<ByteStream> Make_##model(const Config&);
#include "usb_sim_configs.inc"
#undef SYSTOLE_USB_SIM_MODEL

std::unique_ptr<ByteStream> OpenSimUsbStream(const Config& config) {
  static constexpr rtl::BuiltModel<Make> kBuilt[] = {
#define SYSTOLE_USB_SIM_MODEL(name, model) {name, &Make_##model},
#include "usb_sim_configs.inc"
#undef SYSTOLE_USB_SIM_MODEL
  };
  try {
    return rtl::FindBuiltModel<Make>(kBuilt, config, "usb+sim", "SYSTOLE_USB_SIM_CONFIGS")(config);
  } catch (const std::invalid_argument& error) {
    throw LinkError("usb+sim", error.what());
  }
}

}  // namespace systole::usb
