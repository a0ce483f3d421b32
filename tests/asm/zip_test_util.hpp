// Building and taking apart zip archives in tests, to make broken bundles.
#pragma once

#include <zip.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace systole::assembly::testing {

// A zip holding the given entries, for building broken bundles.
inline std::vector<std::uint8_t> Zip(
    const std::vector<std::pair<std::string, std::string>>& entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_source_keep(buffer);
  zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  for (const auto& [name, data] : entries) {
    zip_source_t* source = zip_source_buffer(archive, data.data(), data.size(), 0);
    zip_file_add(archive, name.c_str(), source, 0);
  }
  zip_close(archive);
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

// The entries of a serialized bundle.
inline std::vector<std::pair<std::string, std::string>> Unzip(
    const std::vector<std::uint8_t>& bytes) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t* archive = zip_open_from_source(source, ZIP_RDONLY, &error);
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

}  // namespace systole::assembly::testing
