// pcie://DDDD:BB:DD.F through VFIO, when the function is bound to vfio-pci: the only way for a
// user-space driver to give the device DMA buffers, since the IOMMU mapping is what makes them
// reachable (and keeps the device away from the rest of memory). The sequence is the kernel's
// (Documentation/driver-api/vfio.rst): container, group, type1 IOMMU, device fd, regions.
// Every fd and mapping has an RAII owner; every failure names the device and the cause.
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/vfio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "arch/regs/regmap.hpp"
#include "systole/pcie_transport.hpp"

namespace systole::pcie {
namespace {

std::string Errno(int error) { return std::strerror(error); }

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);  // the old fd closes with `other`
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// One mmap'ed region, unmapped on destruction.
class Region {
 public:
  Region(void* base, std::size_t bytes) : base_(static_cast<std::uint8_t*>(base)), bytes_(bytes) {}
  ~Region() {
    if (base_ != nullptr) ::munmap(base_, bytes_);
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  volatile std::uint8_t* base() const { return base_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::uint8_t* base_;
  std::size_t bytes_;
};

// What the container and the device share with DMA buffers: the container fd (map/unmap) and
// the IOVA allocator. Buffers keep it alive after the function is gone.
struct Iommu {
  Fd container;
  Fd group;
  std::string uri;
  IovaAllocator iovas{1ull << 32};
};

class VfioBuffer final : public DmaBuffer {
 public:
  VfioBuffer(std::shared_ptr<Iommu> iommu, std::size_t bytes)
      : iommu_(std::move(iommu)),
        bytes_((bytes + IovaAllocator::kPage - 1) / IovaAllocator::kPage * IovaAllocator::kPage),
        memory_(Allocate(bytes_, iommu_->uri), bytes_) {
    iova_ = iommu_->iovas.Allocate(bytes_);
    vfio_iommu_type1_dma_map map{};
    map.argsz = sizeof(map);
    map.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
    map.vaddr = reinterpret_cast<std::uint64_t>(memory_.base());
    map.iova = iova_;
    map.size = bytes_;
    if (::ioctl(iommu_->container.get(), VFIO_IOMMU_MAP_DMA, &map) != 0) {
      const int error = errno;
      iommu_->iovas.Free(iova_);
      throw LinkError(iommu_->uri, fmt::format("VFIO_IOMMU_MAP_DMA of {} bytes at IOVA 0x{:x} "
                                               "failed: {}{}", bytes_, iova_, Errno(error),
                                               error == ENOMEM ? " (the locked-memory limit, "
                                               "ulimit -l, is too low)" : ""));
    }
  }
  ~VfioBuffer() override {
    vfio_iommu_type1_dma_unmap unmap{};
    unmap.argsz = sizeof(unmap);
    unmap.iova = iova_;
    unmap.size = bytes_;
    ::ioctl(iommu_->container.get(), VFIO_IOMMU_UNMAP_DMA, &unmap);
    iommu_->iovas.Free(iova_);
  }
  std::span<std::uint8_t> Bytes() override {
    return {const_cast<std::uint8_t*>(memory_.base()), bytes_};
  }
  std::uint64_t BusAddress() const override { return iova_; }

 private:
  // Page-aligned, populated memory (VFIO pins it when mapping).
  static void* Allocate(std::size_t bytes, const std::string& uri) {
    void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (base == MAP_FAILED) {
      throw LinkError(uri, fmt::format("cannot allocate a {}-byte DMA buffer: {}", bytes,
                                       Errno(errno)));
    }
    return base;
  }

  std::shared_ptr<Iommu> iommu_;
  std::size_t bytes_;
  Region memory_;
  std::uint64_t iova_ = 0;
};

class VfioFunction final : public PcieFunction {
 public:
  VfioFunction(std::shared_ptr<Iommu> iommu, Fd device)
      : iommu_(std::move(iommu)), device_(std::move(device)),
        bar0_(MapBar(VFIO_PCI_BAR0_REGION_INDEX, "BAR0")),
        bar2_(MapBar(VFIO_PCI_BAR2_REGION_INDEX, "BAR2")) {
    if (bar0_->bytes() < regs::kWindowBytes) {
      throw LinkError(iommu_->uri, fmt::format("BAR0 has {} bytes, less than the {}-byte "
                                               "register window", bar0_->bytes(),
                                               regs::kWindowBytes));
    }
    const std::uint32_t magic = Read32(regs::OffsetOf("ID_MAGIC"));
    if (magic != regs::kMagic) {
      throw LinkError(iommu_->uri, fmt::format("ID_MAGIC reads 0x{:08x}, not 0x{:08x}: no Systole "
                                               "device in BAR0", magic, regs::kMagic));
    }
    EnableBusMastering();
  }

  std::uint32_t Read32(std::uint32_t offset) override {
    return *reinterpret_cast<volatile std::uint32_t*>(bar0_->base() + offset);
  }
  void Write32(std::uint32_t offset, std::uint32_t value) override {
    *reinterpret_cast<volatile std::uint32_t*>(bar0_->base() + offset) = value;
  }
  void WriteWindow(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    volatile std::uint8_t* to = bar2_->base() + address;
    for (std::size_t i = 0; i < bytes.size(); ++i) to[i] = bytes[i];
  }
  void ReadWindow(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    const volatile std::uint8_t* from = bar2_->base() + address;
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = from[i];
  }
  std::uint64_t RegisterBytes() const override { return bar0_->bytes(); }
  std::uint64_t WindowBytes() const override { return bar2_->bytes(); }
  void Pause() override { std::this_thread::sleep_for(std::chrono::microseconds(20)); }
  std::unique_ptr<DmaBuffer> AllocateDma(std::size_t bytes) override {
    return std::make_unique<VfioBuffer>(iommu_, bytes);
  }
  std::string Access() const override { return "vfio (BARs mapped, DMA through the IOMMU)"; }

 private:
  std::unique_ptr<Region> MapBar(std::uint32_t index, const char* name) {
    vfio_region_info info{};
    info.argsz = sizeof(info);
    info.index = index;
    if (::ioctl(device_.get(), VFIO_DEVICE_GET_REGION_INFO, &info) != 0) {
      throw LinkError(iommu_->uri, fmt::format("VFIO_DEVICE_GET_REGION_INFO for {} failed: {}",
                                               name, Errno(errno)));
    }
    if (info.size == 0) throw LinkError(iommu_->uri, fmt::format("{} is not implemented", name));
    if ((info.flags & VFIO_REGION_INFO_FLAG_MMAP) == 0) {
      throw LinkError(iommu_->uri, fmt::format("{} cannot be mmap'ed through VFIO", name));
    }
    void* base = ::mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, device_.get(),
                        static_cast<off_t>(info.offset));
    if (base == MAP_FAILED) {
      throw LinkError(iommu_->uri, fmt::format("cannot map {} ({} bytes): {}", name, info.size,
                                               Errno(errno)));
    }
    return std::make_unique<Region>(base, info.size);
  }

  // The engine masters the bus: PCI_COMMAND (config offset 4) bit 2, off until a driver sets it.
  void EnableBusMastering() {
    vfio_region_info info{};
    info.argsz = sizeof(info);
    info.index = VFIO_PCI_CONFIG_REGION_INDEX;
    std::uint16_t command = 0;
    if (::ioctl(device_.get(), VFIO_DEVICE_GET_REGION_INFO, &info) != 0 ||
        ::pread(device_.get(), &command, 2, static_cast<off_t>(info.offset + 4)) != 2) {
      throw LinkError(iommu_->uri, fmt::format("cannot read the PCI command register: {}",
                                               Errno(errno)));
    }
    command |= 0x4;
    if (::pwrite(device_.get(), &command, 2, static_cast<off_t>(info.offset + 4)) != 2) {
      throw LinkError(iommu_->uri, fmt::format("cannot enable bus mastering: {}", Errno(errno)));
    }
  }

  std::shared_ptr<Iommu> iommu_;
  Fd device_;
  std::unique_ptr<Region> bar0_, bar2_;
};

Fd OpenOrThrow(const std::filesystem::path& path, const std::string& uri, const char* hint) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    throw LinkError(uri, fmt::format("cannot open {}: {}{}", path.string(), Errno(error),
                                     error == EACCES || error == EPERM
                                         ? " (VFIO needs root, or a udev rule giving the user "
                                           "/dev/vfio/*, docs/HOST_LINKS.md)"
                                         : hint));
  }
  return Fd(fd);
}

}  // namespace

