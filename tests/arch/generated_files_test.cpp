// The checked-in RTL headers and doc tables must equal what the definitions generate now, so
// that the C++, the RTL and the docs never drift. Fix a failure with `make generate`.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "arch/gen/generate.hpp"

namespace systole::gen {
namespace {

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first line where two texts differ, for a readable failure message.
std::string FirstDifference(const std::string& have, const std::string& want) {
  std::istringstream a(have), b(want);
  std::string line_a, line_b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) return "identical";
    if (line_a != line_b || more_a != more_b) {
      return "line " + std::to_string(line) + ":\n  checked in: " + (more_a ? line_a : "(end)") +
             "\n  generated:  " + (more_b ? line_b : "(end)");
    }
  }
}

TEST(GeneratedFiles, AreCurrent) {
  const std::filesystem::path root = SYSTOLE_SOURCE_DIR;
  for (const Output& output : AllOutputs(root)) {
    const std::string have = Read(root / output.path);
    EXPECT_TRUE(have == output.content)
        << output.path << " is stale (run `make generate`); first difference at "
        << FirstDifference(have, output.content);
  }
}

TEST(GeneratedFiles, ReplaceSectionKeepsTheRest) {
  const std::string doc = "a\n<!-- BEGIN GENERATED: x (tool) -->\nold\n<!-- END GENERATED: x -->\nb\n";
  EXPECT_EQ(ReplaceSection(doc, "x", "new\n"),
            "a\n<!-- BEGIN GENERATED: x (tool) -->\nnew\n<!-- END GENERATED: x -->\nb\n");
  EXPECT_THROW(ReplaceSection("no markers", "x", ""), std::runtime_error);
}

TEST(GeneratedFiles, RtlHeadersNameEveryOpcodeAndRegister) {
  const std::string isa = RtlIsaHeader();
  EXPECT_NE(isa.find("localparam logic [7:0] OP_MATMUL = 8'h04;"), std::string::npos);
  EXPECT_NE(isa.find("MATMUL_ROWS_LSB = 80;"), std::string::npos);
  const std::string regs = RtlRegsHeader();
  EXPECT_NE(regs.find("REG_DOORBELL = 12'h06C;"), std::string::npos);
  EXPECT_NE(regs.find("ERR_TOKEN_UNDERFLOW = 8'd11;"), std::string::npos);
}

}  // namespace
}  // namespace systole::gen
