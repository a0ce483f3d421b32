// Every kind of mistake gets a diagnostic at the exact line and column with a message that says
// what was wrong and what was expected.
#include <gtest/gtest.h>

#include "tests/asm/asm_test_util.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::assembly {
namespace {

using testing::Errors;
using testing::FirstError;

TEST(AssemblerErrors, FullFormatNamesFileLineAndColumn) {
  const std::vector<Diagnostic> errors =
      Errors("halt\n\nload    rwos=3, rows=1, elems=1\n", "mlp.s");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].ToString(),
            "mlp.s:3:9: error: unknown field 'rwos' for 'load' (expected one of: mem, widen, dram, "
            "stride, row, col, rows, elems)");
  try {
    Assemble("halt\nbogus\n", "x.s");
    FAIL();
  } catch (const AssemblyError& error) {
    EXPECT_STREQ(error.what(),
                 "x.s:2:1: error: unknown mnemonic 'bogus' (expected one of: load, store, "
                 "load_weights, matmul, activate, vector, pool, sync, interrupt, halt, reduce, accvec)");
  }
}

TEST(AssemblerErrors, UnknownMnemonicAndDirective) {
  EXPECT_EQ(FirstError("  lod rows=1"),
            "1:3: unknown mnemonic 'lod' (expected one of: load, store, load_weights, matmul, "
            "activate, vector, pool, sync, interrupt, halt, reduce, accvec)");
  EXPECT_EQ(FirstError(".dta X, at=0"),
            "1:1: unknown directive '.dta' (expected one of: .equ, .data, .values, .input, "
            ".output, .text, .config, .word)");
  EXPECT_EQ(FirstError("= 3"), "1:1: expected an instruction or a directive, got '='");
}

TEST(AssemblerErrors, UnknownField) {
  EXPECT_EQ(FirstError("halt code=1"), "1:6: unknown field 'code': 'halt' takes no fields");
  EXPECT_EQ(FirstError("interrupt cod=1"),
            "1:11: unknown field 'cod' for 'interrupt' (expected one of: code)");
}

TEST(AssemblerErrors, DuplicateField) {
  EXPECT_EQ(FirstError("load rows=1, elems=1, rows=2"),
            "1:23: duplicate field 'rows' (already given at column 6)");
  EXPECT_EQ(FirstError("matmul rows=1, k=1, pop, pop"),
            "1:26: duplicate field 'pop' (already given at column 21)");
  EXPECT_EQ(FirstError("load rows=1, elems=1, wait=mxu, wait=vector"),
            "1:33: duplicate 'wait' (already given at column 23)");
}

TEST(AssemblerErrors, MissingEqualsOrComma) {
  EXPECT_EQ(FirstError("load mem ub"),
            "1:10: missing '=' after 'mem' of 'load' (expected mem=VALUE), got 'ub'");
  EXPECT_EQ(FirstError("load rows 1"),
            "1:11: missing '=' after 'rows' of 'load' (expected rows=VALUE), got '1'");
  EXPECT_EQ(FirstError("load rows=1 elems=1"),
            "1:13: expected ',' or end of line after the value of 'rows', got 'elems'");
  EXPECT_EQ(FirstError("load rows=1,, elems=1"), "1:13: expected a field name, got ','");
  EXPECT_EQ(FirstError("load rows=1,"), "1:13: expected a field name, got end of line");
  EXPECT_EQ(FirstError("load rows="), "1:11: expected a value, got end of line");
  EXPECT_EQ(FirstError("load signal store"),
            "1:13: missing '=' after 'signal' of 'load' (expected signal=unit|unit), got 'store'");
}

