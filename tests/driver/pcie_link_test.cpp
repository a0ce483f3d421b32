// The PCIe link: URIs, the sysfs function against a fake sysfs tree of plain files (mmap works
// on them as on BARs), its errors, and the MMIO shim onto the Verilated core (pcie+sim).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "arch/regs/regmap.hpp"
#include "systole/pcie_transport.hpp"

namespace {

using namespace systole;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string ErrorOf(auto&& open) {
  try {
    open();
  } catch (const LinkError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(PcieUri, ParsesAndRefuses) {
  const auto a = pcie::ParsePcieUri("pcie://0000:3b:00.1");
  EXPECT_EQ(a.bus, 0x3b);
  EXPECT_EQ(a.function, 1);
  EXPECT_EQ(a.ToString(), "0000:3b:00.1");
  for (const char* bad : {"pcie://0000:3b:00", "pcie://00:3b:00.1", "pcie://0000:3g:00.1",
                          "pcie://0000:3b:20.0", "pcie://0000:3b:00.8"}) {
    EXPECT_THAT(ErrorOf([&] { pcie::ParsePcieUri(bad); }), HasSubstr(bad));
  }
  EXPECT_THAT(ErrorOf([] { OpenLink("pcie://0000:ff:1f.7", LoadConfig("tiny")); }),
              HasSubstr("/sys/bus/pci/devices/0000:ff:1f.7 does not exist"));
}

// A function directory with resource0 (registers) and resource2 (memory) as plain files.
class FakeSysfs : public ::testing::Test {
 protected:
  FakeSysfs() : root_(fs::temp_directory_path() / ("systole_sysfs_" + std::to_string(getpid()))) {
    fs::create_directories(Dir());
    std::vector<std::uint8_t> bar0(4096);
    std::memcpy(bar0.data(), &regs::kMagic, 4);  // ID_MAGIC at offset 0
    WriteFile("resource0", bar0);
    WriteFile("resource2", std::vector<std::uint8_t>(65536));
  }
  ~FakeSysfs() override { fs::remove_all(root_); }
  fs::path Dir() const { return root_ / "0000:01:00.0"; }
  void WriteFile(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(Dir() / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  std::vector<std::uint8_t> ReadFile(const std::string& name) {
    std::ifstream in(Dir() / name, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  std::unique_ptr<Link> Open() {
    return pcie::MakePcieLink(pcie::OpenSysfsFunction(pcie::ParsePcieUri(kUri), root_), kUri);
  }
  static constexpr const char* kUri = "pcie://0000:01:00.0";
  fs::path root_;
};

TEST_F(FakeSysfs, RegistersAndMemoryLandInTheBars) {
  auto link = Open();
  EXPECT_EQ(link->ReadRegister(0), regs::kMagic);
  link->WriteRegister(0x80, 0xCAFEF00D);
  std::vector<std::uint8_t> data(5000);
  std::iota(data.begin(), data.end(), std::uint8_t{1});
  link->WriteMemory(4093, data);  // crosses 4 KiB boundaries: cut into bursts
  std::vector<std::uint8_t> back(data.size());
  link->ReadMemory(4093, back);
  EXPECT_EQ(back, data);
  link.reset();  // unmapped: the files hold what the device would have seen
  const auto bar0 = ReadFile("resource0");
  std::uint32_t value = 0;
  std::memcpy(&value, bar0.data() + 0x80, 4);
  EXPECT_EQ(value, 0xCAFEF00Du);
  const auto bar2 = ReadFile("resource2");
  EXPECT_TRUE(std::equal(data.begin(), data.end(), bar2.begin() + 4093));
}

TEST_F(FakeSysfs, AccessesOutsideTheBarsAreRefused) {
  auto link = Open();
  std::vector<std::uint8_t> bytes(16);
  EXPECT_THAT(ErrorOf([&] { link->ReadMemory(65536 - 8, bytes); }),
              HasSubstr("outside the 65536-byte device-memory window"));
  EXPECT_THAT(ErrorOf([&] { link->ReadRegister(4096); }), HasSubstr("0x1000"));
  EXPECT_THAT(ErrorOf([&] { link->WriteRegister(0x82, 1); }), HasSubstr("not a 32-bit register"));
}

TEST_F(FakeSysfs, MissingOrWrongBarsAreClearErrors) {
  fs::remove(Dir() / "resource2");
  EXPECT_THAT(ErrorOf([&] { Open(); }), HasSubstr("resource2: No such file or directory"));
  WriteFile("resource2", std::vector<std::uint8_t>(4096));
  WriteFile("resource0", std::vector<std::uint8_t>(4096));
  EXPECT_THAT(ErrorOf([&] { Open(); }), HasSubstr("ID_MAGIC reads 0x00000000"));
  WriteFile("resource0", std::vector<std::uint8_t>(64));
  EXPECT_THAT(ErrorOf([&] { Open(); }), HasSubstr("BAR0 has 64 bytes"));
}

TEST_F(FakeSysfs, PermissionDeniedSaysWhatToDo) {
  if (geteuid() == 0) GTEST_SKIP() << "root opens files whatever their mode";
  fs::permissions(Dir() / "resource0", fs::perms::none);
  EXPECT_THAT(ErrorOf([&] { Open(); }), HasSubstr("Permission denied (mapping a BAR needs root"));
}

TEST(PcieSim, RegistersAndMemoryThroughTheShim) {
  auto link = OpenLink("pcie+sim", LoadConfig("tiny"));
  EXPECT_EQ(link->ReadRegister(regs::OffsetOf("ID_MAGIC")), regs::kMagic);
  std::vector<std::uint8_t> data(9001);
  std::iota(data.begin(), data.end(), std::uint8_t{3});
  link->WriteMemory(0x0FF1, data);
  std::vector<std::uint8_t> back(data.size());
  link->ReadMemory(0x0FF1, back);
  EXPECT_EQ(back, data);
  EXPECT_TRUE(link->WaitForInterrupt(std::chrono::milliseconds(100)));
  std::vector<std::uint8_t> bytes(16);
  EXPECT_THAT(ErrorOf([&] { link->ReadMemory(LoadConfig("tiny").memory_bytes - 8, bytes); }),
              HasSubstr("outside"));
}

}  // namespace
