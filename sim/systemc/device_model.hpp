// What sits behind a SystoleDevice's sockets (systole_device.hpp): one Systole machine seen as
// registers, device memory, an interrupt line and a way to advance it.
//
// The sockets, their address decoding, byte enables, debug transport and DMI are written once
// in SystoleDevice; an implementation supplies only the machine. GoldenDeviceModel is the
// golden model (sim/model/), loosely timed: each Step() runs one instruction and reports the
// cycles the timing model (sim/timing/) gives it, which the device turns into simulated time.
// RtlDeviceModel (rtl_device_model.hpp, in builds with the Verilated RTL) is the Verilated SoC,
// whose every clock cycle becomes one period of simulated time. MakeDeviceModel picks one by
// name, as the driver's `systemc?model=NAME` does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "arch/config/config.hpp"
#include "sim/model/golden_model.hpp"

namespace systole::systemc {

class DeviceModel {
 public:
  virtual ~DeviceModel() = default;

  // The configuration the machine was built for (its identity registers report the same).
  virtual const Config& config() const = 0;

  // Host accesses, counted in PERF_BYTES_HOST as over any link. `offset` names a register
  // (regs::FindRegister); memory ranges lie inside config().memory_bytes: the device checks
  // both before it calls these.
  virtual std::uint32_t ReadRegister(std::uint32_t offset) = 0;
  virtual void WriteRegister(std::uint32_t offset, std::uint32_t value) = 0;
  virtual void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) = 0;
  virtual void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) = 0;

  // Device cycles the host accesses since the last call spent on the machine's own bus, or 0
  // when the machine has none (the device then charges its fixed access times).
  virtual std::uint64_t TakeBusCycles() { return 0; }

  // Debug access (transport_dbg): the same bytes, no side effect, nothing counted. False when
  // the machine has no such back door (nothing is transferred then).
  virtual bool PeekMemory(std::uint64_t address, std::span<std::uint8_t> bytes) = 0;
  virtual bool PokeMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) = 0;

  // Direct memory access: a span of device memory holding `address` whose bytes stay put until
  // the model is destroyed (the device invalidates DMI then), or an empty span when the model
  // offers none for that address.
  virtual std::span<std::uint8_t> DirectMemory(std::uint64_t address) = 0;

  // True when the machine has nothing to run (no launch running or queued).
  virtual bool Idle() const = 0;
  // Runs the machine a little (one instruction for the golden model, a slice of clock cycles
  // for the RTL) and returns the device cycles that took. Called only while !Idle().
  virtual std::uint64_t Step() = 0;
  virtual bool InterruptLine() const = 0;
};

// A model by name: "golden" (GoldenDeviceModel), or one another library registered (the
// Verilated SoC registers "rtl"). Throws std::invalid_argument naming the known ones otherwise,
// and whatever the model's constructor throws (an unbuilt configuration, say).
std::unique_ptr<DeviceModel> MakeDeviceModel(std::string_view name, const Config& config);
using DeviceModelMaker = std::unique_ptr<DeviceModel> (*)(const Config& config);
void RegisterDeviceModel(std::string_view name, DeviceModelMaker maker);

// The golden model behind the sockets.
class GoldenDeviceModel final : public DeviceModel {
 public:
  explicit GoldenDeviceModel(const Config& config) : model_(config) {}

  const Config& config() const override { return model_.config(); }
  std::uint32_t ReadRegister(std::uint32_t offset) override { return model_.ReadRegister(offset); }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    model_.WriteRegister(offset, value);
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    model_.ReadMemory(address, bytes);
  }
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    model_.WriteMemory(address, bytes);
  }
  bool PeekMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    model_.Memory().Read(address, bytes);
    return true;
  }
  bool PokeMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    model_.UncountedMemory().Write(address, bytes);
    return true;
  }
  std::span<std::uint8_t> DirectMemory(std::uint64_t address) override {
    return model_.UncountedMemory().DirectPage(address);
  }
  bool Idle() const override { return model_.Idle(); }
  std::uint64_t Step() override;
  bool InterruptLine() const override { return model_.InterruptLine(); }

  model::GoldenModel& golden() { return model_; }

 private:
  model::GoldenModel model_;
};

}  // namespace systole::systemc
