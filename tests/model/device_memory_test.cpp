// Sparse device memory: zeros until written, page-crossing copies, overflow-safe bounds.
#include "sim/model/device_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace systole::model {
namespace {

TEST(DeviceMemory, UnwrittenMemoryReadsZeroAndCostsNothing) {
  const DeviceMemory memory(std::uint64_t{16} << 30);  // 16 GiB, like config v2
  std::vector<std::uint8_t> bytes(100, 0xAA);
  memory.Read((std::uint64_t{16} << 30) - 100, bytes);
  for (std::uint8_t byte : bytes) EXPECT_EQ(byte, 0);
  EXPECT_EQ(memory.AllocatedBytes(), 0u);
}

TEST(DeviceMemory, WritesCrossPagesAndReadBack) {
  DeviceMemory memory(1 << 20);
  std::vector<std::uint8_t> data(3 * DeviceMemory::kPageBytes / 2);
  std::iota(data.begin(), data.end(), std::uint8_t{1});
  const std::uint64_t address = DeviceMemory::kPageBytes - 7;
  memory.Write(address, data);
  std::vector<std::uint8_t> back(data.size() + 2);
  memory.Read(address - 1, back);
  EXPECT_EQ(back.front(), 0);
  EXPECT_EQ(back.back(), 0);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), back.begin() + 1));
  EXPECT_EQ(memory.AllocatedBytes(), 3 * DeviceMemory::kPageBytes);  // 7 bytes + 1 page + the rest
  memory.Clear();
  memory.Read(address - 1, back);
  for (std::uint8_t byte : back) EXPECT_EQ(byte, 0);
}

TEST(DeviceMemory, BoundsAreCheckedWithoutOverflow) {
  DeviceMemory memory(1 << 16);
  std::vector<std::uint8_t> four(4, 0x55);
  EXPECT_TRUE(memory.Contains(0, 1 << 16));
  EXPECT_TRUE(memory.Contains(1 << 16, 0));
  EXPECT_FALSE(memory.Contains(1, 1 << 16));
  EXPECT_FALSE(memory.Contains(std::numeric_limits<std::uint64_t>::max() - 1, 4));
  EXPECT_FALSE(memory.Contains(4, std::numeric_limits<std::uint64_t>::max() - 1));
  EXPECT_THROW(memory.Write((1 << 16) - 3, four), std::out_of_range);
  EXPECT_THROW(memory.Read(std::numeric_limits<std::uint64_t>::max() - 1, four),
               std::out_of_range);
  EXPECT_EQ(memory.AllocatedBytes(), 0u);  // the failed write wrote nothing
  try {
    memory.Write(0x10000, four);
    FAIL() << "expected out_of_range";
  } catch (const std::out_of_range& error) {
    EXPECT_NE(std::string(error.what()).find("0x10000"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("length 4"), std::string::npos) << error.what();
  }
  memory.Write((1 << 16) - 4, four);  // the last four bytes are fine
}

}  // namespace
}  // namespace systole::model
