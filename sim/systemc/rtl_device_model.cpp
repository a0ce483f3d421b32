// "rtl": the Verilated SoC (systole_soc: the core, the HBM controller and its DRAM models;
// sim/rtl/rtl_device.hpp) behind a SystoleDevice's sockets, for `systemc?model=rtl`.
//
// Cycle accurate in simulated time: every clock cycle the RTL takes becomes one period of the
// configuration's clock. The device's thread clocks the SoC in slices of kSliceCycles (fewer
// when a launch ends sooner) and adds exactly the cycles it ran to its quantum keeper; a host
// access is the SoC's own register-bus or host-port handshake, cycle by cycle, and its
// b_transport is annotated with exactly the cycles that took (TakeBusCycles). The SoC is not
// driven by an sc_clock signal: a slot's clock would have to exist before elaboration, and the
// platform's slots take models of any configuration later (platform.hpp).
//
// Its device memory lives in the DRAM models, reached only through the host port: there is no
// debug back door (transport_dbg moves nothing, masked writes are refused) and no DMI.
//
// Linked into programs through the OBJECT library systole_systemc_rtl (built with SYSTOLE_RTL),
// whose registration below makes MakeDeviceModel("rtl", …) work there.
#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "arch/regs/regmap.hpp"
#include "sim/rtl/rtl_device.hpp"
#include "sim/systemc/device_model.hpp"

namespace systole::systemc {
namespace {

class RtlDeviceModel final : public DeviceModel {
 public:
  // Clock cycles between two looks at STATUS while a launch runs (DeviceSim polls every 64).
  static constexpr std::uint64_t kSliceCycles = 256;

  explicit RtlDeviceModel(const Config& config) : device_(rtl::MakeRtlDevice(config)) {}

  const Config& config() const override { return device_->config(); }

  std::uint32_t ReadRegister(std::uint32_t offset) override {
    const std::uint32_t value = OnBus([&] { return device_->ReadRegister(offset); });
    return value;
  }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    OnBus([&] {
      device_->WriteRegister(offset, value);
      return 0u;
    });
    busy_ = true;  // a doorbell, an abort, a reset: Step finds out what the core is doing
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    OnBus([&] {
      device_->ReadMemory(address, bytes);
      return 0u;
    });
  }
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    OnBus([&] {
      device_->WriteMemory(address, bytes);
      return 0u;
    });
  }
  std::uint64_t TakeBusCycles() override {
    const std::uint64_t cycles = bus_cycles_;
    bus_cycles_ = 0;
    return cycles;
  }
  bool PeekMemory(std::uint64_t, std::span<std::uint8_t>) override { return false; }
  bool PokeMemory(std::uint64_t, std::span<const std::uint8_t>) override { return false; }
  std::span<std::uint8_t> DirectMemory(std::uint64_t) override { return {}; }

  bool Idle() const override { return !busy_; }
  std::uint64_t Step() override {
    const std::uint64_t before = device_->Cycle();
    busy_ = !device_->RunUntilIdle(kSliceCycles);
    irq_ = device_->InterruptLine();
    return device_->Cycle() - before;
  }
  bool InterruptLine() const override { return irq_; }

 private:
  // Runs a host access on the SoC's bus and keeps the cycles it took.
  template <class F>
  std::uint32_t OnBus(F&& access) {
    const std::uint64_t before = device_->Cycle();
    const std::uint32_t result = access();
    bus_cycles_ += device_->Cycle() - before;
    irq_ = device_->InterruptLine();
    return result;
  }

  std::unique_ptr<rtl::RtlDevice> device_;
  bool busy_ = false;
  bool irq_ = false;
  std::uint64_t bus_cycles_ = 0;
};

std::unique_ptr<DeviceModel> MakeRtl(const Config& config) { return std::make_unique<RtlDeviceModel>(config); }

// Runs when a program that links systole_systemc_rtl starts (an OBJECT library: never dropped).
[[maybe_unused]] const bool kRegistered = [] {
  RegisterDeviceModel("rtl", &MakeRtl);
  return true;
}();

}  // namespace
}  // namespace systole::systemc
