// The PCIe link's layers below Link: one PCIe function as the driver sees it — the register
// window in BAR0 (with the DMA engine's descriptor registers at dma::kBase), device memory
// through a BAR2 window, and DMA buffers in host memory where the function has an IOMMU
// mapping — and those that exist: a board through VFIO (DMA) or its sysfs resource files
// (window only), and the Verilated rtl/host/systole_pcie_top with a simulated host memory
// (pcie+sim). docs/HOST_LINKS.md describes the whole path.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "arch/config/config.hpp"
#include "systole/link.hpp"

namespace systole::pcie {

// The DMA engine's registers in BAR0 (rtl/host/systole_host_dma_regs.sv; docs/HOST_LINKS.md).
namespace dma {
inline constexpr std::uint32_t kBase = 0x800;
inline constexpr std::uint32_t kHostLo = kBase + 0x00, kHostHi = kBase + 0x04,
                               kDeviceLo = kBase + 0x08, kDeviceHi = kBase + 0x0C,
                               kLength = kBase + 0x10, kCtrl = kBase + 0x14,
                               kStatus = kBase + 0x18, kCount = kBase + 0x1C,
                               kBytes = kBase + 0x20, kCycles = kBase + 0x24;
inline constexpr std::uint32_t kCtrlStart = 1, kCtrlToHost = 2, kCtrlIrqEnable = 4;
inline constexpr std::uint32_t kStatusBusy = 1, kStatusDone = 2, kStatusError = 4;
inline constexpr std::uint32_t ErrorCode(std::uint32_t status) { return (status >> 4) & 0xf; }
// "MISALIGNED (…)", "RANGE (…)", "HOST_READ (…)", "HOST_WRITE (…)" with what each means, or
// "code N".
std::string ErrorName(std::uint32_t code);
}  // namespace dma

// Host memory the device reaches by DMA: pinned, and mapped for the device (an IOVA behind the
// IOMMU). Unmapped and released on destruction.
class DmaBuffer {
 public:
  virtual ~DmaBuffer() = default;
  DmaBuffer() = default;
  DmaBuffer(const DmaBuffer&) = delete;
  DmaBuffer& operator=(const DmaBuffer&) = delete;
  virtual std::span<std::uint8_t> Bytes() = 0;     // what the CPU reads and writes
  virtual std::uint64_t BusAddress() const = 0;    // what the engine is given
};

// First-fit allocator of page-aligned I/O virtual addresses from `base`: the IOVAs of DMA
// buffers under VFIO's type1 IOMMU and in pcie+sim's host memory.
class IovaAllocator {
 public:
  static constexpr std::uint64_t kPage = 4096;
  explicit IovaAllocator(std::uint64_t base) : base_(base) {}
  std::uint64_t Allocate(std::uint64_t bytes) {
    // Whole pages, at least one: two buffers never share a page (nor an IOVA).
    const std::uint64_t size = std::max<std::uint64_t>(kPage, (bytes + kPage - 1) / kPage * kPage);
    std::uint64_t at = base_;
    for (const auto& [iova, used] : used_) {
      if (at + size <= iova) break;
      at = std::max(at, iova + used);
    }
    used_.emplace(at, size);
    return at;
  }
  void Free(std::uint64_t iova) { used_.erase(iova); }

 private:
  std::uint64_t base_;
  std::map<std::uint64_t, std::uint64_t> used_;  // IOVA → bytes (whole pages)
};

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
  // A DMA buffer of `bytes` bytes, or nullptr when the function cannot DMA (sysfs: no IOMMU
  // mapping). Throws LinkError when the function can but mapping the buffer fails.
  virtual std::unique_ptr<DmaBuffer> AllocateDma(std::size_t bytes) {
    (void)bytes;
    return nullptr;
  }
  // How the function is reached, for messages: "vfio (...)", "sysfs resource files (...)".
  virtual std::string Access() const = 0;
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

// A board found through sysfs (`root`/ADDRESS): through VFIO when the function is bound to
// vfio-pci (OpenVfioFunction: registers, window and DMA), through its resource files otherwise
// (OpenResourceFunction: registers and window only, no DMA). Throws LinkError when the
// function does not exist.
std::unique_ptr<PcieFunction> OpenSysfsFunction(const PcieAddress& address,
                                                const std::filesystem::path& root =
                                                    "/sys/bus/pci/devices",
                                                const std::filesystem::path& vfio_root =
                                                    "/dev/vfio");
// resource0 (registers) and resource2 (device memory) mapped with mmap. Throws LinkError when
// a file or the permission to map it is missing, a BAR is too small, or no Systole device
// answers at BAR0 (ID_MAGIC).
std::unique_ptr<PcieFunction> OpenResourceFunction(const PcieAddress& address,
                                                   const std::filesystem::path& root);
// VFIO: the container `vfio_root`/vfio, the function's IOMMU group `vfio_root`/N (N from
// `root`/ADDRESS/iommu_group), type1 IOMMU, the device fd; BAR0 and BAR2 mmap'ed, bus
// mastering enabled, DMA buffers mapped with VFIO_IOMMU_MAP_DMA. Throws LinkError naming the
// device and the cause (no IOMMU group, container or group missing, permission, group not
// viable, a BAR not mappable, ID_MAGIC wrong).
std::unique_ptr<PcieFunction> OpenVfioFunction(const PcieAddress& address,
                                               const std::filesystem::path& root,
                                               const std::filesystem::path& vfio_root);

// The simulated function, pcie+sim (the Verilated PCIe top): OpenSimFunction in
// driver/sim/sim_links.hpp.

// A Link over a PCIe function: registers through BAR0; memory transfers of at least
// kDmaThresholdBytes through the DMA engine when the function has DMA buffers, in bursts
// through the BAR2 window otherwise; waiting by polling STATUS (no MSI delivery yet).
inline constexpr std::size_t kDmaThresholdBytes = 1024;
inline constexpr std::size_t kDmaBufferBytes = 64 * 1024;
std::unique_ptr<Link> MakePcieLink(std::unique_ptr<PcieFunction> function, std::string_view uri);

}  // namespace systole::pcie
