#include "systole/memory_allocator.hpp"

#include <algorithm>
#include <limits>

namespace systole {
namespace {

// Smallest multiple of `alignment` (a power of two or not) that is >= value, or nullopt on
// overflow.
std::optional<std::uint64_t> AlignUp(std::uint64_t value, std::uint64_t alignment) {
  const std::uint64_t remainder = value % alignment;
  if (remainder == 0) return value;
  const std::uint64_t step = alignment - remainder;
  if (value > std::numeric_limits<std::uint64_t>::max() - step) return std::nullopt;
  return value + step;
}

}  // namespace

bool Covers(const RangeMap& ranges, std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0) return true;
  if (address > std::numeric_limits<std::uint64_t>::max() - bytes) return false;
  const std::uint64_t end = address + bytes;
  auto it = ranges.upper_bound(address);
  if (it == ranges.begin()) return false;
  --it;  // the last range starting at or before `address`
  std::uint64_t reach = address;
  while (it != ranges.end() && it->first <= reach) {
    reach = std::max(reach, it->second);
    if (reach >= end) return true;
    ++it;
  }
  return false;
}

std::uint64_t MemoryAllocator::RoundedSize(std::uint64_t bytes) {
  return AlignUp(bytes, kAllocationAlignment).value_or(std::numeric_limits<std::uint64_t>::max());
}

std::optional<std::uint64_t> MemoryAllocator::Allocate(std::uint64_t bytes,
                                                       std::uint64_t alignment) {
  if (bytes == 0 || bytes > memory_bytes_) return std::nullopt;
  const std::uint64_t size = RoundedSize(bytes);
  const std::uint64_t align = std::max(AlignUp(std::max<std::uint64_t>(alignment, 1),
                                               kAllocationAlignment)
                                           .value_or(0),
                                       kAllocationAlignment);
  if (align == 0) return std::nullopt;
  std::uint64_t candidate = 0;
  for (auto it = allocations_.begin();; ++it) {
    const std::uint64_t gap_end = it == allocations_.end() ? memory_bytes_ : it->first;
    if (candidate <= gap_end && gap_end - candidate >= size) {
      allocations_.emplace(candidate, candidate + size);
      return candidate;
    }
    if (it == allocations_.end()) return std::nullopt;
    const auto next = AlignUp(it->second, align);
    if (!next) return std::nullopt;
    candidate = std::max(candidate, *next);
  }
}

bool MemoryAllocator::AllocateAt(std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0 || address % kAllocationAlignment != 0) return false;
  const std::uint64_t size = RoundedSize(bytes);
  if (size > memory_bytes_ || address > memory_bytes_ - size) return false;
  const std::uint64_t end = address + size;
  auto it = allocations_.lower_bound(address);
  if (it != allocations_.end() && it->first < end) return false;
  if (it != allocations_.begin() && std::prev(it)->second > address) return false;
  allocations_.emplace(address, end);
  return true;
}

std::optional<std::uint64_t> MemoryAllocator::Free(std::uint64_t address) {
  const auto it = allocations_.find(address);
  if (it == allocations_.end()) return std::nullopt;
  const std::uint64_t size = it->second - it->first;
  allocations_.erase(it);
  return size;
}

}  // namespace systole
