// Device names: `lab-board` or `pod-a` stand for a URI or a list of URIs, as Cloud TPU names
// resolve to their addresses (docs/TRAINING.md "Device names"). A user file
//
//   # ~/.config/systole/devices.toml  ($XDG_CONFIG_HOME/systole/devices.toml; SYSTOLE_DEVICES_FILE overrides)
//   [devices]
//   lab-board = "serial:///dev/ttyUSB0?baud=3000000"
//   pod-a = ["tcp://10.0.0.1:7000", "tcp://10.0.0.2:7000"]
//   pod-b = ["lab-board", "ref"]            # names may name names
//
// defines them; SYSTOLE_DEVICE holds the device (a name, a URI or a comma-separated list) that
// commands use when none is given.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace systole {

struct DeviceResolution {
  std::string requested;           // what was asked for (after SYSTOLE_DEVICE, when it was empty)
  std::vector<std::string> uris;   // what it stands for, in order
  std::string source;              // how: "URI", "devices.toml (PATH)", "SYSTOLE_DEVICE", …
};

// The devices file: SYSTOLE_DEVICES_FILE, else $XDG_CONFIG_HOME/systole/devices.toml, else
// $HOME/.config/systole/devices.toml ("" when none of the variables is set).
std::filesystem::path DevicesFile();

// Resolves `device`: empty means SYSTOLE_DEVICE, or `fallback` when that is unset; a
// comma-separated list resolves each item; a name defined in the devices file stands for its
// value (a string or an array of strings, resolved again: names may name names); anything else
// is a URI and stands for itself. Throws std::runtime_error naming the file and the entry for a
// malformed file, a value of another type or a cycle of names.
DeviceResolution ResolveDevice(std::string_view device, std::string_view fallback = "ref");

}  // namespace systole
