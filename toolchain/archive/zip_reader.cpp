#include "toolchain/archive/zip_reader.hpp"

#include <fmt/format.h>
#include <zip.h>

#include <algorithm>

namespace systole::archive {
namespace {

// Decompressed bytes are pulled through this much at a time, past the declared size too, so
// that a member holding more than its directory entry says is caught without storing it.
constexpr std::size_t kProbeBytes = 4096;

struct FileCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

std::string ZipErrorText(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

[[noreturn]] void FailToOpen(const std::string& origin, std::string_view kind, const std::string& why) {
  throw ZipError(fmt::format("{}: not a valid {} (zip archive): {}", origin, kind, why));
}

std::vector<std::string> BeyondRatioIn(zip_t* archive, const Limits& limits) {
  std::vector<std::string> names;
  const zip_int64_t count = zip_get_num_entries(archive, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive, static_cast<zip_uint64_t>(i), 0, &stat) == 0 &&
        (stat.valid & (ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE)) ==
            (ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE) &&
        BeyondRatio(stat.size, stat.comp_size, limits)) {
      names.emplace_back(stat.name);
    }
  }
  zip_discard(archive);
  return names;
}

}  // namespace

bool BeyondRatio(std::uint64_t size, std::uint64_t compressed, const Limits& limits) {
  // size > ratio x compressed, in a form that cannot overflow.
  return size > limits.grace_bytes && compressed < size / limits.max_ratio + (size % limits.max_ratio != 0);
}

std::vector<std::string> MembersBeyondRatio(std::span<const std::uint8_t> zip, const Limits& limits) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(zip.data(), zip.size(), 0, &error);
  zip_t* archive = source ? zip_open_from_source(source, ZIP_RDONLY, &error) : nullptr;
  zip_error_fini(&error);
  if (archive == nullptr) {
    if (source != nullptr) zip_source_free(source);
    throw ZipError("cannot read back a zip archive just written");
  }
  return BeyondRatioIn(archive, limits);
}

std::vector<std::string> MembersBeyondRatio(const std::filesystem::path& zip, const Limits& limits) {
  int code = 0;
  zip_t* archive = zip_open(zip.c_str(), ZIP_RDONLY, &code);
  if (archive == nullptr) throw ZipError(fmt::format("{}: cannot read back: {}", zip.string(), ZipErrorText(code)));
  return BeyondRatioIn(archive, limits);
}

void ZipReader::Discard::operator()(zip_t* archive) const { zip_discard(archive); }

ZipReader::ZipReader(zip_t* archive, std::string origin, const Limits& limits, std::uint64_t archive_bytes)
    : archive_(archive), origin_(std::move(origin)), limits_(limits), archive_bytes_(archive_bytes) {}

ZipReader ZipReader::OpenFile(const std::filesystem::path& path, std::string_view kind, const Limits& limits) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ZipError(fmt::format("{}: {}", path.string(),
                               std::filesystem::exists(path, error) ? "not a regular file" : "no such file"));
  }
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) throw ZipError(fmt::format("{}: cannot read its size: {}", path.string(), error.message()));
  int code = 0;
  // ZIP_CHECKCONS: every local header must agree with the central directory, so the sizes
  // checked below are the ones the reader will meet.
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (archive == nullptr) FailToOpen(path.string(), kind, ZipErrorText(code));
  return ZipReader(archive, path.string(), limits, size);
}

ZipReader ZipReader::OpenBytes(std::span<const std::uint8_t> bytes, std::string origin, std::string_view kind,
                               const Limits& limits) {
  if (bytes.empty()) throw ZipError(fmt::format("{}: not a valid {}: the file is empty", origin, kind));
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t* archive = source ? zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error) : nullptr;
  if (archive == nullptr) {
    if (source != nullptr) zip_source_free(source);  // zip_open_from_source took it only on success
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    FailToOpen(origin, kind, why);
  }
  zip_error_fini(&error);
  return ZipReader(archive, std::move(origin), limits, bytes.size());
}

bool ZipReader::Contains(std::string_view member) const {
  return zip_name_locate(archive_.get(), std::string(member).c_str(), 0) >= 0;
}

std::uint64_t ZipReader::Members() const {
  const zip_int64_t count = zip_get_num_entries(archive_.get(), 0);
  return count < 0 ? 0 : static_cast<std::uint64_t>(count);
}

void ZipReader::Fail(std::string_view member, const std::string& why) const {
  throw ZipError(fmt::format("{}: {}{}", origin_, member, why));
}

std::vector<std::uint8_t> ZipReader::Read(std::string_view member, std::optional<std::uint64_t> exact,
                                          std::uint64_t at_most) {
  const std::string name(member);
  const zip_int64_t index = zip_name_locate(archive_.get(), name.c_str(), 0);
  if (index < 0) Fail(member, " is missing");
  zip_stat_t stat;
  zip_stat_init(&stat);
  constexpr zip_uint64_t kNeeded = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_CRC;
  if (zip_stat_index(archive_.get(), static_cast<zip_uint64_t>(index), 0, &stat) != 0 ||
      (stat.valid & kNeeded) != kNeeded) {
    Fail(member, fmt::format(": its size and CRC are unreadable: {}", zip_strerror(archive_.get())));
  }

  // Every bound before a byte is allocated.
  if (exact && stat.size != *exact) {
    Fail(member, fmt::format(" holds {} bytes, the manifest says {}", stat.size, *exact));
  }
  const std::uint64_t limit = std::min(at_most, limits_.max_member_bytes);
  if (stat.size > limit) {
    Fail(member, fmt::format(" is too large: {} bytes (at most {})", stat.size, limit));
  }
  if (BeyondRatio(stat.size, stat.comp_size, limits_)) {
    Fail(member, fmt::format(": {} compressed bytes expand to {} (more than {}:1): refused as a decompression bomb",
                             stat.comp_size, stat.size, limits_.max_ratio));
  }
  const std::uint64_t archive_bound = limits_.grace_bytes + limits_.max_ratio * archive_bytes_;
  if (bytes_read_ + stat.size > archive_bound) {
    Fail(member, fmt::format(": with the members before it, {} bytes from a {}-byte archive (more than {} "
                             "+ {}x): refused as a decompression bomb",
                             bytes_read_ + stat.size, archive_bytes_, limits_.grace_bytes, limits_.max_ratio));
  }
  bytes_read_ += stat.size;

  std::unique_ptr<zip_file_t, FileCloser> file(zip_fopen_index(archive_.get(), static_cast<zip_uint64_t>(index), 0));
  if (!file) Fail(member, fmt::format(": cannot open: {}", zip_strerror(archive_.get())));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(stat.size));
  std::uint64_t got = 0;
  std::uint8_t probe[kProbeBytes];
  for (;;) {
    // Into the buffer while it has room, then into the probe: a well-formed member ends there
    // with a read of 0, at which libzip has checked the CRC and the size.
    const bool in_buffer = got < bytes.size();
    const std::uint64_t room = in_buffer ? std::min<std::uint64_t>(bytes.size() - got, 1 << 20) : sizeof probe;
    const zip_int64_t n = zip_fread(file.get(), in_buffer ? bytes.data() + got : probe, room);
    if (n < 0) Fail(member, fmt::format(": corrupt: {}", zip_file_strerror(file.get())));
    if (n == 0) break;
    if (!in_buffer) Fail(member, fmt::format(": holds more than the {} bytes its zip entry declares", stat.size));
    got += static_cast<std::uint64_t>(n);
  }
  if (got != stat.size) Fail(member, fmt::format(": truncated: {} of {} bytes", got, stat.size));
  return bytes;
}

}  // namespace systole::archive
