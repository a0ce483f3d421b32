// Writes the seed corpora of the fuzzers whose inputs are binary, from the project's own files,
// so that each starts from inputs that get past its first checks (without seeds, fuzz_bundle
// spent its whole run on "not a zip"). Run at build time: make_seeds OUT_DIR writes
//   OUT_DIR/fuzz_decode/  every distinct instruction word of examples/asm/*.s, 32 bytes each;
//   OUT_DIR/fuzz_bundle/  each example assembled into a program bundle, as a file and as its
//                         entries (the two layouts of fuzz_bundle.cpp);
//   OUT_DIR/fuzz_npy/     .npy images of every element type in several shapes and both header
//                         versions, with the values of the examples' .data segments;
//   OUT_DIR/fuzz_frame/   link-protocol streams: a chunk-size byte, then frames of every request
//                         type with the payloads the client sends, replies and an error reply.
// Text fuzzers (assembler, config, hlo) take their seeds straight from the source tree.
#include <fmt/format.h>
#include <zip.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "systole/protocol.hpp"
#include "toolchain/asm/assembler.hpp"
#include "toolchain/asm/bundle.hpp"
#include "toolchain/npy/npy.hpp"

namespace {

namespace fs = std::filesystem;
using namespace systole;

void Write(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write", path.string()));
}

std::vector<image::Program> ExamplePrograms() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm")) {
    if (entry.path().extension() == ".s") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // the same corpus on every machine
  std::vector<image::Program> programs;
  for (const fs::path& file : files) programs.push_back(assembly::AssembleFile(file));
  return programs;
}

void DecodeSeeds(const std::vector<image::Program>& programs, const fs::path& dir) {
  std::set<isa::Word> words;
  for (const image::Program& program : programs) words.insert(program.words.begin(), program.words.end());
  std::size_t n = 0;
  for (const isa::Word& word : words) Write(dir / fmt::format("word_{:03}", n++), {word.begin(), word.end()});
}

// fuzz_bundle's two layouts (fuzz_bundle.cpp): 0 and the file, or 1 and its entries unpacked.
void BundleSeeds(const std::vector<image::Program>& programs, const fs::path& dir) {
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const std::vector<std::uint8_t> bundle = assembly::SerializeBundle(programs[i]);
    std::vector<std::uint8_t> raw = {0};
    raw.insert(raw.end(), bundle.begin(), bundle.end());
    Write(dir / fmt::format("example_{}_file", i), raw);

    std::vector<std::uint8_t> entries = {1};
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* source = zip_source_buffer_create(bundle.data(), bundle.size(), 0, &error);
    zip_t* archive = zip_open_from_source(source, ZIP_RDONLY, &error);
    zip_error_fini(&error);
    if (archive == nullptr) throw std::runtime_error("cannot reopen a bundle just written");
    for (zip_int64_t k = 0; k < zip_get_num_entries(archive, 0); ++k) {
      zip_stat_t stat;
      zip_stat_index(archive, static_cast<zip_uint64_t>(k), 0, &stat);
      std::vector<std::uint8_t> data(stat.size);
      zip_file_t* file = zip_fopen_index(archive, static_cast<zip_uint64_t>(k), 0);
      const bool read = file != nullptr && zip_fread(file, data.data(), data.size()) == static_cast<zip_int64_t>(data.size());
      if (file != nullptr) zip_fclose(file);
      const std::string name = stat.name;
      if (!read || name.size() > 255 || data.size() > 0xffff) throw std::runtime_error("example bundle too large");
      entries.push_back(static_cast<std::uint8_t>(name.size()));
      entries.insert(entries.end(), name.begin(), name.end());
      entries.push_back(static_cast<std::uint8_t>(data.size()));
      entries.push_back(static_cast<std::uint8_t>(data.size() >> 8));
      entries.insert(entries.end(), data.begin(), data.end());
    }
    zip_discard(archive);
    Write(dir / fmt::format("example_{}_entries", i), entries);
  }
}

