// libFuzzer: any bytes parse as a program bundle or throw BundleError — never a crash, never a
// huge allocation — and a bundle that parses serializes and parses back to the same program.
//
// The first byte picks how the rest is read, so that both layers get fuzzed:
//   even: the rest is a bundle file as it is (the zip layer: directory, sizes, CRCs, ratios);
//   odd:  the rest is a list of entries — u8 name length, name, u16 LE data length, data — that
//         the fuzzer packs into a zip itself. Mutations then reach the manifest and the entries
//         behind the CRCs, which a changed byte in a real file never gets past.
// make_seeds writes every example bundle both ways.
#include <zip.h>

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "toolchain/asm/bundle.hpp"

namespace {

// The zip of the entries in `spec` (stored: deflating would only cost time), or empty when
// the list is cut short.
std::vector<std::uint8_t> ZipOfEntries(std::span<const std::uint8_t> spec) {
  std::vector<std::pair<std::string, std::string>> entries;
  std::size_t at = 0;
  while (at < spec.size()) {
    const std::size_t name_length = spec[at++];
    if (at + name_length + 2 > spec.size()) return {};
    std::string name(reinterpret_cast<const char*>(&spec[at]), name_length);
    at += name_length;
    const std::size_t data_length = spec[at] | static_cast<std::size_t>(spec[at + 1]) << 8;
    at += 2;
    if (at + data_length > spec.size()) return {};
    entries.emplace_back(std::move(name), std::string(reinterpret_cast<const char*>(&spec[at]), data_length));
    at += data_length;
  }
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_source_keep(buffer);
  zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  zip_error_fini(&error);
  if (archive == nullptr) std::abort();
  for (const auto& [name, data] : entries) {
    zip_source_t* source = zip_source_buffer(archive, data.data(), data.size(), 0);
    const zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_OVERWRITE);
    if (index < 0) {
      zip_source_free(source);  // e.g. an empty name: leave it out
      continue;
    }
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  }
  std::vector<std::uint8_t> bytes;
  if (zip_close(archive) != 0) {
    zip_discard(archive);
  } else {
    // An archive with no entries is not written at all: the buffer then has nothing to stat.
    zip_stat_t stat;
    if (zip_source_stat(buffer, &stat) == 0 && zip_source_open(buffer) == 0) {
      bytes.resize(stat.size);
      if (zip_source_read(buffer, bytes.data(), bytes.size()) != static_cast<zip_int64_t>(bytes.size())) std::abort();
      zip_source_close(buffer);
    }
  }
  zip_source_free(buffer);
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace systole::assembly;
  if (size < 1) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  const std::vector<std::uint8_t> packed = (data[0] & 1) ? ZipOfEntries(rest) : std::vector<std::uint8_t>();
  const std::span<const std::uint8_t> bundle = (data[0] & 1) ? std::span<const std::uint8_t>(packed) : rest;
  systole::image::Program program;
  try {
    program = ParseBundle(bundle, "fuzz.sbin");
  } catch (const BundleError&) {
    return 0;
  }
  if (!(ParseBundle(SerializeBundle(program), "again.sbin") == program)) std::abort();
  return 0;
}
