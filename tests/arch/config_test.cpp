// Named configurations: every shipped one is legal and means what its comments say; illegal
// values are rejected with a message that names the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "arch/config/config.hpp"

namespace systole {
namespace {

using ::testing::HasSubstr;

// A legal configuration as TOML text, with one line replaceable for error tests.
std::string Toml(const std::string& replace_key = "", const std::string& with_line = "") {
  std::string lines[] = {
      "name = \"t\"",
      "[array]",
      "rows = 4",
      "cols = 4",
      "dtype = \"int8\"",
      "[buffers]",
      "unified_buffer_bytes = 4096",
      "accumulator_bytes = 1024",
      "weight_fifo_tiles = 2",
      "[memory]",
      "bytes = 1048576",
      "channels = 2",
      "interleave_bytes = 256",
      "[queues]",
      "command_queue_depth = 2",
      "token_capacity = 255",
      "[clock]",
      "mhz = 48",
  };
  std::string text;
  for (const std::string& line : lines) {
    if (!replace_key.empty() && line.rfind(replace_key + " ", 0) == 0) {
      text += with_line + "\n";
    } else {
      text += line + "\n";
    }
  }
  return text;
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseConfig(text, "test.toml");
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(Config, EveryShippedConfigurationLoads) {
  const auto names = ListConfigs();
  for (const char* expected : {"tiny", "small", "small-int8", "v1", "v2"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  for (const std::string& name : names) {
    const Config config = LoadConfig(name);
    EXPECT_EQ(config.name, name);
    EXPECT_FALSE(config.description.empty()) << name;
    EXPECT_NO_THROW(config.Validate());
  }
}

TEST(Config, DefaultIsSmallBf16) {
  const Config config = LoadConfig(kDefaultConfig);
  EXPECT_EQ(config.name, "small");
  EXPECT_EQ(config.rows, 16u);
  EXPECT_EQ(config.cols, 16u);
  EXPECT_EQ(config.dtype, DType::kBf16);
}

TEST(Config, TinyIsFourByFourInt8) {
  const Config config = LoadConfig("tiny");
  EXPECT_EQ(config.rows, 4u);
  EXPECT_EQ(config.cols, 4u);
  EXPECT_EQ(config.dtype, DType::kInt8);
  EXPECT_EQ(config.UbRowBytes(), 4u);
}

TEST(Config, V1HasTpuV1Sizes) {
  // Jouppi et al. 2017: 256x256 MACs, 24 MiB unified buffer, 4096 accumulators of 256 x 32 bit.
  const Config config = LoadConfig("v1");
  EXPECT_EQ(config.rows, 256u);
  EXPECT_EQ(config.cols, 256u);
  EXPECT_EQ(config.dtype, DType::kInt8);
  EXPECT_EQ(config.unified_buffer_bytes, 24ull << 20);
  EXPECT_EQ(config.UbRows(), 98304u);
  EXPECT_EQ(config.AccRows(), 4096u);
  EXPECT_EQ(config.accumulator_bytes, 4ull << 20);
  EXPECT_EQ(config.weight_fifo_tiles, 4u);
  EXPECT_EQ(config.WeightTileBytes(), 65536u);
}

TEST(Config, V2IsBf16WithFp32Accumulators) {
  const Config config = LoadConfig("v2");
  EXPECT_EQ(config.rows, 128u);
  EXPECT_EQ(config.dtype, DType::kBf16);
  EXPECT_EQ(config.UbRowBytes(), 256u);
  EXPECT_EQ(config.AccRowBytes(), 512u);
}

TEST(Config, NonSquareArrayUsesWidestSideForUnifiedBufferRows) {
  Config config = ParseConfig(Toml("cols", "cols = 8"), "t.toml");
  EXPECT_EQ(config.UbRowElems(), 8u);
  EXPECT_EQ(config.AccRowElems(), 8u);
  EXPECT_EQ(config.UbRows(), 512u);
}

TEST(Config, TemplateIsLegal) { EXPECT_EQ(ErrorOf(Toml()), "(no error)"); }

TEST(Config, RejectsZeroRows) {
  EXPECT_THAT(ErrorOf(Toml("rows", "rows = 0")), HasSubstr("array.rows = 0"));
}

TEST(Config, RejectsUnknownDtype) {
  EXPECT_THAT(ErrorOf(Toml("dtype", "dtype = \"fp8\"")), HasSubstr("array.dtype = \"fp8\""));
}

TEST(Config, RejectsBufferThatIsNotWholeRows) {
  EXPECT_THAT(ErrorOf(Toml("unified_buffer_bytes", "unified_buffer_bytes = 4097")),
              HasSubstr("buffers.unified_buffer_bytes = 4097: must be a whole number"));
}

TEST(Config, RejectsBufferTooSmallForOneTile) {
  EXPECT_THAT(ErrorOf(Toml("unified_buffer_bytes", "unified_buffer_bytes = 12")),
              HasSubstr("too small for one tile"));
  EXPECT_THAT(ErrorOf(Toml("accumulator_bytes", "accumulator_bytes = 16")),
              HasSubstr("buffers.accumulator_bytes = 16: too small for one tile"));
}

TEST(Config, RejectsNonPowerOfTwoWhereRequired) {
  EXPECT_THAT(ErrorOf(Toml("channels", "channels = 3")),
              HasSubstr("memory.channels = 3: must be a power of two"));
  EXPECT_THAT(ErrorOf(Toml("interleave_bytes", "interleave_bytes = 100")),
              HasSubstr("memory.interleave_bytes = 100: must be a power of two"));
  EXPECT_THAT(ErrorOf(Toml("bytes", "bytes = 1000000")),
              HasSubstr("memory.bytes = 1000000: must be a power of two"));
}

TEST(Config, MemoryIsAtLeast32KiB) {
  // 32 KiB is the Tang Nano 20K's device memory (block SRAM); less is refused.
  EXPECT_EQ(ErrorOf(Toml("bytes", "bytes = 32768")), "(no error)");
  EXPECT_THAT(ErrorOf(Toml("bytes", "bytes = 16384")),
              HasSubstr("memory.bytes = 16384: must be between 32768 and"));
}

TEST(Config, RejectsZeroFifoAndQueues) {
  EXPECT_THAT(ErrorOf(Toml("weight_fifo_tiles", "weight_fifo_tiles = 0")),
              HasSubstr("buffers.weight_fifo_tiles = 0"));
  EXPECT_THAT(ErrorOf(Toml("command_queue_depth", "command_queue_depth = 0")),
              HasSubstr("queues.command_queue_depth = 0"));
}

// queues.load_credits (the LOAD row reader's credits) may be left out: 16, tiny's. Given, it is a
// power of two from 2 to 128, the RTL's range (systole_dma_load, systole_regs).
TEST(Config, LoadCreditsAreOptionalAndAPowerOfTwoFrom2To128) {
  EXPECT_EQ(ParseConfig(Toml(), "t.toml").load_credits, 16u);
  EXPECT_EQ(ParseConfig(Toml("token_capacity", "token_capacity = 255\nload_credits = 64"), "t.toml").load_credits, 64u);
  EXPECT_THAT(ErrorOf(Toml("token_capacity", "token_capacity = 255\nload_credits = 24")),
              HasSubstr("queues.load_credits = 24: must be a power of two"));
  EXPECT_THAT(ErrorOf(Toml("token_capacity", "token_capacity = 255\nload_credits = 1")),
              HasSubstr("queues.load_credits = 1"));
  EXPECT_THAT(ErrorOf(Toml("token_capacity", "token_capacity = 255\nload_credits = 256")),
              HasSubstr("queues.load_credits = 256"));
  EXPECT_EQ(LoadConfig("tiny").load_credits, 16u);
  EXPECT_EQ(LoadConfig("small").load_credits, 32u);
}

TEST(Config, RejectsMissingField) {
  EXPECT_THAT(ErrorOf(Toml("mhz", "")), HasSubstr("clock.mhz is missing"));
}

TEST(Config, RejectsNegativeAndNonInteger) {
  EXPECT_THAT(ErrorOf(Toml("rows", "rows = -4")), HasSubstr("array.rows = -4: must not be negative"));
  EXPECT_THAT(ErrorOf(Toml("rows", "rows = \"four\"")), HasSubstr("array.rows must be an integer"));
}

TEST(Config, SyntaxErrorGivesLineAndColumn) {
  EXPECT_THAT(ErrorOf(Toml("rows", "rows = = 4")), HasSubstr("test.toml:3:"));
}

TEST(Config, RejectsLongName) {
  EXPECT_THAT(ErrorOf(Toml("name", "name = \"a-name-longer-than-16\"")),
              HasSubstr("must be at most 16 characters"));
}

TEST(Config, UnknownNameListsKnownOnes) {
  try {
    LoadConfig("no-such-config");
    FAIL() << "expected an error";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("unknown configuration 'no-such-config'"));
    EXPECT_THAT(error.what(), HasSubstr("small-int8"));
  }
}

TEST(Config, LoadsByPathWhenAPersonGivesOne) {
  const Config config = LoadConfigNameOrFile(std::string(SYSTOLE_SOURCE_DIR) + "/configs/tiny.toml");
  EXPECT_EQ(config.name, "tiny");
  EXPECT_EQ(LoadConfigNameOrFile("tiny"), config);
}

std::string LoadError(const std::function<Config()>& load) {
  try {
    load();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "<no error>";
}

// A configuration name may come from a program, a bundle or a model file: LoadConfig takes it
// as a name only, so such a file cannot make a tool read /dev/zero (until memory runs out),
// /dev/stdin (forever) or any readable file as TOML.
TEST(Config, NamesFromFilesAreNeverPaths) {
  const std::string tiny = std::string(SYSTOLE_SOURCE_DIR) + "/configs/tiny.toml";
  // (/dev/null, not /dev/zero: were this to regress, the test must fail, not eat the memory.)
  for (const std::string& name : {tiny, std::string("/dev/null"), std::string("../configs/tiny"),
                                  std::string("tiny.toml"), std::string(""), std::string("a-name-of-17-char")}) {
    EXPECT_THAT(LoadError([&] { return LoadConfig(name); }), HasSubstr("is not a name")) << name;
  }
  EXPECT_TRUE(IsConfigName("small-int8"));
  EXPECT_FALSE(IsConfigName("small/int8"));
}

TEST(Config, FilesAreRegularAndSmall) {
  EXPECT_EQ(LoadError([] { return LoadConfigFile("/dev/null"); }), "/dev/null: not a regular file");
  const std::filesystem::path big =
      std::filesystem::path(::testing::TempDir()) / ("systole_big_config_" + std::to_string(::getpid()) + ".toml");
  std::ofstream(big) << std::string(kMaxConfigFileBytes, '#') << "\n";
  EXPECT_THAT(LoadError([&] { return LoadConfigFile(big); }), HasSubstr("(at most 1048576)"));
  std::filesystem::remove(big);
}

}  // namespace
}  // namespace systole
