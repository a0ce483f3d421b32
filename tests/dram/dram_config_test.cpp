// The [dram] section of a configuration: optional, HBM2-like defaults, every field checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "arch/config/config.hpp"

namespace systole {
namespace {

using ::testing::HasSubstr;

std::string Toml(const std::string& dram) {
  return "name = \"t\"\ndescription = \"d\"\n"
         "[array]\nrows = 4\ncols = 4\ndtype = \"int8\"\n"
         "[buffers]\nunified_buffer_bytes = 4096\naccumulator_bytes = 1024\n"
         "weight_fifo_tiles = 2\n"
         "[memory]\nbytes = 1048576\nchannels = 2\ninterleave_bytes = 256\n" +
         dram + "[queues]\ncommand_queue_depth = 2\ntoken_capacity = 255\n[clock]\nmhz = 48\n";
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseConfig(text, "x.toml");
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(DramConfig, AbsentSectionGivesTheHbm2Defaults) {
  const Config config = ParseConfig(Toml(""));
  EXPECT_EQ(config.dram, DramConfig{});
  EXPECT_EQ(config.dram.t_rcd, 14u);
  EXPECT_EQ(config.dram.Banks(), 16u);
  EXPECT_EQ(config.DramRowsPerBank(), 32u);  // 512 KiB per channel / (16 banks x 1 KiB)
}

TEST(DramConfig, FieldsAreRead) {
  const Config config = ParseConfig(Toml("[dram]\nt_rcd = 20\nt_ras = 40\nbank_groups = 2\n"));
  EXPECT_EQ(config.dram.t_rcd, 20u);
  EXPECT_EQ(config.dram.t_ras, 40u);
  EXPECT_EQ(config.dram.bank_groups, 2u);
  EXPECT_EQ(config.dram.t_rp, DramConfig{}.t_rp);
}

TEST(DramConfig, EveryShippedConfigurationHasADramSection) {
  for (const auto& name : ListConfigs()) {
    const Config config = LoadConfig(name);
    EXPECT_GE(config.DramRowsPerBank(), 1u) << name;
  }
}

TEST(DramConfig, BadFieldsAreNamed) {
  EXPECT_THAT(ErrorOf(Toml("[dram]\nt_rcd = 0\n")),
              HasSubstr("x.toml: dram.t_rcd = 0: must be between 1 and 255"));
  EXPECT_THAT(ErrorOf(Toml("[dram]\nt_cas = 3\n")), HasSubstr("dram.t_cas: unknown field"));
  EXPECT_THAT(ErrorOf(Toml("[dram]\nbank_groups = 3\n")),
              HasSubstr("dram.bank_groups = 3: must be a power of two"));
  EXPECT_THAT(ErrorOf(Toml("[dram]\nt_ras = 10\n")),
              HasSubstr("dram.t_ras = 10: must be at least dram.t_rcd (14)"));
  EXPECT_THAT(ErrorOf(Toml("[dram]\nt_ccd_s = 1\n")),
              HasSubstr("dram.t_ccd_s = 1: must be at least dram.t_burst (2)"));
  EXPECT_THAT(ErrorOf(Toml("[dram]\nt_rfc = 5000\n")), HasSubstr("dram.t_rfc"));
  EXPECT_THAT(ErrorOf(Toml("[dram]\nt_rcd = \"x\"\n")), HasSubstr("dram.t_rcd must be an integer"));
  EXPECT_THAT(ErrorOf("dram = 3\n" + Toml("")), HasSubstr("dram must be a table"));
  EXPECT_THAT(ErrorOf(Toml("[dram]\nrow_bytes = 16384\nbank_groups = 16\nbanks_per_group = 16\n")),
              HasSubstr("less than one row"));
}

}  // namespace
}  // namespace systole
