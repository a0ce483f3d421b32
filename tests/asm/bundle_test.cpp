// Program bundles: write/read round trips, and clean errors for wrong, corrupt and hostile files.
#include "toolchain/asm/bundle.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "tests/util/zip_builder.hpp"
#include "tests/asm/asm_test_util.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::assembly {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::Program;
using image::DataType;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using systole::testing::Unzip;
using systole::testing::Zip;

Program Example() {
  return Assemble(R"(
    .config small
    .text at=0x100
    .input X, at=0x2000, dtype=bf16, shape=8x16
    .output Y, at=0x3000, dtype=bf16, shape=8x16
    .data W, at=0x4000, dtype=bf16
    .values 1.0, 2.0, 3.0, 4.0
    .data B, at=0x5000, dtype=fp32
    .values -1.0
    load mem=ub, dram=X, stride=32, rows=8, elems=16, signal=mxu
    halt
  )",
                  "example.s");
}

std::string ParseError(const std::vector<std::uint8_t>& bytes) {
  try {
    ParseBundle(bytes, "b.sbin");
  } catch (const BundleError& error) {
    return error.what();
  }
  return "<no error>";
}

// The example bundle with its manifest edited by `edit`.
std::vector<std::uint8_t> WithManifest(const std::function<void(json&)>& edit) {
  auto entries = Unzip(SerializeBundle(Example()));
  for (auto& [name, data] : entries) {
    if (name == "manifest.json") {
      json manifest = json::parse(data);
      edit(manifest);
      data = manifest.dump();
    }
  }
  return Zip(entries);
}

TEST(Bundle, RoundTripsInMemory) {
  const Program program = Example();
  const Program back = ParseBundle(SerializeBundle(program));
  EXPECT_EQ(back, program);
  EXPECT_EQ(back.source_map, program.source_map);  // kept, though == ignores it
  EXPECT_EQ(back.SourceOf(0), "example.s:10");
}

TEST(Bundle, IsDeterministic) { EXPECT_EQ(SerializeBundle(Example()), SerializeBundle(Example())); }

TEST(Bundle, LayoutIsAsDocumented) {
  const auto entries = Unzip(SerializeBundle(Example()));
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].first, "manifest.json");
  EXPECT_EQ(entries[1].first, "text.bin");
  EXPECT_EQ(entries[1].second.size(), 64u);
  EXPECT_EQ(entries[2].first, "data/W.bin");
  EXPECT_EQ(entries[2].second, std::string("\x80\x3f\x00\x40\x40\x40\x80\x40", 8));
  EXPECT_EQ(entries[3].first, "data/B.bin");
  const json manifest = json::parse(entries[0].second);
  EXPECT_EQ(manifest["format"], "systole-program");
  EXPECT_EQ(manifest["version"], 1);
  EXPECT_EQ(manifest["config"], "small");
  EXPECT_EQ(manifest["text"],
            json::parse(R"({"address": 256, "instructions": 2, "file": "text.bin"})"));
  EXPECT_EQ(manifest["data"][0],
            json::parse(R"({"name": "W", "address": 16384, "dtype": "bf16", "bytes": 8,
                            "file": "data/W.bin"})"));
  EXPECT_EQ(manifest["inputs"][0],
            json::parse(R"({"name": "X", "address": 8192, "dtype": "bf16", "shape": [8, 16]})"));
  EXPECT_EQ(manifest["outputs"][0]["name"], "Y");
  EXPECT_EQ(manifest["source_map"],
            json::parse(R"({"files": ["example.s"], "lines": [[0, 10], [0, 11]]})"));
}

TEST(Bundle, EmptyProgramRoundTrips) {
  EXPECT_EQ(ParseBundle(SerializeBundle(Program{})), Program{});
}

