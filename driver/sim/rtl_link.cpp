// `rtl`: the Verilated Systole core, in process (sim/rtl/rtl_device.hpp). Waiting for the
// device clocks the simulation until the launch queue drains (as `ref` runs its model), or the
// wall-clock timeout passes.
#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

#include "arch/regs/regmap.hpp"
#include "driver/sim/sim_links.hpp"
#include "sim/rtl/rtl_device.hpp"
#include "systole/link.hpp"

namespace systole {
namespace {

class RtlLink final : public Link {
 public:
  RtlLink(std::unique_ptr<rtl::RtlDevice> device, std::string uri)
      : uri_(std::move(uri)), device_(std::move(device)) {}

  std::string_view Uri() const override { return uri_; }
  std::uint32_t ReadRegister(std::uint32_t offset) override { return device_->ReadRegister(offset); }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    // The launch begins with the doorbell: its cycles count from here (docs/TRACE.md).
    if (timeline_ != nullptr && offset == regs::OffsetOf("DOORBELL")) timeline_->LaunchStarted(device_->Cycle());
    device_->WriteRegister(offset, value);
  }
  void RecordWaveform(const std::filesystem::path& path) override { device_->RecordWaveform(path); }
  void Record(trace::Timeline* timeline) override {
    device_->Record(timeline);
    timeline_ = timeline;
  }
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    Guard([&] { device_->WriteMemory(address, bytes); });
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    Guard([&] { device_->ReadMemory(address, bytes); });
  }
  bool WaitForInterrupt(std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // Checking idleness costs a register read, so the simulation runs in slices between checks.
    constexpr std::uint64_t kSlice = 4096;
    while (true) {
      if (device_->RunUntilIdle(kSlice)) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
    }
  }

 private:
  template <class F>
  void Guard(F&& access) {
    try {
      access();
    } catch (const std::out_of_range& error) {
      throw LinkError(Uri(), error.what());
    }
  }

  std::string uri_;
  std::unique_ptr<rtl::RtlDevice> device_;
  trace::Timeline* timeline_ = nullptr;
};

}  // namespace

std::unique_ptr<Link> OpenRtlLink(const Config& config, std::string_view memory) {
  // The default keeps its short name, so messages and servers say "rtl" as before.
  const std::string uri = memory == "hbm" ? "rtl" : fmt::format("rtl?memory={}", memory);
  rtl::RtlDeviceOptions options;
  if (memory == "ideal") {
    options.memory = rtl::MemoryBackend::kIdeal;
  } else if (memory != "hbm") {
    throw LinkError(uri, fmt::format("unknown memory '{}' (expected hbm or ideal)", memory));
  }
  try {
    return std::make_unique<RtlLink>(rtl::MakeRtlDevice(config, options), uri);
  } catch (const std::invalid_argument& error) {
    throw LinkError(uri, error.what());
  }
}

}  // namespace systole
