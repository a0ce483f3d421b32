// Choosing VFIO or the resource files for pcie://, and VFIO's errors, against fake sysfs and
// /dev/vfio trees (symlinks and plain files: what can be checked without an IOMMU and a
// board). A real VFIO container answers ioctls that no file can, so the path past
// VFIO_GET_API_VERSION is exercised only on a machine with a bound board.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "arch/regs/regmap.hpp"
#include "systole/pcie_transport.hpp"

namespace {

using namespace systole;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class FakeVfio : public ::testing::Test {
 protected:
  FakeVfio()
      : root_(fs::temp_directory_path() / ("systole_vfio_" + std::to_string(getpid()))),
        sysfs_(root_ / "sys/bus/pci/devices"), dev_(root_ / "dev/vfio") {
    fs::create_directories(Dir());
    fs::create_directories(dev_);
    fs::create_directories(root_ / "sys/bus/pci/drivers/vfio-pci");
    fs::create_directories(root_ / "sys/bus/pci/drivers/nvme");
    fs::create_directories(root_ / "sys/kernel/iommu_groups/7");
    std::vector<char> bar0(4096);
    std::memcpy(bar0.data(), &regs::kMagic, 4);
    std::ofstream(Dir() / "resource0", std::ios::binary).write(bar0.data(), 4096);
    std::ofstream(Dir() / "resource2", std::ios::binary).write(bar0.data(), 4096);
  }
  ~FakeVfio() override { fs::remove_all(root_); }
  fs::path Dir() const { return sysfs_ / "0000:02:00.0"; }
  void Bind(const char* driver) {
    fs::create_directory_symlink(root_ / "sys/bus/pci/drivers" / driver, Dir() / "driver");
  }
  void Group() {
    fs::create_directory_symlink(root_ / "sys/kernel/iommu_groups/7", Dir() / "iommu_group");
  }
  std::unique_ptr<pcie::PcieFunction> Open(const char* address = "0000:02:00.0") {
    return pcie::OpenSysfsFunction(pcie::ParsePcieUri(std::string("pcie://") + address), sysfs_,
                                   dev_);
  }
  std::string ErrorOf(const char* address = "0000:02:00.0") {
    try {
      Open(address);
    } catch (const LinkError& error) {
      return error.what();
    }
    ADD_FAILURE() << "no error";
    return "";
  }
  fs::path root_, sysfs_, dev_;
};

TEST_F(FakeVfio, UnboundOrOtherDriverUsesTheResourceFilesWithoutDma) {
  auto function = Open();
  EXPECT_THAT(function->Access(), HasSubstr("no DMA unless the function is bound to vfio-pci"));
  EXPECT_EQ(function->AllocateDma(4096), nullptr);
  function.reset();
  Bind("nvme");
  EXPECT_THAT(Open()->Access(), HasSubstr("sysfs resource files"));
}

TEST_F(FakeVfio, NoSuchFunction) {
  EXPECT_THAT(ErrorOf("0000:09:00.0"), HasSubstr("no PCIe function 0000:09:00.0"));
}

TEST_F(FakeVfio, BoundWithoutIommuGroup) {
  Bind("vfio-pci");
  const std::string error = ErrorOf();
  EXPECT_THAT(error, HasSubstr("pcie://0000:02:00.0"));
  EXPECT_THAT(error, HasSubstr("bound to vfio-pci but has no IOMMU group"));
  EXPECT_THAT(error, HasSubstr("intel_iommu=on"));
}

TEST_F(FakeVfio, NoVfioContainer) {
  Bind("vfio-pci");
  Group();
  EXPECT_THAT(ErrorOf(), HasSubstr((dev_ / "vfio").string() +
                                   ": No such file or directory (is the vfio-pci module loaded?)"));
}

TEST_F(FakeVfio, ContainerThatIsNotVfio) {
  Bind("vfio-pci");
  Group();
  std::ofstream(dev_ / "vfio") << "not a device";
  EXPECT_THAT(ErrorOf(), HasSubstr("is not a VFIO container (VFIO_GET_API_VERSION: "
                                   "Inappropriate ioctl for device)"));
}

TEST_F(FakeVfio, PermissionDeniedSaysWhatToDo) {
  if (geteuid() == 0) GTEST_SKIP() << "root opens files whatever their mode";
  Bind("vfio-pci");
  Group();
  std::ofstream(dev_ / "vfio") << "";
  fs::permissions(dev_ / "vfio", fs::perms::none);
  EXPECT_THAT(ErrorOf(), HasSubstr("Permission denied (VFIO needs root"));
}

TEST(IovaAllocator, FirstFitOfWholePages) {
  pcie::IovaAllocator iovas(1ull << 32);
  const std::uint64_t a = iovas.Allocate(1);
  const std::uint64_t b = iovas.Allocate(8193);  // three pages
  const std::uint64_t c = iovas.Allocate(4096);
  EXPECT_EQ(a, 1ull << 32);
  EXPECT_EQ(b, a + 4096);
  EXPECT_EQ(c, b + 3 * 4096);
  iovas.Free(b);
  EXPECT_EQ(iovas.Allocate(2 * 4096), b);       // fits in the hole
  EXPECT_EQ(iovas.Allocate(2 * 4096), c + 4096);  // the hole's last page is too small
  EXPECT_EQ(iovas.Allocate(4096), b + 2 * 4096);
  const std::uint64_t empty = iovas.Allocate(0);  // still a page of its own
  EXPECT_EQ(iovas.Allocate(1), empty + 4096);
}

}  // namespace