std::unique_ptr<PcieFunction> OpenVfioFunction(const PcieAddress& address,
                                               const std::filesystem::path& root,
                                               const std::filesystem::path& vfio_root) {
  auto iommu = std::make_shared<Iommu>();
  iommu->uri = "pcie://" + address.ToString();
  const std::string& uri = iommu->uri;
  std::error_code error;
  const auto group_link = root / address.ToString() / "iommu_group";
  const std::filesystem::path group = std::filesystem::read_symlink(group_link, error);
  if (error) {
    throw LinkError(uri, fmt::format("{} is bound to vfio-pci but has no IOMMU group ({}: {}): "
                                     "enable the IOMMU (intel_iommu=on or amd_iommu=on)",
                                     address.ToString(), group_link.string(), error.message()));
  }
  iommu->container = OpenOrThrow(vfio_root / "vfio", uri, " (is the vfio-pci module loaded?)");
  const int api = ::ioctl(iommu->container.get(), VFIO_GET_API_VERSION);
  if (api != VFIO_API_VERSION) {
    throw LinkError(uri, fmt::format("{} is not a VFIO container (VFIO_GET_API_VERSION: {})",
                                     (vfio_root / "vfio").string(),
                                     api < 0 ? Errno(errno) : fmt::format("version {}", api)));
  }
  if (::ioctl(iommu->container.get(), VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) <= 0) {
    throw LinkError(uri, "the VFIO container does not support the type1 IOMMU");
  }
  iommu->group = OpenOrThrow(vfio_root / group.filename(), uri,
                             " (the IOMMU group's VFIO device is missing)");
  vfio_group_status status{};
  status.argsz = sizeof(status);
  if (::ioctl(iommu->group.get(), VFIO_GROUP_GET_STATUS, &status) != 0) {
    throw LinkError(uri, fmt::format("VFIO_GROUP_GET_STATUS on IOMMU group {} failed: {}",
                                     group.filename().string(), Errno(errno)));
  }
  if ((status.flags & VFIO_GROUP_FLAGS_VIABLE) == 0) {
    throw LinkError(uri, fmt::format("IOMMU group {} is not viable: every device in it must be "
                                     "bound to vfio-pci (ls {}/devices)",
                                     group.filename().string(), group_link.string()));
  }
  const int container = iommu->container.get();
  if (::ioctl(iommu->group.get(), VFIO_GROUP_SET_CONTAINER, &container) != 0 ||
      ::ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU) != 0) {
    throw LinkError(uri, fmt::format("cannot attach IOMMU group {} to a type1 container: {}",
                                     group.filename().string(), Errno(errno)));
  }
  const int device = ::ioctl(iommu->group.get(), VFIO_GROUP_GET_DEVICE_FD,
                             address.ToString().c_str());
  if (device < 0) {
    throw LinkError(uri, fmt::format("VFIO_GROUP_GET_DEVICE_FD for {} failed: {}",
                                     address.ToString(), Errno(errno)));
  }
  return std::make_unique<VfioFunction>(std::move(iommu), Fd(device));
}

}  // namespace systole::pcie