TEST(Bundle, FilesAndLoadProgram) {
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("systole_bundle_test_{}", ::getpid());
  fs::create_directories(dir);
  const Program program = Example();
  WriteBundle(program, dir / "p.sbin");
  EXPECT_EQ(ReadBundle(dir / "p.sbin"), program);
  EXPECT_EQ(LoadProgram(dir / "p.sbin"), program);
  fs::copy_file(dir / "p.sbin", dir / "p.bin");
  EXPECT_EQ(LoadProgram(dir / "p.bin"), program);  // sniffed by its zip signature
  {
    std::ofstream(dir / "p.s") << "halt\n";
    std::ofstream(dir / "p.txt") << "sync\nhalt\n";
  }
  EXPECT_EQ(LoadProgram(dir / "p.s").words.size(), 1u);
  EXPECT_EQ(LoadProgram(dir / "p.txt").words.size(), 2u);
  EXPECT_THROW(ReadBundle(dir / "missing.sbin"), BundleError);
  EXPECT_THROW(LoadProgram(dir / "missing.s"), AssemblyError);
  fs::remove_all(dir);
}

TEST(Bundle, RejectsWhatIsNotABundle) {
  EXPECT_EQ(ParseError({}), "b.sbin: not a valid bundle: the file is empty");
  EXPECT_EQ(ParseError({'h', 'a', 'l', 't'}),
            "b.sbin: not a valid bundle (zip archive): Not a zip archive");
  EXPECT_EQ(ParseError(Zip({{"text.bin", ""}})), "b.sbin: manifest.json is missing");
  EXPECT_EQ(ParseError(Zip({{"manifest.json", "{"}})),
            "b.sbin: manifest.json is not a JSON object");
  EXPECT_EQ(ParseError(Zip({{"manifest.json", "[]"}})),
            "b.sbin: manifest.json is not a JSON object");
  EXPECT_EQ(ParseError(Zip({{"manifest.json", R"({"format": "other"})"}})),
            "b.sbin: manifest.json: 'format' is not \"systole-program\"");
}

TEST(Bundle, RejectsOtherVersions) {
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["version"] = 2; })),
            "b.sbin: unsupported bundle version 2 (this build reads version 1)");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["version"] = "1"; })),
            "b.sbin: manifest: 'version' must be a non-negative integer");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["isa"]["major"] = 9; })),
            "b.sbin: built for ISA version 9.x; this build implements 1.2");
}

TEST(Bundle, ChecksSizesAgainstTheManifest) {
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["text"]["instructions"] = 3; })),
            "b.sbin: text.bin holds 64 bytes, the manifest says 96");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["data"][0]["bytes"] = 6; })),
            "b.sbin: data/W.bin holds 8 bytes, the manifest says 6");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["data"][0]["bytes"] = 1ull << 40; })),
            "b.sbin: data/W.bin holds 8 bytes, the manifest says 1099511627776");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["text"]["instructions"] = 1ull << 60; })),
            "b.sbin: manifest: 1152921504606846976 instructions is too many");
  auto entries = Unzip(SerializeBundle(Example()));
  entries.erase(entries.begin() + 2);  // data/W.bin
  EXPECT_EQ(ParseError(Zip(entries)), "b.sbin: data/W.bin is missing");
}

TEST(Bundle, ValidatesTheManifest) {
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["data"][0]["name"] = "../../etc/passwd"; })),
            "b.sbin: manifest: 'data[0].name' is not a valid name");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["data"][0]["file"] = "data/other.bin"; })),
            "b.sbin: manifest: 'data[0].file' must be data/W.bin");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["data"][0]["dtype"] = "int4"; })),
            "b.sbin: manifest: 'data[0].dtype' must be one of: int8, int32, bf16, fp32");
}