TEST(AssemblerErrors, BadNumbers) {
  EXPECT_EQ(FirstError("load rows=0x1g, elems=1"),
            "1:11: bad number '0x1g' (expected decimal, 0x hex or a float like 1.5e-3)");
  EXPECT_EQ(FirstError("load rows=1.2.3, elems=1"),
            "1:11: bad number '1.2.3' (expected decimal, 0x hex or a float like 1.5e-3)");
  EXPECT_EQ(FirstError("load rows=12abc, elems=1"),
            "1:11: bad number '12abc' (expected decimal, 0x hex or a float like 1.5e-3)");
  EXPECT_EQ(FirstError("load rows=99999999999999999999, elems=1"),
            "1:11: number '99999999999999999999' is too large (at most 0x7fffffffffffffff)");
  EXPECT_EQ(FirstError("load rows=1.5, elems=1"),
            "1:11: field 'rows' of 'load' needs an integer, got '1.5'");
  EXPECT_EQ(FirstError("load rows=-1.5, elems=1"),
            "1:11: field 'rows' of 'load' needs an integer, got '-1.5'");
  EXPECT_EQ(FirstError("load rows=1+0.5, elems=1"),
            "1:12: '+' cannot combine floating-point values (a float must stand alone)");
  EXPECT_EQ(FirstError("load rows=0x7fffffffffffffff+1, elems=1"),
            "1:29: arithmetic overflows 64 bits");
  EXPECT_EQ(FirstError("load rows=(1, elems=1"), "1:13: expected ')', got ','");
  EXPECT_EQ(FirstError("load rows=\x01, elems=1"), "1:11: expected a value, got '\\x01'");
}

TEST(AssemblerErrors, ValuesOutOfRangeComeFromEncode) {
  EXPECT_EQ(FirstError("load rows=0, elems=1"),
            "1:6: load: field 'rows' = 0 is out of range 1..65535");
  EXPECT_EQ(FirstError("load rows=1, elems=1, col=65536"),
            "1:23: load: field 'col' = 65536 does not fit 16 bits");
  EXPECT_EQ(FirstError("load rows=1, elems=1, dram=0x1000000000000"),
            "1:23: load: field 'dram' = 281474976710656 does not fit 48 bits");
  EXPECT_EQ(FirstError("activate rows=1, shift=63"),
            "1:18: activate: field 'shift' = 63 is out of range 0..62");
  EXPECT_EQ(FirstError("activate rows=1, zp=128"),
            "1:18: activate: field 'zp' = 128 does not fit 8 signed bits");
  EXPECT_EQ(FirstError("vector rows=1, func=4"),
            "1:16: vector: field 'func' = 4 is out of range 0..3");
  EXPECT_EQ(FirstError("matmul rows=1, k=1, pop=2"),
            "1:21: matmul: field 'pop' = 2 does not fit 1 bits");
  EXPECT_EQ(FirstError("accvec rows=1, op=7"),
            "1:16: accvec: field 'op' = 7 is out of range 0..6");
  EXPECT_EQ(FirstError("accvec rows=1, scalar=2"),
            "1:16: accvec: field 'scalar' = 2 does not fit 1 bits");
  EXPECT_EQ(FirstError("accvec rows=1, a=0x1000000"),
            "1:16: accvec: field 'a' = 16777216 does not fit 24 bits");
  EXPECT_EQ(FirstError("activate rows=1, scale=0x100000000"),
            "1:18: activate: field 'scale' = 4294967296 does not fit 32 bits");
  // An omitted field is zero; the message says so and points at the mnemonic.
  EXPECT_EQ(FirstError("  load elems=1"),
            "1:3: load: field 'rows' = 0 is out of range 1..65535 (omitted fields are zero; "
            "give 'rows=')");
  EXPECT_EQ(FirstError("load rows=-1, elems=1"),
            "1:11: field 'rows' of 'load' must not be negative, got -1");
  EXPECT_EQ(FirstError("activate rows=1, scale=-2147483649"),
            "1:24: field 'scale' of 'activate' = -2147483649 is below -2147483648 (the field "
            "holds 32 bits)");
  EXPECT_EQ(FirstError("activate rows=1, lo=-32769"),
            "1:21: field 'lo' of 'activate' = -32769 is below -32768 (the field holds 16 bits)");
  EXPECT_EQ(FirstError("activate rows=1, lo=1e39"),
            "1:21: field 'lo' of 'activate': '1e39' is too large for fp32");
  EXPECT_EQ(FirstError("activate rows=1, hi=3.4e38"),
            "1:21: field 'hi' of 'activate': '3.4e38' rounds to infinity in bf16 (largest is "
            "3.3895e+38)");
}

TEST(AssemblerErrors, EveryBadFieldOfALineIsReported) {
  const std::vector<Diagnostic> errors = Errors("load rows=0, elems=0, col=70000");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].column, 6u);
  EXPECT_EQ(errors[1].column, 14u);
  EXPECT_EQ(errors[2].column, 23u);
}

