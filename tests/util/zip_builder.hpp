// Building and taking apart zip archives in tests — stored or deflated members, bundles taken
// apart and put back together with one member edited, and surgery on the bytes (a forged size)
// that keeps everything else consistent, so that a reader meets exactly the one defect a test
// is about.
#pragma once

#include <zip.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace systole::testing {

struct ZipEntry {
  std::string name;
  std::string data;
  bool store = false;  // stored as is (numpy.savez); else deflated at level 9
};

inline std::vector<std::uint8_t> MakeZip(const std::vector<ZipEntry>& entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_source_keep(buffer);
  zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  for (const ZipEntry& entry : entries) {
    zip_source_t* source = zip_source_buffer(archive, entry.data.data(), entry.data.size(), 0);
    const zip_int64_t index = zip_file_add(archive, entry.name.c_str(), source, 0);
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), entry.store ? ZIP_CM_STORE : ZIP_CM_DEFLATE,
                             entry.store ? 0 : 9);
  }
  if (zip_close(archive) != 0) throw std::runtime_error("MakeZip: zip_close failed");
  zip_stat_t stat;
  zip_source_stat(buffer, &stat);
  std::vector<std::uint8_t> bytes(stat.size);
  zip_source_open(buffer);
  zip_source_read(buffer, bytes.data(), bytes.size());
  zip_source_close(buffer);
  zip_source_free(buffer);
  zip_error_fini(&error);
  return bytes;
}

// (name, data) pairs, as Unzip gives them: deflated members in this order.
inline std::vector<std::uint8_t> Zip(const std::vector<std::pair<std::string, std::string>>& members) {
  std::vector<ZipEntry> entries;
  for (const auto& [name, data] : members) entries.push_back({name, data, false});
  return MakeZip(entries);
}

// The members of a zip in order, as (name, data) pairs.
inline std::vector<std::pair<std::string, std::string>> Unzip(const std::vector<std::uint8_t>& bytes) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t* archive = zip_open_from_source(source, ZIP_RDONLY, &error);
  if (archive == nullptr) throw std::runtime_error("Unzip: not a zip archive");
  std::vector<std::pair<std::string, std::string>> entries;
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t stat;
    zip_stat_index(archive, index, 0, &stat);
    std::string data(stat.size, '\0');
    zip_file_t* file = zip_fopen_index(archive, index, 0);
    zip_fread(file, data.data(), data.size());
    zip_fclose(file);
    entries.emplace_back(zip_get_name(archive, index, 0), data);
  }
  zip_close(archive);
  zip_error_fini(&error);
  return entries;
}

// The offset of the only occurrence of `needle` (throws if there is none or more than one).
inline std::size_t FindOnce(const std::vector<std::uint8_t>& bytes, std::string_view needle) {
  std::size_t found = std::string::npos;
  for (std::size_t at = 0; at + needle.size() <= bytes.size(); ++at) {
    if (std::memcmp(&bytes[at], needle.data(), needle.size()) != 0) continue;
    if (found != std::string::npos) throw std::runtime_error("FindOnce: '" + std::string(needle) + "' twice");
    found = at;
  }
  if (found == std::string::npos) throw std::runtime_error("FindOnce: no '" + std::string(needle) + "'");
  return found;
}

// Writes `size` as the uncompressed size of member `name` in both its local header and its
// central-directory entry (which must agree: readers open with ZIP_CHECKCONS). The CRC and the
// data stay as they were.
inline void ForgeDeclaredSize(std::vector<std::uint8_t>& zip, std::string_view name, std::uint32_t size) {
  auto u16 = [&](std::size_t at) { return static_cast<std::size_t>(zip[at] | zip[at + 1] << 8); };
  auto put32 = [&](std::size_t at, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) zip[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value >> (8 * i));
  };
  int patched = 0;
  for (std::size_t at = 0; at + 46 <= zip.size(); ++at) {
    const bool local = std::memcmp(&zip[at], "PK\x03\x04", 4) == 0;
    const bool central = std::memcmp(&zip[at], "PK\x01\x02", 4) == 0;
    if (!local && !central) continue;
    const std::size_t name_at = at + (local ? 30 : 46);
    const std::size_t name_length = u16(at + (local ? 26 : 28));
    if (name_length != name.size() || name_at + name_length > zip.size() ||
        std::memcmp(&zip[name_at], name.data(), name.size()) != 0) {
      continue;
    }
    put32(at + (local ? 22 : 24), size);
    ++patched;
  }
  if (patched != 2) throw std::runtime_error("ForgeDeclaredSize: expected two headers for " + std::string(name));
}

inline void WriteBytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<std::uint8_t> ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace systole::testing
