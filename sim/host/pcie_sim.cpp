#include "host/pcie_sim.hpp"

#include <fmt/format.h>

#include "regs/regmap.hpp"
#include "rtl/rtl_device.hpp"
#include "verilator_context.hpp"

namespace systole::host {
namespace {

class PcieSim final : public pcie::PcieFunction {
 public:
  explicit PcieSim(std::unique_ptr<rtl::RtlDevice> device) : device_(std::move(device)) {}
  ~PcieSim() override {
    ForgetThreadContext();
    device_.reset();
    ForgetThreadContext();
  }

  std::uint32_t Read32(std::uint32_t offset) override { return device_->ReadRegister(offset); }
  void Write32(std::uint32_t offset, std::uint32_t value) override {
    device_->WriteRegister(offset, value);
  }
  void WriteWindow(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    CheckBurst(address, bytes.size());
    device_->WriteMemory(address, bytes);
  }
  void ReadWindow(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    CheckBurst(address, bytes.size());
    device_->ReadMemory(address, bytes);
  }
  // BAR0 is the register window rounded up to a page, as a board's would be.
  std::uint64_t RegisterBytes() const override { return 4096; }
  std::uint64_t WindowBytes() const override { return device_->config().memory_bytes; }
  // The rtl link's polling interval, so both see the same device.
  void Pause() override { device_->Run(64); }

 private:
  // A burst a root complex would not emit is a bug in the link above.
  static void CheckBurst(std::uint64_t address, std::size_t bytes) {
    if (bytes > kMaxBurstBytes || (bytes > 0 && address / 4096 != (address + bytes - 1) / 4096)) {
      throw std::logic_error(fmt::format("pcie+sim: a burst of {} bytes at 0x{:x} is larger than "
                                         "{} bytes or crosses a 4 KiB boundary", bytes, address,
                                         kMaxBurstBytes));
    }
  }

  std::unique_ptr<rtl::RtlDevice> device_;
};

}  // namespace

std::unique_ptr<pcie::PcieFunction> MakePcieSimFunction(const Config& config) {
  return std::make_unique<PcieSim>(rtl::MakeRtlDevice(config));
}

}  // namespace systole::host
