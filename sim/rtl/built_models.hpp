// The Verilated whole-core models a build made, and the one lookup every simulated device (rtl,
// usb+sim, pcie+sim) picks its model with.
//
// A top's parameters are baked in when it is Verilated, so there is one model per configuration
// (systole_verilate_configs in cmake/Verilate.cmake builds them and writes the table). Picking
// the model checks that the configuration file still says what it said at Verilation: a
// changed TOML with a stale model would simulate a machine other than the one the driver
// describes.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "arch/config/config.hpp"

namespace systole::rtl {

template <class Make>
struct BuiltModel {
  const char* config;  // the configuration's name
  Make make;           // builds the device around the model
};

// The `make` of the model built for `config`. Throws std::invalid_argument, naming the device,
// the configurations this build has, and the CMake variable that adds one (`cache_variable`),
// when there is none, or when the configuration changed since the model was built.
template <class Make>
Make FindBuiltModel(std::span<const BuiltModel<Make>> built, const Config& config,
                    std::string_view device, std::string_view cache_variable) {
  std::string names;
  for (const BuiltModel<Make>& model : built) {
    names += (names.empty() ? "" : ", ") + std::string(model.config);
    if (config.name != model.config) continue;
    if (!(config == LoadConfig(model.config))) {
      throw std::invalid_argument(std::string(device) + ": configuration '" + config.name +
                                  "' differs from the one its model was Verilated with; "
                                  "rebuild to Verilate it again");
    }
    return model.make;
  }
  throw std::invalid_argument(std::string(device) + ": no Verilated model for configuration '" +
                              config.name + "' in this build (built: " +
                              (names.empty() ? "none" : names) + "; add it to " +
                              std::string(cache_variable) + " and rebuild)");
}

}  // namespace systole::rtl