TEST(Bundle, ValidatesThePrograms) {
  EXPECT_EQ(
      ParseError(WithManifest([](json& m) { m["data"][1]["address"] = 0x4004; })),
      "b.sbin: invalid program: data 'B' [0x4004, 0x4008) overlaps data 'W' [0x4000, 0x4008)");
  EXPECT_EQ(ParseError(WithManifest([](json& m) {
              m["inputs"][0]["shape"] = json::array({8, 0});
            })),
            "b.sbin: invalid program: input 'X' has an empty shape");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["inputs"][0]["shape"] = json::array({-1}); })),
            "b.sbin: manifest: 'inputs[0].shape' must hold non-negative integers");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["outputs"][0]["name"] = "X"; })),
            "b.sbin: invalid program: name 'X' is used twice");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["config"] = 5; })),
            "b.sbin: manifest: 'config' must be a string or null");
  // A configuration is looked up by name: a path here would make tools read any file.
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["config"] = "/dev/zero"; })),
            "b.sbin: invalid program: config \"/dev/zero\" is not a configuration name (up to 16 of A-Z a-z 0-9 - _)");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m["text"]["address"] = 0x10; })),
            "b.sbin: invalid program: the program text at 0x10 is not on a 32-byte boundary");
  EXPECT_EQ(ParseError(WithManifest([](json& m) { m.erase("outputs"); })),
            "b.sbin: manifest: 'outputs' is missing");
  EXPECT_EQ(ParseError(WithManifest([](json& m) {
              m["source_map"]["lines"][0] = json::array({7, 1});
            })),
            "b.sbin: manifest: 'source_map.lines' entries must be [file index, line]");
}

// A 32 KiB bundle whose text.bin inflates to 32 MiB (a million instructions of zeros) once
// took 1.6 GiB and 21 s to disassemble: refused before its text is allocated.
TEST(Bundle, ADecompressionBombIsRefused) {
  constexpr std::uint64_t kInstructions = 1 << 20;
  auto entries = Unzip(SerializeBundle(Example()));
  std::vector<systole::testing::ZipEntry> bomb;
  for (auto& [name, data] : entries) {
    if (name == "manifest.json") {
      json manifest = json::parse(data);
      manifest["text"]["instructions"] = kInstructions;
      manifest.erase("source_map");
      data = manifest.dump();
    }
    if (name == "text.bin") data.assign(kInstructions * isa::kInstructionBytes, '\0');
    bomb.push_back({name, data});
  }
  const std::string error = ParseError(systole::testing::MakeZip(bomb));
  EXPECT_NE(error.find("b.sbin: text.bin: "), std::string::npos) << error;
  EXPECT_NE(error.find("decompression bomb"), std::string::npos) << error;
}

// Mostly-zero data (a depthwise convolution's packed weights deflate 800:1) is written stored,
// so that the reader's ratio bound never refuses a bundle the writer made.
TEST(Bundle, DataThatDeflatesTooWellIsStoredAndReadsBack) {
  Program program = Example();
  program.data[0].bytes.assign(6 << 20, 0);
  program.data[1].address = 0x1000000;  // after W
  const std::vector<std::uint8_t> bytes = SerializeBundle(program);
  EXPECT_GT(bytes.size(), 6u << 20) << "stored, not deflated";
  EXPECT_EQ(ParseBundle(bytes, "zeros.sbin").data[0].bytes.size(), 6u << 20);
  EXPECT_LT(SerializeBundle(Example()).size(), 4096u) << "the rest stays deflated";
}

TEST(Bundle, WriterRejectsInvalidPrograms) {
  Program program;
  program.data.push_back({"bad name", 0, DataType::kInt8, {1}});
  EXPECT_THROW(SerializeBundle(program), BundleError);
  program.data[0] = {"A", 0, DataType::kInt32, {1, 2}};
  try {
    SerializeBundle(program);
    FAIL();
  } catch (const BundleError& error) {
    EXPECT_STREQ(error.what(),
                 "cannot write an invalid program: data 'A' holds 2 bytes, not a whole number of "
                 "int32 elements");
  }
}

TEST(Bundle, TruncatedBundlesFailCleanly) {
  const std::vector<std::uint8_t> bytes = SerializeBundle(Example());
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const std::vector<std::uint8_t> part(bytes.begin(),
                                         bytes.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_THROW(ParseBundle(part), BundleError) << size;
  }
}

}  // namespace
}  // namespace systole::assembly
