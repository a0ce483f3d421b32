// pcie://…, pcie+sim: a Link over one PCIe function (systole/pcie_transport.hpp). Registers
// are 32-bit BAR0 accesses; memory goes through the BAR2 window in bursts that a root complex
// would emit (at most kMaxBurstBytes, never across a 4 KiB boundary); waiting polls STATUS.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <thread>

#include "regs/regmap.hpp"
#include "systole/pcie_transport.hpp"

namespace systole::pcie {
namespace {

class PcieLink final : public Link {
 public:
  PcieLink(std::unique_ptr<PcieFunction> function, std::string_view uri)
      : uri_(uri), function_(std::move(function)) {}

  std::string_view Uri() const override { return uri_; }

  std::uint32_t ReadRegister(std::uint32_t offset) override {
    CheckRegister(offset);
    return function_->Read32(offset);
  }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    CheckRegister(offset);
    function_->Write32(offset, value);
  }

  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    CheckWindow(address, bytes.size(), "write");
    Bursts(address, bytes.size(), [&](std::uint64_t at, std::size_t from, std::size_t n) {
      function_->WriteWindow(at, bytes.subspan(from, n));
    });
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    CheckWindow(address, bytes.size(), "read");
    Bursts(address, bytes.size(), [&](std::uint64_t at, std::size_t from, std::size_t n) {
      function_->ReadWindow(at, bytes.subspan(from, n));
    });
  }

  bool WaitForInterrupt(std::chrono::milliseconds timeout) override {
    static constexpr std::uint32_t kStatus = regs::OffsetOf("STATUS");
    static constexpr auto kBusy = regs::FieldOf("STATUS", "BUSY");
    static constexpr auto kLevel = regs::FieldOf("STATUS", "CMDQ_LEVEL");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      const std::uint32_t status = function_->Read32(kStatus);
      if (regs::Extract(status, kBusy) == 0 && regs::Extract(status, kLevel) == 0) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      function_->Pause();
    }
  }

 private:
  void CheckRegister(std::uint32_t offset) const {
    if (offset % 4 != 0 || offset + 4ull > function_->RegisterBytes()) {
      throw LinkError(uri_, fmt::format("register offset 0x{:x} is not a 32-bit register of the "
                                        "{}-byte BAR0", offset, function_->RegisterBytes()));
    }
  }
  void CheckWindow(std::uint64_t address, std::uint64_t length, const char* what) const {
    const std::uint64_t window = function_->WindowBytes();
    if (address > window || length > window - address) {
      throw LinkError(uri_, fmt::format("memory {} of {} bytes at 0x{:x} is outside the {}-byte "
                                        "device-memory window", what, length, address, window));
    }
  }
  template <class F>
  static void Bursts(std::uint64_t address, std::size_t length, F&& burst) {
    for (std::size_t done = 0; done < length;) {
      const std::uint64_t at = address + done;
      const std::uint64_t to_page = 4096 - at % 4096;
      const std::size_t n = static_cast<std::size_t>(
          std::min<std::uint64_t>({PcieFunction::kMaxBurstBytes, to_page, length - done}));
      burst(at, done, n);
      done += n;
    }
  }

  std::string uri_;
  std::unique_ptr<PcieFunction> function_;
};

template <class T>
T ParseHex(std::string_view text, std::size_t digits, std::string_view uri, std::string_view what) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.size() != digits || error != std::errc() || end != text.data() + text.size()) {
    throw LinkError(uri, fmt::format("{} '{}' is not {} hex digits (expected pcie://DDDD:BB:DD.F, "
                                     "e.g. pcie://0000:01:00.0)", what, text, digits));
  }
  return static_cast<T>(value);
}

}  // namespace

std::string PcieAddress::ToString() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

PcieAddress ParsePcieUri(std::string_view uri) {
  if (!uri.starts_with("pcie://")) throw LinkError(uri, "expected pcie://DDDD:BB:DD.F");
  const std::string_view rest = uri.substr(7);
  if (rest.size() != 12 || rest[4] != ':' || rest[7] != ':' || rest[10] != '.') {
    throw LinkError(uri, "expected pcie://DDDD:BB:DD.F (domain:bus:device.function in hex, "
                         "e.g. pcie://0000:01:00.0)");
  }
  PcieAddress a;
  a.domain = ParseHex<std::uint16_t>(rest.substr(0, 4), 4, uri, "domain");
  a.bus = ParseHex<std::uint8_t>(rest.substr(5, 2), 2, uri, "bus");
  a.device = ParseHex<std::uint8_t>(rest.substr(8, 2), 2, uri, "device");
  a.function = ParseHex<std::uint8_t>(rest.substr(11, 1), 1, uri, "function");
  if (a.device > 0x1f || a.function > 7) {
    throw LinkError(uri, "a PCIe device number is at most 1f and a function at most 7");
  }
  return a;
}

std::unique_ptr<Link> MakePcieLink(std::unique_ptr<PcieFunction> function, std::string_view uri) {
  return std::make_unique<PcieLink>(std::move(function), uri);
}

}  // namespace systole::pcie
