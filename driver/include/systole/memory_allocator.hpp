// Device-memory allocation: a first-fit allocator over [0, memory bytes), shared by links that
// own their device (allocation is bookkeeping on the host) and by the device server (which
// also records which client owns what).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace systole {

// Allocations start and end on multiples of this, so a program relocated between allocations
// keeps every address's alignment (instructions need 32, DMA elements at most 4).
inline constexpr std::uint64_t kAllocationAlignment = 64;

// Disjoint [start, end) ranges keyed by start.
using RangeMap = std::map<std::uint64_t, std::uint64_t>;

// True when every byte of [address, address + bytes) lies in one of `ranges` (adjacent ranges
// together count). An empty range is covered. No sum can overflow.
bool Covers(const RangeMap& ranges, std::uint64_t address, std::uint64_t bytes);

class MemoryAllocator {
 public:
  explicit MemoryAllocator(std::uint64_t memory_bytes) : memory_bytes_(memory_bytes) {}

  // First fit: the lowest address that is a multiple of `alignment` (rounded up to a multiple
  // of kAllocationAlignment) with `bytes` free bytes after it. nullopt when nothing fits or
  // bytes is 0.
  std::optional<std::uint64_t> Allocate(std::uint64_t bytes, std::uint64_t alignment);
  // Exactly at `address` (a multiple of kAllocationAlignment); false when any byte is taken,
  // outside memory, or bytes is 0.
  bool AllocateAt(std::uint64_t address, std::uint64_t bytes);
  // Releases the allocation that starts at `address`; returns its size, nullopt if none does.
  std::optional<std::uint64_t> Free(std::uint64_t address);

  const RangeMap& allocations() const { return allocations_; }
  std::uint64_t memory_bytes() const { return memory_bytes_; }
  // Allocated sizes are rounded up to kAllocationAlignment.
  static std::uint64_t RoundedSize(std::uint64_t bytes);

 private:
  std::uint64_t memory_bytes_;
  RangeMap allocations_;
};

}  // namespace systole
