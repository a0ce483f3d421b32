#include "sim/model/device_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace systole::model {

namespace {
constexpr std::uint64_t kPagesPerDirectory = std::uint64_t{1} << DeviceMemory::kDirectoryBits;
}  // namespace

DeviceMemory::DeviceMemory(std::uint64_t size_bytes) : size_(size_bytes) {
  const std::uint64_t pages = (size_bytes + kPageBytes - 1) / kPageBytes;
  directories_.resize((pages + kPagesPerDirectory - 1) / kPagesPerDirectory);
}

void DeviceMemory::CheckRange(std::uint64_t address, std::uint64_t length,
                              const char* what) const {
  if (!Contains(address, length)) {
    throw std::out_of_range(fmt::format(
        "device memory {}: address 0x{:x} length {} is outside the {}-byte memory", what,
        address, length, size_));
  }
}

const DeviceMemory::Page* DeviceMemory::FindPage(std::uint64_t page_index) const {
  const Directory* directory = directories_[page_index / kPagesPerDirectory].get();
  return directory == nullptr ? nullptr : (*directory)[page_index % kPagesPerDirectory].get();
}

DeviceMemory::Page& DeviceMemory::PageForWrite(std::uint64_t page_index) {
  auto& directory = directories_[page_index / kPagesPerDirectory];
  if (directory == nullptr) directory = std::make_unique<Directory>();
  auto& page = (*directory)[page_index % kPagesPerDirectory];
  if (page == nullptr) {
    page = std::make_unique<Page>();  // value-initialised: zeros
    ++allocated_pages_;
  }
  return *page;
}

void DeviceMemory::Read(std::uint64_t address, std::span<std::uint8_t> out) const {
  CheckRange(address, out.size(), "read");
  std::size_t done = 0;
  while (done < out.size()) {
    const std::uint64_t at = address + done;
    const std::uint64_t offset = at % kPageBytes;
    const std::size_t chunk =
        static_cast<std::size_t>(std::min<std::uint64_t>(kPageBytes - offset, out.size() - done));
    if (const Page* page = FindPage(at / kPageBytes)) {
      std::memcpy(out.data() + done, page->data() + offset, chunk);
    } else {
      std::memset(out.data() + done, 0, chunk);
    }
    done += chunk;
  }
}

void DeviceMemory::Write(std::uint64_t address, std::span<const std::uint8_t> bytes) {
  CheckRange(address, bytes.size(), "write");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::uint64_t at = address + done;
    const std::uint64_t offset = at % kPageBytes;
    const std::size_t chunk = static_cast<std::size_t>(
        std::min<std::uint64_t>(kPageBytes - offset, bytes.size() - done));
    std::memcpy(PageForWrite(at / kPageBytes).data() + offset, bytes.data() + done, chunk);
    done += chunk;
  }
}

std::span<std::uint8_t> DeviceMemory::DirectPage(std::uint64_t address) {
  CheckRange(address, 1, "direct access");
  const std::uint64_t page_index = address / kPageBytes;
  // The last page may extend past the end of a memory whose size is not a multiple of a page.
  const std::uint64_t bytes = std::min(kPageBytes, size_ - page_index * kPageBytes);
  return {PageForWrite(page_index).data(), static_cast<std::size_t>(bytes)};
}

void DeviceMemory::Clear() {
  for (auto& directory : directories_) directory.reset();
  allocated_pages_ = 0;
}

}  // namespace systole::model
