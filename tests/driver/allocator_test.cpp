// The first-fit device-memory allocator and range coverage.
#include <gtest/gtest.h>

#include "systole/memory_allocator.hpp"

namespace {

using systole::Covers;
using systole::MemoryAllocator;
using systole::RangeMap;

TEST(Allocator, FirstFitWithAlignment) {
  MemoryAllocator allocator(4096);
  EXPECT_EQ(allocator.Allocate(10, 64), 0u);
  EXPECT_EQ(allocator.Allocate(100, 64), 64u);   // 10 bytes take one 64-byte unit
  EXPECT_EQ(allocator.Allocate(1, 1024), 1024u);
  ASSERT_EQ(allocator.Free(64), 128u);
  EXPECT_EQ(allocator.Allocate(64, 64), 64u);    // the hole is reused
  EXPECT_EQ(allocator.Allocate(5000, 64), std::nullopt);
  EXPECT_EQ(allocator.Allocate(0, 64), std::nullopt);
  EXPECT_EQ(allocator.Free(3), std::nullopt);
}

TEST(Allocator, FixedAddresses) {
  MemoryAllocator allocator(4096);
  EXPECT_TRUE(allocator.AllocateAt(1024, 100));
  EXPECT_FALSE(allocator.AllocateAt(1024 + 64, 1));  // inside the first
  EXPECT_FALSE(allocator.AllocateAt(960, 65));       // runs into it
  EXPECT_TRUE(allocator.AllocateAt(960, 64));
  EXPECT_FALSE(allocator.AllocateAt(100, 64));       // misaligned
  EXPECT_FALSE(allocator.AllocateAt(4032, 128));     // past the end
  EXPECT_FALSE(allocator.AllocateAt(~std::uint64_t{63}, 64));
  EXPECT_EQ(allocator.Allocate(64, 64), 0u);
}

TEST(Allocator, CoversAcrossAdjacentRangesOnly) {
  const RangeMap ranges = {{0, 64}, {64, 128}, {256, 320}};
  EXPECT_TRUE(Covers(ranges, 0, 128));
  EXPECT_TRUE(Covers(ranges, 100, 28));
  EXPECT_FALSE(Covers(ranges, 100, 29));
  EXPECT_FALSE(Covers(ranges, 200, 60));
  EXPECT_TRUE(Covers(ranges, 256, 64));
  EXPECT_FALSE(Covers(ranges, 256, 65));
  EXPECT_TRUE(Covers(ranges, 5000, 0));
  EXPECT_FALSE(Covers(ranges, ~std::uint64_t{0}, 2));
}

}  // namespace