TEST(AssemblerErrors, Tokens) {
  EXPECT_EQ(FirstError("load rows=1, elems=1, wait=load"),
            "1:23: load: wait names its own unit 'load'");
  EXPECT_EQ(FirstError("matmul rows=1, k=1, signal=mxu"),
            "1:21: matmul: signal names its own unit 'mxu'");
  EXPECT_EQ(FirstError("halt wait=mxu"),
            "1:6: halt: runs in the sequencer and takes no wait tokens");
  EXPECT_EQ(FirstError("load rows=1, elems=1, wait=mxu|gpu"),
            "1:32: expected a unit name in 'wait', got 'gpu' (expected one of: load, weight, mxu, "
            "vector, store)");
  EXPECT_EQ(FirstError("load rows=1, elems=1, wait=seq"),
            "1:28: expected a unit name in 'wait', got 'seq' (expected one of: load, weight, mxu, "
            "vector, store)");
  EXPECT_EQ(FirstError("load rows=1, elems=1, wait=mxu|mxu"),
            "1:32: unit 'mxu' named twice in 'wait'");
  EXPECT_EQ(FirstError("load rows=1, elems=1, wait=mxu vector"),
            "1:32: expected ',' or end of line after the units of 'wait', got 'vector'");
}

TEST(AssemblerErrors, EnumValues) {
  EXPECT_EQ(FirstError("vector rows=1, func=sigmoid"),
            "1:21: unknown value 'sigmoid' for field 'func' of 'vector' (expected one of: none, "
            "relu, relu6, clamp)");
  EXPECT_EQ(FirstError("accvec rows=1, op=rsqrt"),
            "1:19: unknown value 'rsqrt' for field 'op' of 'accvec' (expected one of: add, "
            "sub, mul, max, min, div, sqrt)");
  EXPECT_EQ(FirstError("accvec rows=1, imm=1e39"),
            "1:20: field 'imm' of 'accvec': '1e39' is too large for fp32");
  EXPECT_EQ(FirstError("load mem=dram, rows=1, elems=1"),
            "1:10: unknown value 'dram' for field 'mem' of 'load' (expected one of: ub, acc)");
}

TEST(AssemblerErrors, Symbols) {
  EXPECT_EQ(FirstError("load rows=ROWS, elems=1"), "1:11: unknown symbol 'ROWS'");
  EXPECT_EQ(FirstError(".equ A, B\n.equ B, A + 1\nload rows=A, elems=1"),
            "2:9: symbol 'A' is defined in terms of itself");
  EXPECT_EQ(FirstError(".equ A, 1\n.equ A, 2"), "2:6: symbol 'A' is already defined at line 1");
  EXPECT_EQ(FirstError(".equ X, 1\n.data X, at=0, dtype=int8\n.values 1"),
            "2:7: symbol 'X' is already defined at line 1");
  EXPECT_EQ(FirstError(".equ bits, 1"),
            "1:6: 'bits' cannot name a symbol (bits, wait and signal are reserved; at most 128 "
            "characters)");
  EXPECT_EQ(FirstError(".equ A 1"), "1:8: expected ',' after the name, got '1'");
  EXPECT_EQ(FirstError(".equ 5, 1"), "1:6: expected a name after '.equ', got '5'");
  EXPECT_EQ(FirstError(".equ A,"), "1:8: expected a value, got end of line");
  EXPECT_EQ(FirstError(".equ A, 1 2"), "1:11: unexpected '2' after the value");
  // The error in a definition is reported once, where it is, not at every use.
  const std::vector<Diagnostic> errors =
      Errors(".equ A, nope\nload rows=A, elems=1\nload rows=A, elems=1\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 1u);
  EXPECT_EQ(errors[0].message, "unknown symbol 'nope'");
}

TEST(AssemblerErrors, DeepSymbolChainsStopCleanly) {
  std::string source;
  for (int i = 0; i < 200; ++i)
    source += ".equ S" + std::to_string(i) + ", S" + std::to_string(i + 1) + "\n";
  source += ".equ S200, 1\nload rows=S0, elems=1\n";
  const std::vector<Diagnostic> errors = Errors(source);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].message.find("nested more than 64 deep"), std::string::npos);
  std::string parens = "load elems=1, rows=" + std::string(100, '(') + "1" + std::string(100, ')');
  EXPECT_NE(FirstError(parens).find("parentheses nested too deeply"), std::string::npos);
}

