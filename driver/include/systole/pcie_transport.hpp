// The PCIe link's layers below Link: one PCIe function as the driver sees it — the register
// window in BAR0, device memory through a BAR2 window — and the two that exist: a board's
// sysfs resource files mmap'ed, and a shim onto the Verilated core's register bus and host
// memory port (pcie+sim). docs/HOST_LINKS.md describes the whole path.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "systole/link.hpp"

namespace systole::pcie {

// Accesses as a CPU makes them through mapped BARs: 32-bit register loads and stores, and
// memory-window copies of at most kMaxBurstBytes that do not cross a 4 KiB boundary (the
// largest posted write a typical root complex emits; the link cuts transfers to fit).
class PcieFunction {
 public:
  static constexpr std::uint64_t kMaxBurstBytes = 256;

  virtual ~PcieFunction() = default;
  PcieFunction() = default;
  PcieFunction(const PcieFunction&) = delete;
  PcieFunction& operator=(const PcieFunction&) = delete;

  virtual std::uint32_t Read32(std::uint32_t offset) = 0;
  virtual void Write32(std::uint32_t offset, std::uint32_t value) = 0;
  virtual void WriteWindow(std::uint64_t address, std::span<const std::uint8_t> bytes) = 0;
  virtual void ReadWindow(std::uint64_t address, std::span<std::uint8_t> bytes) = 0;
  virtual std::uint64_t RegisterBytes() const = 0;  // BAR0 size
  virtual std::uint64_t WindowBytes() const = 0;    // BAR2 size: the device memory reachable
  // Lets the device run while the host polls: a sleep on hardware, clock cycles in simulation.
  virtual void Pause() = 0;
};

// pcie://DDDD:BB:DD.F (domain, bus, device in hex, function 0-7).
struct PcieAddress {
  std::uint16_t domain = 0;
  std::uint8_t bus = 0;
  std::uint8_t device = 0;
  std::uint8_t function = 0;
  std::string ToString() const;  // "0000:01:00.0", as sysfs names it
};
PcieAddress ParsePcieUri(std::string_view uri);  // throws LinkError

// A board through sysfs: `root`/ADDRESS/resource0 (registers) and resource2 (device memory),
// mapped with mmap. Throws LinkError when the function, a file or the permission to map it is
// missing, a BAR is too small, or no Systole device answers at BAR0 (ID_MAGIC).
std::unique_ptr<PcieFunction> OpenSysfsFunction(const PcieAddress& address,
                                                const std::filesystem::path& root =
                                                    "/sys/bus/pci/devices");

// The Verilated core of `config` behind an MMIO/memory-window shim (the rtl device's register
// bus and host memory port). Throws LinkError when this build has no Verilated core for it.
std::unique_ptr<PcieFunction> OpenSimFunction(const Config& config);

// A Link over a PCIe function: registers through BAR0, memory in bursts through the window,
// waiting by polling STATUS (no interrupt delivery: that needs VFIO and MSI).
std::unique_ptr<Link> MakePcieLink(std::unique_ptr<PcieFunction> function, std::string_view uri);

}  // namespace systole::pcie