void NpySeeds(const std::vector<image::Program>& programs, const fs::path& dir) {
  std::vector<double> values = {0, 1, -1, 127, -128};
  for (const image::Program& program : programs) {
    for (const image::DataSegment& segment : program.data) {
      for (std::size_t i = 0; i < segment.bytes.size() && values.size() < 64; ++i) {
        values.push_back(static_cast<std::int8_t>(segment.bytes[i]));
      }
    }
  }
  using npy::ElementType;
  std::size_t n = 0;
  for (ElementType type : {ElementType::kInt8, ElementType::kUInt8, ElementType::kInt32, ElementType::kInt64,
                           ElementType::kFloat32, ElementType::kFloat64}) {
    for (const std::vector<std::uint64_t>& shape :
         {std::vector<std::uint64_t>{}, {5}, {2, 3}, {2, 2, 4}, {0, 3}}) {
      npy::Array array{type, shape, {}};
      for (std::uint64_t k = 0; k < array.Elements(); ++k) {
        const double v = values[k % values.size()];
        array.values.push_back(type == ElementType::kUInt8 ? std::abs(v) : v);
      }
      std::vector<std::uint8_t> image = npy::SerializeNpy(array);
      Write(dir / fmt::format("{}_{}.npy", npy::ElementTypeName(type), n++), image);
      // The same array with a version-2.0 header (u32 header length), as NumPy writes for
      // headers too long for version 1.
      std::vector<std::uint8_t> v2(image.begin(), image.begin() + 6);
      const unsigned header_len = image[8] | static_cast<unsigned>(image[9]) << 8;
      v2.insert(v2.end(), {2, 0, static_cast<std::uint8_t>(header_len), static_cast<std::uint8_t>(header_len >> 8), 0, 0});
      v2.insert(v2.end(), image.begin() + 10, image.end());
      Write(dir / fmt::format("{}_{}_v2.npy", npy::ElementTypeName(type), n++), v2);
    }
  }
}

void FrameSeeds(const fs::path& dir) {
  using protocol::MessageType;
  using protocol::PayloadWriter;
  auto frame = [](MessageType type, std::uint32_t id, PayloadWriter writer, bool reply = false) {
    const auto code = reply ? protocol::ReplyType(type) : static_cast<std::uint16_t>(type);
    return protocol::EncodeFrame(code, id, writer.bytes());
  };
  const std::vector<std::uint8_t> data = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<std::vector<std::uint8_t>> frames = {
      frame(MessageType::kHello, 1, PayloadWriter().U16(protocol::kVersion).String("")),
      frame(MessageType::kHello, 1, PayloadWriter().U16(protocol::kVersion).String("secret-token")),
      frame(MessageType::kReadRegister, 2, PayloadWriter().U32(0x10)),
      frame(MessageType::kWriteRegister, 3, PayloadWriter().U32(0x20).U32(1)),
      frame(MessageType::kReadMemory, 4, PayloadWriter().U64(0x1000).U32(64)),
      frame(MessageType::kWriteMemory, 5, PayloadWriter().U64(0x1000).Bytes(data)),
      frame(MessageType::kAllocate, 6, PayloadWriter().U64(4096).U64(64).U8(0).U64(0)),
      frame(MessageType::kFree, 7, PayloadWriter().U64(0x1000)),
      frame(MessageType::kWait, 8, PayloadWriter().U32(100)),
      frame(MessageType::kHello, 1, PayloadWriter().U64(1 << 20).U32(1 << 16).U64(1 << 24), true),
      frame(MessageType::kReadMemory, 4, PayloadWriter().Bytes(data), true),
      protocol::EncodeErrorFrame(9, protocol::ErrorCode::kOutOfBounds, "address 0x1000 is outside"),
  };
  std::vector<std::uint8_t> session = {7};  // chunk selector: 8-byte pieces
  for (std::size_t i = 0; i < frames.size(); ++i) {
    for (const std::uint8_t chunk : {std::uint8_t{0}, std::uint8_t{63}}) {  // fed a byte at a time, and 64 at a time
      std::vector<std::uint8_t> seed = {chunk};
      seed.insert(seed.end(), frames[i].begin(), frames[i].end());
      Write(dir / fmt::format("frame_{:02}_{}", i, chunk), seed);
    }
    session.insert(session.end(), frames[i].begin(), frames[i].end());
  }
  Write(dir / "session", session);  // every frame back to back
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: make_seeds OUT_DIR\n");
    return 2;
  }
  try {
    const fs::path out = argv[1];
    for (const char* name : {"fuzz_decode", "fuzz_bundle", "fuzz_npy", "fuzz_frame"}) {
      fs::remove_all(out / name);
      fs::create_directories(out / name);
    }
    const std::vector<image::Program> programs = ExamplePrograms();
    DecodeSeeds(programs, out / "fuzz_decode");
    BundleSeeds(programs, out / "fuzz_bundle");
    NpySeeds(programs, out / "fuzz_npy");
    FrameSeeds(out / "fuzz_frame");
  } catch (const std::exception& error) {
    fmt::print(stderr, "make_seeds: {}\n", error.what());
    return 1;
  }
  return 0;
}
