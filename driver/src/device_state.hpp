// What the handles of device.hpp share: internal to the driver.
#pragma once

#include <fmt/format.h>

#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "systole/device.hpp"

namespace systole::detail {

struct DeviceState {
  std::unique_ptr<Link> link;
  std::string uri;
  Config config;
  std::weak_ptr<RunState> run_in_flight;
  // The last launch has not been seen to finish: its Run was dropped before a wait saw the
  // device idle (the wait failed or gave up), so the device may still be running it.
  bool launch_unfinished = false;
  trace::Timeline* timeline = nullptr;  // Device::Record
};

struct BufferState {
  std::shared_ptr<DeviceState> device;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  ~BufferState();
};

struct RunState {
  std::shared_ptr<DeviceState> device;
  bool finished = false;
  std::optional<RunError> error;
};

// One contiguous piece of a loaded program: program addresses [start, end) live in `buffer`.
struct ProgramRegion {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  Buffer buffer;
};

struct ProgramState {
  std::shared_ptr<DeviceState> device;
  image::Program source;
  std::vector<ProgramRegion> regions;
};

// Runs `body`, turning any failure into a DeviceError that names the device and `operation`.
template <typename Body>
auto Guarded(const DeviceState& device, std::string_view operation, Body&& body) {
  try {
    return body();
  } catch (const DeviceError&) {
    throw;
  } catch (const LinkError& error) {
    throw DeviceError(device.uri, std::string(operation), error.cause());
  } catch (const std::exception& error) {
    throw DeviceError(device.uri, std::string(operation), error.what());
  }
}

}  // namespace systole::detail
