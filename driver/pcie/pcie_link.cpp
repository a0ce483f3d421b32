// pcie://…, pcie+sim: a Link over one PCIe function (systole/pcie_transport.hpp). Registers
// are 32-bit BAR0 accesses. Memory transfers of kDmaThresholdBytes or more go through the DMA
// engine and one DMA buffer (allocated at the first such transfer, then reused) when the
// function has DMA; smaller ones, and all on a function without DMA, go through the BAR2
// window in bursts that a root complex would emit (at most kMaxBurstBytes, never across a
// 4 KiB boundary). Waiting polls STATUS.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <thread>

#include "arch/regs/regmap.hpp"
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
    if (UseDma(bytes.size())) return Dma(address, bytes.size(), false, bytes.data(), nullptr);
    Bursts(address, bytes.size(), [&](std::uint64_t at, std::size_t from, std::size_t n) {
      function_->WriteWindow(at, bytes.subspan(from, n));
    });
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    CheckWindow(address, bytes.size(), "read");
    if (UseDma(bytes.size())) return Dma(address, bytes.size(), true, nullptr, bytes.data());
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
  bool UseDma(std::size_t length) {
    if (length < kDmaThresholdBytes || no_dma_) return false;
    if (!buffer_) buffer_ = function_->AllocateDma(kDmaBufferBytes);
    no_dma_ = buffer_ == nullptr;
    return !no_dma_;
  }

  // The transfer in chunks of the buffer. The engine needs the host and device addresses in
  // the same lane of a 32-byte word, so each chunk starts at the device address's lane in the
  // (page-aligned) buffer.
  void Dma(std::uint64_t address, std::size_t length, bool to_host, const std::uint8_t* in,
           std::uint8_t* out) {
    const std::span<std::uint8_t> buffer = buffer_->Bytes();
    for (std::size_t done = 0; done < length;) {
      const std::uint64_t at = address + done;
      const std::size_t lane = at % 32;
      const std::size_t n = std::min(buffer.size() - 32, length - done);
      if (!to_host) std::memcpy(buffer.data() + lane, in + done, n);
      // The buffer's contents are visible to the device before the descriptor is (x86 orders
      // stores, other hosts need the fence).
      std::atomic_thread_fence(std::memory_order_seq_cst);
      const std::uint64_t bus = buffer_->BusAddress() + lane;
      function_->Write32(dma::kHostLo, static_cast<std::uint32_t>(bus));
      function_->Write32(dma::kHostHi, static_cast<std::uint32_t>(bus >> 32));
      function_->Write32(dma::kDeviceLo, static_cast<std::uint32_t>(at));
      function_->Write32(dma::kDeviceHi, static_cast<std::uint32_t>(at >> 32));
      function_->Write32(dma::kLength, static_cast<std::uint32_t>(n));
      function_->Write32(dma::kCtrl, dma::kCtrlStart | (to_host ? dma::kCtrlToHost : 0u));
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      std::uint32_t status = function_->Read32(dma::kStatus);
      for (; status & dma::kStatusBusy; status = function_->Read32(dma::kStatus)) {
        if (std::chrono::steady_clock::now() >= deadline) {
          throw LinkError(uri_, fmt::format("DMA of {} bytes at device 0x{:x} still busy after "
                                            "20 s", n, at));
        }
        function_->Pause();
      }
      if ((status & dma::kStatusDone) == 0 || (status & dma::kStatusError) != 0) {
        throw LinkError(uri_, fmt::format("DMA {} of {} bytes at device 0x{:x} (bus address "
                                          "0x{:x}) failed: {} (DMA STATUS 0x{:08x})",
                                          to_host ? "read" : "write", n, at, bus,
                                          dma::ErrorName(dma::ErrorCode(status)), status));
      }
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (to_host) std::memcpy(out + done, buffer.data() + lane, n);
      done += n;
    }
  }

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
  std::unique_ptr<DmaBuffer> buffer_;  // released before the function (declared after it)
  bool no_dma_ = false;
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

std::string dma::ErrorName(std::uint32_t code) {
  switch (code) {
    case 1: return "MISALIGNED (host and device addresses in different lanes)";
    case 2: return "RANGE (device range outside device memory)";
    case 3: return "HOST_READ (the host bus answered a read with an error)";
    case 4: return "HOST_WRITE (the host bus answered a write with an error)";
    default: return fmt::format("code {}", code);
  }
}

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
