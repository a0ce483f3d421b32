// pcie://DDDD:BB:DD.F on a real board: the function's sysfs resource files mapped with mmap —
// resource0 (BAR0) holds the register window, resource2 (BAR2) a window onto device memory.
// Only a root (or a user given the files by udev) may map them; every failure says which file
// and why. Mapping sysfs resources needs no driver bound to the function, and gives no DMA:
// that needs the IOMMU mapping of VFIO (pcie_vfio.cpp), chosen here when the function is bound
// to vfio-pci.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "arch/regs/regmap.hpp"
#include "systole/pcie_transport.hpp"

namespace systole::pcie {
namespace {

// One mapped resource file, unmapped and closed on destruction.
class Mapping {
 public:
  Mapping(const std::filesystem::path& path, std::string_view uri) {
    fd_ = ::open(path.c_str(), O_RDWR | O_SYNC | O_CLOEXEC);
    if (fd_ < 0) {
      const int error = errno;
      throw LinkError(uri, fmt::format("cannot open {}: {}{}", path.string(), std::strerror(error),
                                       error == EACCES || error == EPERM
                                           ? " (mapping a BAR needs root or a udev rule, "
                                             "docs/HOST_LINKS.md)"
                                           : ""));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || st.st_size <= 0) {
      ::close(fd_);
      throw LinkError(uri, fmt::format("{} is empty: the BAR is not implemented", path.string()));
    }
    bytes_ = static_cast<std::size_t>(st.st_size);
    void* base = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (base == MAP_FAILED) {
      const int error = errno;
      ::close(fd_);
      throw LinkError(uri, fmt::format("cannot map {}: {}", path.string(), std::strerror(error)));
    }
    base_ = static_cast<volatile std::uint8_t*>(base);
  }
  ~Mapping() {
    ::munmap(const_cast<std::uint8_t*>(base_), bytes_);
    ::close(fd_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  volatile std::uint8_t* base() const { return base_; }
  std::size_t bytes() const { return bytes_; }

 private:
  int fd_ = -1;
  volatile std::uint8_t* base_ = nullptr;
  std::size_t bytes_ = 0;
};

class SysfsFunction final : public PcieFunction {
 public:
  SysfsFunction(const std::filesystem::path& dir, std::string_view uri)
      : registers_(dir / "resource0", uri), window_(dir / "resource2", uri) {
    if (registers_.bytes() < regs::kWindowBytes) {
      throw LinkError(uri, fmt::format("{}: BAR0 has {} bytes, less than the {}-byte register "
                                       "window", dir.string(), registers_.bytes(),
                                       regs::kWindowBytes));
    }
    const std::uint32_t magic = Read32(regs::OffsetOf("ID_MAGIC"));
    if (magic != regs::kMagic) {
      throw LinkError(uri, fmt::format("{}: ID_MAGIC reads 0x{:08x}, not 0x{:08x}: no Systole "
                                       "device in BAR0", dir.string(), magic, regs::kMagic));
    }
  }

  // Single aligned 32-bit accesses through volatile pointers: one MMIO read or write each.
  std::uint32_t Read32(std::uint32_t offset) override {
    return *reinterpret_cast<volatile std::uint32_t*>(registers_.base() + offset);
  }
  void Write32(std::uint32_t offset, std::uint32_t value) override {
    *reinterpret_cast<volatile std::uint32_t*>(registers_.base() + offset) = value;
  }
  // Byte copies through volatile pointers: the compiler may neither merge nor elide them, and
  // the write-combining of the mapping turns them into bursts.
  void WriteWindow(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    volatile std::uint8_t* to = window_.base() + address;
    for (std::size_t i = 0; i < bytes.size(); ++i) to[i] = bytes[i];
  }
  void ReadWindow(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    const volatile std::uint8_t* from = window_.base() + address;
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = from[i];
  }
  std::uint64_t RegisterBytes() const override { return registers_.bytes(); }
  std::uint64_t WindowBytes() const override { return window_.bytes(); }
  void Pause() override { std::this_thread::sleep_for(std::chrono::microseconds(20)); }
  std::string Access() const override {
    return "sysfs resource files (registers and window only: no DMA unless the function is "
           "bound to vfio-pci)";
  }

 private:
  Mapping registers_;
  Mapping window_;
};

}  // namespace

std::unique_ptr<PcieFunction> OpenResourceFunction(const PcieAddress& address,
                                                   const std::filesystem::path& root) {
  return std::make_unique<SysfsFunction>(root / address.ToString(),
                                         "pcie://" + address.ToString());
}

std::unique_ptr<PcieFunction> OpenSysfsFunction(const PcieAddress& address,
                                                const std::filesystem::path& root,
                                                const std::filesystem::path& vfio_root) {
  const std::string uri = "pcie://" + address.ToString();
  const std::filesystem::path dir = root / address.ToString();
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throw LinkError(uri, fmt::format("no PCIe function {}: {} does not exist (lspci -D lists the "
                                     "functions)", address.ToString(), dir.string()));
  }
  // `driver` links to the bound driver's directory, absent when none is bound.
  const std::filesystem::path driver = std::filesystem::read_symlink(dir / "driver", error);
  if (!error && driver.filename() == "vfio-pci") return OpenVfioFunction(address, root, vfio_root);
  return OpenResourceFunction(address, root);
}

}  // namespace systole::pcie
