// Program bundles (.sbin): a Program in one file, for the CLI, the driver and other tools.
//
// A bundle is a zip archive holding
//   manifest.json    format name and version, ISA version, configuration name, text address and
//                    instruction count, data segments / inputs / outputs (name, address, dtype,
//                    byte count or shape, file name) and the source map;
//   text.bin         the instruction words, 32 bytes each, in order;
//   data/NAME.bin    the bytes of each data segment.
// The reader trusts nothing: every entry is verified and bounded by archive::ZipReader (CRC,
// declared and actual size, compression ratio) and its size checked against the manifest
// before it is allocated, every name and address range is validated (ValidateProgram), so a
// truncated, corrupt or hostile file gives a BundleError, never a crash or a huge allocation.
// The writer deflates each entry, or stores it where deflate would pass the reader's ratio
// bound (mostly-zero data).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "arch/image/program.hpp"

namespace systole::assembly {

// Version of the bundle layout written by this build (the manifest's "version"). Readers
// reject any other version; bump it on any incompatible change to the manifest or entries.
inline constexpr std::uint32_t kBundleVersion = 1;
inline constexpr std::string_view kBundleFormat = "systole-program";
// The largest entry (text or one data segment) a reader accepts.
inline constexpr std::uint64_t kMaxBundleEntryBytes = std::uint64_t{1} << 32;

// "model.sbin: data/W1.bin holds 510 bytes, the manifest says 512".
class BundleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// In memory. `origin` names the bundle in error messages.
std::vector<std::uint8_t> SerializeBundle(const image::Program& program);
image::Program ParseBundle(std::span<const std::uint8_t> bytes, std::string_view origin = "<bundle>");

// On disk. WriteBundle replaces `path` only once the whole bundle is written.
void WriteBundle(const image::Program& program, const std::filesystem::path& path);
image::Program ReadBundle(const std::filesystem::path& path);

// A program from a file: ".sbin" is read as a bundle, ".s" / ".S" / ".asm" is assembled, and
// any other file is a bundle if it starts like a zip archive and assembly otherwise. Throws
// BundleError or AssemblyError.
image::Program LoadProgram(const std::filesystem::path& path);

}  // namespace systole::assembly
