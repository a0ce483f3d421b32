// Parse errors: exact file:line:column, "expected X, found Y", and no crash or hang on any
// prefix of a real file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/hlo/hlo_test_util.hpp"

namespace systole::hlo {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing::ParseError;

TEST(HloParseErrors, MissingEquals) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a f32[] parameter(0)\n}\n"), "bad.hlo:2:5: expected '=', found 'f32'");
}

TEST(HloParseErrors, UnknownElementType) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f31[2] parameter(0)\n}\n"),
            "bad.hlo:2:7: expected an element type (pred, s8, s16, s32, s64, u8, u16, u32, u64, bf16, f16, f32, "
            "f64, f8e4m3fn, f8e5m2), found 'f31'");
}

TEST(HloParseErrors, UnsupportedOpNamesOpAndInstruction) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] custom-call(a), custom_call_target=\"x\"\n}\n"),
            "bad.hlo:3:19: unsupported op 'custom-call' in instruction 'b'");
}

TEST(HloParseErrors, UnknownOperandPointsAtIt) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] add(a, %c)\n}\n"),
            "bad.hlo:3:26: unknown operand 'c' of instruction 'b'");
}

TEST(HloParseErrors, UnknownComputation) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] call(a), to_apply=nowhere\n}\n"),
            "bad.hlo:3:37: unknown computation 'nowhere' called by instruction 'b'");
}

TEST(HloParseErrors, MissingClosingBrace) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[2] parameter(0)\n"), "bad.hlo:3:1: expected '}' closing computation 'e', found end of input");
}

TEST(HloParseErrors, UnterminatedBlockComment) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[2] parameter(0) /* oops\n}\n"), "bad.hlo:2:27: unterminated /* comment");
}

TEST(HloParseErrors, ConstantWithWrongValueCount) {
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n"),
            "bad.hlo:2:28: constant of shape f32[3] needs 3 value(s), found 2");
}

TEST(HloParseErrors, BadNumber) {
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT c = f32[] constant(x)\n}\n"), "bad.hlo:2:27: expected a number, found 'x'");
}

TEST(HloParseErrors, DuplicateInstructionName) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] parameter(1)\n}\n"),
            "bad.hlo:3:3: instruction 'a' is defined twice in computation 'e'");
}

TEST(HloParseErrors, TwoRoots) {
  EXPECT_THAT(ParseError("ENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n"),
              StartsWith("bad.hlo:3:8: second ROOT 'b' in computation 'e'"));
}

TEST(HloParseErrors, TwoEntries) {
  EXPECT_THAT(ParseError("ENTRY e {\n  ROOT a = f32[] parameter(0)\n}\nENTRY f {\n  ROOT a = f32[] parameter(0)\n}\n"),
              StartsWith("bad.hlo:4:7: second ENTRY computation 'f'"));
}

TEST(HloParseErrors, BadWindowAndDimLabels) {
  const char* prefix = "ENTRY e {\n  x = f32[1,5,5,1] parameter(0)\n  k = f32[3,3,1,1] parameter(1)\n";
  EXPECT_EQ(ParseError(std::string(prefix) +
                       "  ROOT c = f32[1,3,3,1] convolution(x, k), window={size=3x3 stride=1}, dim_labels=b01f_01io->b01f\n}\n"),
            "bad.hlo:4:68: window stride= has 1 dimension(s) but size= has 2");
  EXPECT_THAT(ParseError(std::string(prefix) +
                         "  ROOT c = f32[1,3,3,1] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->bxyf\n}\n"),
              StartsWith("bad.hlo:4:74: bad dim_labels 'b01f_01io->bxyf'"));
}

TEST(HloParseErrors, EmptyInputAndGarbage) {
  EXPECT_EQ(ParseError(""), "bad.hlo:1:1: expected an HLO module, found end of input");
  EXPECT_EQ(ParseError("// only a comment\n"), "bad.hlo:1:1: expected an HLO module, found end of input");
  EXPECT_EQ(ParseError("HloModule m\n}"), "bad.hlo:2:1: expected a computation name, ENTRY or end of input, found '}'");
  EXPECT_THAT(ParseError("ENTRY e {\n  a = f32[99999999999] parameter(0)\n}\n"), HasSubstr("2:11: a dimension size"));
  EXPECT_THAT(ParseError("ENTRY e {\n  a = f32[2] parameter(0), metadata={op_name=\"x}\n}\n"), HasSubstr("unterminated string"));
}

TEST(HloParseErrors, ControlBytesArePrintedEscaped) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = \x01 parameter(0)\n}\n"),
            "bad.hlo:2:7: expected a shape (element type such as f32, or '('), found '\\x01'");
}

TEST(HloParseErrors, EveryPrefixOfARealFileFailsCleanly) {
  std::ifstream file(std::string(SYSTOLE_SHARED_DIR) + "/corpus/hlo/07_mha_softmax_attention_bf16.hlo");
  ASSERT_TRUE(file) << "corpus file missing";
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string text = buffer.str();
  std::size_t parsed = 0;
  for (std::size_t length = 0; length < text.size(); length += 7) {
    try {
      Module module = ParseModule(std::string_view(text).substr(0, length));
      Verify(module);
      ++parsed;
    } catch (const HloError&) {
    }
  }
  EXPECT_LE(parsed, 2u);  // only prefixes that end after the final '}'
}

}  // namespace
}  // namespace systole::hlo
