// Byte-addressed device memory of a Systole device, allocated sparsely.
//
// A v2 configuration has 16 GiB of device memory; a model that allocated it would be useless on
// a laptop. Memory is therefore kept in 64 KiB pages that are allocated on their first write;
// reading a page never written returns zeros, exactly like memory that was zeroed at reset.
// Pages hang off a two-level table (4 GiB per directory), so even the largest legal memory
// (2^48 bytes) costs only a small top-level vector until it is touched.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace systole::model {

class DeviceMemory {
 public:
  static constexpr unsigned kPageBits = 16;  // 64 KiB pages
  static constexpr std::uint64_t kPageBytes = std::uint64_t{1} << kPageBits;
  static constexpr unsigned kDirectoryBits = 16;  // pages per directory: 4 GiB

  explicit DeviceMemory(std::uint64_t size_bytes);

  std::uint64_t Size() const { return size_; }

  // True when [address, address + length) lies inside the memory. Written so that no sum can
  // overflow: a huge address or length is simply outside.
  bool Contains(std::uint64_t address, std::uint64_t length) const {
    return length <= size_ && address <= size_ - length;
  }

  // Copy bytes in or out. Both throw std::out_of_range naming the address and length when the
  // range is not inside the memory, before touching anything.
  void Read(std::uint64_t address, std::span<std::uint8_t> out) const;
  void Write(std::uint64_t address, std::span<const std::uint8_t> bytes);

  // The whole page holding `address`, allocated (zeroed) if it was never written, for direct
  // memory access (a SystemC platform's DMI, sim/systemc/): the bytes stay where they are until
  // Clear() or the memory's destruction. Throws std::out_of_range outside the memory.
  std::span<std::uint8_t> DirectPage(std::uint64_t address);

  // Bytes actually allocated (pages written at least once), for tests and reports.
  std::uint64_t AllocatedBytes() const { return allocated_pages_ * kPageBytes; }

  // Zero everything (frees every page).
  void Clear();

 private:
  using Page = std::array<std::uint8_t, kPageBytes>;
  using Directory = std::array<std::unique_ptr<Page>, std::size_t{1} << kDirectoryBits>;

  const Page* FindPage(std::uint64_t page_index) const;
  Page& PageForWrite(std::uint64_t page_index);
  void CheckRange(std::uint64_t address, std::uint64_t length, const char* what) const;

  std::uint64_t size_;
  std::vector<std::unique_ptr<Directory>> directories_;
  std::uint64_t allocated_pages_ = 0;
};

}  // namespace systole::model
