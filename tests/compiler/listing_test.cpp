// `systole compile --listing MODEL.s`: every device step's listing reassembles to the very
// program bundle the model file holds (steps/N.sbin), byte for byte.
#include <gmock/gmock.h>
#include <fmt/core.h>
#include <zip.h>

#include <memory>
#include <unistd.h>

#include "tests/compiler/compiler_test_util.hpp"
#include "toolchain/asm/assembler.hpp"
#include "toolchain/asm/bundle.hpp"
#include "toolchain/compiler/listing.hpp"
#include "toolchain/compiler/model_file.hpp"

namespace systole::compiler {
namespace {

namespace fs = std::filesystem;

// The bytes of `entry` in the zip archive `path`.
std::vector<std::uint8_t> ZipEntry(const fs::path& path, const std::string& entry) {
  int error = 0;
  std::unique_ptr<zip_t, decltype(&zip_discard)> archive(zip_open(path.c_str(), ZIP_RDONLY, &error), zip_discard);
  if (!archive) throw std::runtime_error("cannot open " + path.string());
  zip_stat_t stat;
  if (zip_stat(archive.get(), entry.c_str(), 0, &stat) != 0) throw std::runtime_error("no " + entry);
  std::vector<std::uint8_t> bytes(stat.size);
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> file(zip_fopen(archive.get(), entry.c_str(), 0), zip_fclose);
  if (!file || zip_fread(file.get(), bytes.data(), bytes.size()) != static_cast<zip_int64_t>(bytes.size())) {
    throw std::runtime_error("cannot read " + entry);
  }
  return bytes;
}

void ExpectListingsReassemble(const fs::path& hlo, const std::string& config_name) {
  const CompiledModel model = Compile(testing::ReadText(hlo), hlo.filename().string(), LoadConfig(config_name));
  const fs::path dir = fs::path(::testing::TempDir()) / ("h8c_listing_" + config_name + "_" + hlo.stem().string() + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path sbin = dir / "model.sbin", listing = dir / "model.s";
  SaveModel(model, sbin);
  const std::vector<ListingFile> files = ListingFiles(model, listing);
  ASSERT_EQ(files.size(), model.DeviceStepCount() + 1);
  EXPECT_EQ(files[0].path, listing);
  for (const ListingFile& file : files) std::ofstream(file.path) << file.text;
  // The index is comments only: the assembler reads it as an empty program.
  EXPECT_TRUE(assembly::AssembleFile(listing).words.empty());
  for (std::size_t n = 0; n + 1 < files.size(); ++n) {
    SCOPED_TRACE(files[n + 1].path.string());
    EXPECT_EQ(files[n + 1].path, dir / fmt::format("model.{}.s", n));
    EXPECT_THAT(files[n + 1].text, ::testing::HasSubstr("; placement of the model"));
    image::Program program = assembly::AssembleFile(files[n + 1].path);
    ASSERT_FALSE(program.words.empty());
    // The assembler records where each instruction came from (debug information that the
    // compiler's programs do not carry); the bundle is otherwise the same, byte for byte.
    program.source_map.clear();
    EXPECT_EQ(assembly::SerializeBundle(program), ZipEntry(sbin, fmt::format("steps/{}.sbin", n)));
  }
  fs::remove_all(dir);
}

TEST(Listing, EveryStepOfTheSmallCnnReassemblesToItsBundle) {
  ExpectListingsReassemble(testing::ExampleFile("small_cnn_f32.hlo"), "small");
}

TEST(Listing, Int8RequantizedStepsReassembleToTheirBundles) {
  ExpectListingsReassemble(testing::ExampleFile("s8_conv_requant.hlo"), "small-int8");
}

TEST(Listing, StepFilesAreNamedAfterTheListing) {
  EXPECT_EQ(StepListingPath("out/net.s", 3), fs::path("out/net.3.s"));
  EXPECT_EQ(StepListingPath("net", 0), fs::path("net.0.s"));
}

}  // namespace
}  // namespace systole::compiler
