// Reading members of zip archives that nobody vouches for: .npz inputs, program bundles and
// compiled model files all come through here, so every member is checked the same way.
//
// Before a member's bytes are allocated, its sizes from the zip directory are bounded:
//   - its declared size: at most Limits::max_member_bytes, and exactly what the caller expects
//     when the caller knows (a bundle's manifest says how long text.bin is);
//   - its compression ratio: beyond Limits::grace_bytes a member may expand at most
//     Limits::max_ratio times its compressed size (a 260-byte .npz once asked for 4 GiB);
//   - the archive as a whole: all members read from it together at most grace_bytes +
//     max_ratio x the archive's size, so many small members cannot add up to a bomb either.
// Then the member is read to its end, which is when libzip compares the CRC-32 and the size
// it decompressed with the directory's; more bytes than declared are refused as they arrive.
// Reading exactly `size` bytes and stopping (what the readers once did) never checks the CRC.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

typedef struct zip zip_t;  // <zip.h>, kept out of this header

namespace systole::archive {

// "in.npz: arr_0.npy: corrupt: CRC error" — the archive, the member, what is wrong.
class ZipError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Limits {
  std::uint64_t max_member_bytes = std::uint64_t{4} << 30;
  // Deflate can reach about 1030:1 on zeros; real data (weights, activations, instruction
  // words, HLO text) stays far below 100:1, and any member may compress freely up to
  // grace_bytes, so only a large member that is mostly one repeated byte is refused.
  std::uint64_t max_ratio = 100;
  std::uint64_t grace_bytes = std::uint64_t{4} << 20;
};

// True when a member of `size` bytes stored in `compressed` bytes is past the ratio bound.
bool BeyondRatio(std::uint64_t size, std::uint64_t compressed, const Limits& limits);

// Writers call this on what they wrote and store (ZIP_CM_STORE) the members it names, so that
// no file Systole writes is refused by its own reader: a depthwise convolution's packed weights
// are mostly zeros, which deflate 800:1. `zip` is an archive in memory or, below, a file.
std::vector<std::string> MembersBeyondRatio(std::span<const std::uint8_t> zip, const Limits& limits);
std::vector<std::string> MembersBeyondRatio(const std::filesystem::path& zip, const Limits& limits);

class ZipReader {
 public:
  // `kind` says what the archive should be ("bundle", ".npz") when it is not a zip at all.
  // A file must be a regular one (not a device or a pipe: libzip must seek, and /dev/zero
  // never ends); errors name it by its path.
  static ZipReader OpenFile(const std::filesystem::path& path, std::string_view kind, const Limits& limits);
  // An archive in memory, e.g. a bundle inside a model file; `bytes` must outlive the reader.
  static ZipReader OpenBytes(std::span<const std::uint8_t> bytes, std::string origin, std::string_view kind,
                             const Limits& limits);

  bool Contains(std::string_view member) const;
  std::uint64_t Members() const;
  const std::string& origin() const { return origin_; }

  // The verified bytes of `member`; ZipError if it is missing, too large or corrupt.
  std::vector<std::uint8_t> Read(std::string_view member) { return Read(member, std::nullopt, limits_.max_member_bytes); }
  // ... and exactly `bytes` long, as a manifest says.
  std::vector<std::uint8_t> ReadExactly(std::string_view member, std::uint64_t bytes) { return Read(member, bytes, bytes); }
  // ... and at most `bytes` long (a manifest, which has no size written anywhere else).
  std::vector<std::uint8_t> ReadAtMost(std::string_view member, std::uint64_t bytes) { return Read(member, std::nullopt, bytes); }

 private:
  struct Discard {
    void operator()(zip_t* archive) const;
  };
  ZipReader(zip_t* archive, std::string origin, const Limits& limits, std::uint64_t archive_bytes);
  std::vector<std::uint8_t> Read(std::string_view member, std::optional<std::uint64_t> exact, std::uint64_t at_most);
  [[noreturn]] void Fail(std::string_view member, const std::string& why) const;

  std::unique_ptr<zip_t, Discard> archive_;
  std::string origin_;
  Limits limits_;
  std::uint64_t archive_bytes_ = 0;
  std::uint64_t bytes_read_ = 0;  // declared sizes of the members read so far
};

}  // namespace systole::archive