TEST(AssemblerErrors, DataDirectives) {
  EXPECT_EQ(FirstError(".values 1, 2"), "1:1: '.values' without a preceding '.data'");
  EXPECT_EQ(FirstError(".data A, at=0x10, dtype=int4\n.values 1"),
            "1:25: unknown dtype 'int4' (expected one of: int8, int32, bf16, fp32)");
  EXPECT_EQ(FirstError(".data A, at=0x10\n.values 1"),
            "1:1: '.data' needs 'dtype=' (options: at, dtype)");
  EXPECT_EQ(FirstError(".data A, at=0x10, dtype=int8, shape=4\n.values 1"),
            "1:31: unknown option 'shape' for '.data' (expected one of: at, dtype)");
  EXPECT_EQ(FirstError(".data A, at=0x10, at=0x20, dtype=int8\n.values 1"),
            "1:19: duplicate option 'at'");
  EXPECT_EQ(FirstError(".data A, at 0x10, dtype=int8"),
            "1:13: missing '=' after 'at' (expected at=VALUE), got '0x10'");
  EXPECT_EQ(FirstError(".data A, at=-16, dtype=int8\n.values 1"),
            "1:13: address must not be negative, got -16");
  EXPECT_EQ(FirstError(".data A, at=0, dtype=int8\n.values 128"),
            "2:9: value 128 is out of range for int8 (-128..127)");
  EXPECT_EQ(FirstError(".data A, at=0, dtype=int8\n.values 1.5"),
            "2:9: int8 data needs integers, got '1.5'");
  EXPECT_EQ(FirstError(".data A, at=0, dtype=bf16\n.values 1e39"),
            "2:9: bf16 value: '1e39' is too large for fp32");
  EXPECT_EQ(FirstError(".data A, at=0, dtype=bf16\n.values bits(0x10000)"),
            "2:9: bits() = 65536 does not fit 16 bits");
  EXPECT_EQ(FirstError(".data A, at=0, dtype=int8\n.values 1 2"),
            "2:11: expected ',' between values, got '2'");
  EXPECT_EQ(FirstError(".data A, at=0, dtype=int8\n.values"),
            "2:8: expected values after '.values'");
  EXPECT_EQ(FirstError(".data A, at=0, dtype=int8\nhalt"), "1:1: data 'A' has no '.values'");
  // The .values of a broken .data are not reported again (or attached to another segment).
  const std::vector<Diagnostic> errors =
      Errors(".data A, at=0, dtype=int8\n.values 1\n.data B, at=0x10, dtype=nope\n.values 1\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 3u);
}

TEST(AssemblerErrors, Shapes) {
  EXPECT_EQ(FirstError(".input X, at=0, dtype=int8, shape=8y16"),
            "1:35: bad shape '8y16': each dimension must be a decimal number (expected "
            "dimensions like 8x16)");
  EXPECT_EQ(FirstError(".input X, at=0, dtype=int8, shape=8x0"),
            "1:35: bad shape '8x0': dimensions must be at least 1 (expected dimensions like 8x16)");
  EXPECT_EQ(FirstError(".input X, at=0, dtype=int8, shape=8x"),
            "1:35: bad shape '8x': each dimension must be a decimal number (expected dimensions "
            "like 8x16)");
  EXPECT_EQ(FirstError(".input X, at=0, dtype=int8, shape=ROWS"),
            "1:35: bad shape 'ROWS': not a list of numbers (expected dimensions like 8x16)");
  EXPECT_EQ(FirstError(".output Y, at=0, dtype=int8"),
            "1:1: '.output' needs 'shape=' (options: at, dtype, shape)");
  EXPECT_EQ(FirstError(".input X, at=0, dtype=int8, shape=1x1x1x1x1x1x1x1x1"),
            "1:35: bad shape '1x1x1x1x1x1x1x1x1': at most 8 dimensions (expected dimensions "
            "like 8x16)");
  EXPECT_EQ(FirstError(".input X, at=0x7ffffffffffffff0, dtype=int32, shape=4611686018427387904"),
            "1:1: input 'X' runs past the end of the address space");
}

TEST(AssemblerErrors, TextAndConfig) {
  EXPECT_EQ(FirstError(".text at=0\n.text at=0x100"), "2:1: '.text' given twice (first at line 1)");
  EXPECT_EQ(FirstError(".text 0x100"), "1:7: expected an option (at), got '0x100'");
  EXPECT_EQ(FirstError(".text at=-1"), "1:10: address must not be negative, got -1");
  EXPECT_EQ(FirstError(".text at=0x110"),
            "1:10: instructions must start on a 32-byte boundary, got 0x110");
  EXPECT_EQ(FirstError(".config"),
            "1:8: expected a configuration name like small or small-int8, got ''");
  EXPECT_EQ(FirstError(".config a b"),
            "1:9: expected a configuration name like small or small-int8, got 'a b'");
  EXPECT_EQ(FirstError(".config a\n.config b"), "2:1: '.config' given twice (first at line 1)");
  // Names only (LoadConfig): a path here once made `systole run` read that file as TOML.
  EXPECT_EQ(FirstError(".config /dev/zero"),
            "1:9: expected a configuration name like small or small-int8, got '/dev/zero'");
  EXPECT_EQ(FirstError(".config ../configs/tiny.toml"),
            "1:9: expected a configuration name like small or small-int8, got '../configs/tiny.toml'");
}

// The transcendental functions are bf16-only (docs/ISA.md, VECTOR): an int8 .config refuses
// them at the `math=` operand, wherever the .config line is; bf16 ones and unknown names pass.
TEST(AssemblerErrors, MathNeedsABf16Configuration) {
  EXPECT_EQ(FirstError("vector op=pass, a=0, rows=1, math=exp\nhalt\n.config small-int8"),
            "1:30: 'math' needs a bf16 configuration; 'small-int8' (line 3) is int8");
  EXPECT_NO_THROW(Assemble(".config small\nvector op=sub, bcol, a=0, b=1, rows=1, math=gelu_erf\nhalt\n",
                           "ok.s"));
  EXPECT_NO_THROW(Assemble(".config small-int8\nvector op=pass, bcol, a=0, rows=1\nhalt\n", "ok.s"));
}

TEST(AssemblerErrors, RawWords) {
  EXPECT_EQ(FirstError(".word 0x0a"), "1:7: '.word' needs exactly 64 hex digits (32 bytes), got 2");
  EXPECT_EQ(FirstError(".word 0x" + std::string(66, '0')),
            "1:7: '.word' needs exactly 64 hex digits (32 bytes), got 66");
  EXPECT_EQ(FirstError(".word 10"), "1:7: '.word' needs 0x and 64 hex digits, got '10'");
  EXPECT_EQ(FirstError(".word"), "1:6: '.word' needs 0x and 64 hex digits, got end of line");
  EXPECT_EQ(FirstError(".word 0x" + std::string(64, '0') + " 1"),
            "1:74: unexpected '1' after the '.word' value");
}

TEST(AssemblerErrors, OverlapsAreReportedAtTheDefinition) {
  EXPECT_EQ(FirstError(".data A, at=0x100, dtype=int32\n.values 1, 2\n"
                       ".data B, at=0x104, dtype=int8\n.values 1\n"),
            "3:1: data 'B' [0x104, 0x105) overlaps data 'A' [0x100, 0x108)");
  EXPECT_EQ(FirstError(".data A, at=0x20, dtype=int8\n.values 1\nhalt\nhalt\n"),
            "1:1: data 'A' [0x20, 0x21) overlaps the program text [0x0, 0x40)");
}

TEST(AssemblerErrors, ErrorsOnManyLinesAreAllReportedInOrder) {
  const std::vector<Diagnostic> errors = Errors("bogus\nhalt\nload rows=0, elems=1\n.values 1\n");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].line, 1u);
  EXPECT_EQ(errors[1].line, 3u);
  EXPECT_EQ(errors[2].line, 4u);
}

TEST(AssemblerErrors, TooManyErrorsStops) {
  std::string source;
  for (int i = 0; i < 1000; ++i) source += "bogus\n";
  const std::vector<Diagnostic> errors = Errors(source);
  ASSERT_EQ(errors.size(), kMaxDiagnostics + 1);
  EXPECT_EQ(errors.back().message, "too many errors; stopped");
}

TEST(AssemblerErrors, UnreadableFile) {
  try {
    AssembleFile("/nonexistent/x.s");
    FAIL();
  } catch (const AssemblyError& error) {
    EXPECT_STREQ(error.what(), "/nonexistent/x.s: error: cannot read the file");
  }
}

}  // namespace
}  // namespace systole::assembly
