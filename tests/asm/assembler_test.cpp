// The assembler's happy paths: every field kind, every directive, symbols and expressions.
#include "toolchain/asm/assembler.hpp"

#include <gtest/gtest.h>

#include "tests/asm/asm_test_util.hpp"
#include "toolchain/asm/literals.hpp"

namespace systole::assembly {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::Program;
using image::DataSegment;
using image::TensorDesc;
using image::DataType;
using image::SourceLine;

namespace {

using isa::Field;
using isa::Opcode;

isa::Instruction Decoded(const Program& program, std::size_t index) {
  return isa::DecodeOrThrow(program.words.at(index));
}

isa::Instruction One(std::string_view source) {
  const Program program = Assemble(source);
  EXPECT_EQ(program.words.size(), 1u);
  return Decoded(program, 0);
}

TEST(Assembler, LoadWithEveryField) {
  const isa::Instruction insn =
      One("load mem=acc, dram=0x100040, stride=64, row=3, col=2, rows=5, elems=7, wait=mxu|vector, "
          "signal=store");
  EXPECT_EQ(insn.opcode, Opcode::kLoad);
  EXPECT_EQ(insn[Field::kMem], 1u);
  EXPECT_EQ(insn[Field::kDram], 0x100040u);
  EXPECT_EQ(insn[Field::kStride], 64u);
  EXPECT_EQ(insn[Field::kRow], 3u);
  EXPECT_EQ(insn[Field::kCol], 2u);
  EXPECT_EQ(insn[Field::kRows], 5u);
  EXPECT_EQ(insn[Field::kElems], 7u);
  EXPECT_EQ(insn.wait, 0b01100);
  EXPECT_EQ(insn.signal, 0b10000);
}

TEST(Assembler, FieldOrderIsFreeAndOmittedFieldsAreZero) {
  EXPECT_EQ(One("store elems=1, rows=1, mem=ub"), One("store mem=ub, rows=1, elems=1"));
  const isa::Instruction insn = One("store rows=1, elems=1");
  EXPECT_EQ(insn[Field::kDram], 0u);
  EXPECT_EQ(insn[Field::kMem], 0u);
}

TEST(Assembler, FlagsAreBareWordsOrExplicitValues) {
  const isa::Instruction insn = One("matmul ub=1, acc=2, rows=3, k=4, pop, accumulate");
  EXPECT_EQ(insn[Field::kPop], 1u);
  EXPECT_EQ(insn[Field::kAccumulate], 1u);
  EXPECT_EQ(One("matmul rows=3, k=4, pop=1, accumulate=0")[Field::kAccumulate], 0u);
  EXPECT_EQ(One("matmul rows=3, k=4")[Field::kPop], 0u);
}

TEST(Assembler, EnumsByNameOrNumber) {
  EXPECT_EQ(One("vector op=max, func=relu6, rows=1")[Field::kOp], 3u);
  EXPECT_EQ(One("vector op=max, func=relu6, rows=1")[Field::kFunc], 2u);
  EXPECT_EQ(One("vector op=4, rows=1")[Field::kOp], 4u);
  EXPECT_EQ(One("pool op=sum, in_w=1, out_h=1, out_w=1, win_h=1, win_w=1, stride_h=1, stride_w=1")
                [Field::kOp],
            1u);
}

TEST(Assembler, ScaleTakesFloatsAsFp32AndIntegersAsRawInt32) {
  EXPECT_EQ(One("activate rows=1, scale=0.5")[Field::kScale], 0x3F000000u);
  EXPECT_EQ(One("activate rows=1, scale=-0.5")[Field::kScale], 0xBF000000u);
  EXPECT_EQ(One("activate rows=1, scale=1e-3")[Field::kScale], *ParseFp32("1e-3", false));
  EXPECT_EQ(One("activate rows=1, scale=12345")[Field::kScale], 12345u);
  EXPECT_EQ(One("activate rows=1, scale=-3")[Field::kScale], 0xFFFFFFFDu);
  EXPECT_EQ(One("activate rows=1, scale=-2147483648")[Field::kScale], 0x80000000u);
  EXPECT_EQ(One("activate rows=1, scale=0xffffffff")[Field::kScale], 0xFFFFFFFFu);
}

TEST(Assembler, AccVecWithEveryField) {
  const isa::Instruction insn = One(
      "accvec op=div, a=3, b=0x10, dst=0x20, rows=8, bcast, bcol, wait=mxu, signal=store");
  EXPECT_EQ(insn.opcode, Opcode::kAccVec);
  EXPECT_EQ(insn[Field::kOp], static_cast<std::uint64_t>(isa::AccOp::kDiv));
  EXPECT_EQ(insn[Field::kA], 3u);
  EXPECT_EQ(insn[Field::kB], 0x10u);
  EXPECT_EQ(insn[Field::kDst], 0x20u);
  EXPECT_EQ(insn[Field::kRows], 8u);
  EXPECT_EQ(insn[Field::kBcast], 1u);
  EXPECT_EQ(insn[Field::kBcol], 1u);
  EXPECT_EQ(insn.wait, isa::UnitBit(isa::Unit::kMxu));
  EXPECT_EQ(insn.signal, isa::UnitBit(isa::Unit::kStore));
  // The immediate: a float literal is fp32 (never bf16-rounded), an integer the raw bits.
  const isa::Instruction scaled = One("accvec op=mul, a=0, dst=0, rows=1, scalar, imm=0.1");
  EXPECT_EQ(scaled[Field::kScalar], 1u);
  EXPECT_EQ(scaled[Field::kImm], 0x3DCCCCCDu);
  EXPECT_EQ(One("accvec op=sqrt, rows=1, imm=0x7fc00001")[Field::kImm], 0x7FC00001u);
  EXPECT_EQ(One("accvec op=sub, rows=1, scalar, imm=-1e-8")[Field::kImm], *ParseFp32("1e-8", true));
}

TEST(Assembler, ClampBoundsTakeFloatsAsBf16AndIntegersAsRawInt16) {
  const isa::Instruction insn = One("activate rows=1, func=clamp, lo=-1.5, hi=6.0");
  EXPECT_EQ(insn[Field::kLo], 0xBFC0u);
  EXPECT_EQ(insn[Field::kHi], 0x40C0u);
  EXPECT_EQ(One("vector rows=1, lo=-8, hi=100")[Field::kLo], 0xFFF8u);
  EXPECT_EQ(One("vector rows=1, lo=-8, hi=100")[Field::kHi], 100u);
  EXPECT_EQ(One("vector rows=1, lo=0xff80")[Field::kLo], 0xFF80u);  // bf16 -infinity, raw
  // RNE as NUMERICS.md: 1 + 2^-8 ties to even (1.0); 1 + 3*2^-8 rounds up.
  EXPECT_EQ(One("vector rows=1, hi=1.00390625")[Field::kHi], 0x3F80u);
  EXPECT_EQ(One("vector rows=1, hi=1.01171875")[Field::kHi], 0x3F82u);
}

TEST(Assembler, SignedFieldsTakeNegativeValues) {
  EXPECT_EQ(One("activate rows=1, zp=-128").Signed(Field::kZeroPoint), -128);
  EXPECT_EQ(One("activate rows=1, zp=127").Signed(Field::kZeroPoint), 127);
}

TEST(Assembler, NumbersInEveryBase) {
  EXPECT_EQ(One("interrupt code=65535")[Field::kCode], 65535u);
  EXPECT_EQ(One("interrupt code=0xFFFF")[Field::kCode], 65535u);
  EXPECT_EQ(One("interrupt code=0x00_ff")[Field::kCode], 255u);
  EXPECT_EQ(One("load rows=1, elems=1, dram=0xFFFF_FFFF_FFFF")[Field::kDram], 0xFFFFFFFFFFFFu);
}

TEST(Assembler, ExpressionsAndSymbols) {
  const Program program = Assemble(R"(
    .equ BASE, 0x1000
    .equ ROWS, 2 * (3 + 1)          ; 8
    .equ NEG, -(ROWS - 10)          ; 2
    load rows=ROWS, elems=NEG*2, dram=BASE + ROWS*32 - 16, stride=--4
  )");
  const isa::Instruction insn = Decoded(program, 0);
  EXPECT_EQ(insn[Field::kRows], 8u);
  EXPECT_EQ(insn[Field::kElems], 4u);
  EXPECT_EQ(insn[Field::kDram], 0x1000u + 8 * 32 - 16);
  EXPECT_EQ(insn[Field::kStride], 4u);
}

TEST(Assembler, FloatConstantsFeedScaleAndClamp) {
  const Program program =
      Assemble(".equ HALF, 0.5\n.equ LO, -HALF\nactivate rows=1, scale=HALF, lo=LO\n");
  EXPECT_EQ(Decoded(program, 0)[Field::kScale], 0x3F000000u);
  EXPECT_EQ(Decoded(program, 0)[Field::kLo], 0xBF00u);
}

TEST(Assembler, SymbolsMayBeUsedBeforeTheirDefinition) {
  const Program program = Assemble(R"(
    load_weights dram=W + 32, stride=STRIDE, rows=1, cols=1
    .equ STRIDE, ELEMS * 2
    .equ ELEMS, 16
    .data W, at=0x4000, dtype=bf16
    .values 1.0
  )");
  const isa::Instruction insn = Decoded(program, 0);
  EXPECT_EQ(insn[Field::kDram], 0x4020u);
  EXPECT_EQ(insn[Field::kStride], 32u);
}

TEST(Assembler, EnumNamesWinOverSymbolsButSymbolsWork) {
  const Program program =
      Assemble(".equ relu, 3\n.equ F, 2\nvector rows=1, func=relu\nvector rows=1, func=F\n");
  EXPECT_EQ(Decoded(program, 0)[Field::kFunc], 1u);  // the enum name
  EXPECT_EQ(Decoded(program, 1)[Field::kFunc], 2u);  // a symbol
}

TEST(Assembler, DataSegmentsInEveryType) {
  const Program program = Assemble(R"(
    .data A, at=0x100, dtype=int8
    .values 1, -1, 127, -128
    .values 0x10,                  ; a trailing comma continues on the next line
    .values 2
    .data B, at=0x200, dtype=int32
    .values -2, 0x7fffffff
    .data C, at=0x300, dtype=bf16
    .values 1.0, -2.5, 3, bits(0x7fc1), bits(-1)
    .data D, at=0x400, dtype=fp32
    .values 0.1, -0, 16777217, bits(0x7f800000)
  )");
  ASSERT_EQ(program.data.size(), 4u);
  const DataSegment& a = program.data[0];
  EXPECT_EQ(a.name, "A");
  EXPECT_EQ(a.address, 0x100u);
  EXPECT_EQ(a.dtype, DataType::kInt8);
  EXPECT_EQ(a.bytes, (std::vector<std::uint8_t>{0x01, 0xFF, 0x7F, 0x80, 0x10, 0x02}));
  EXPECT_EQ(program.data[1].bytes,
            (std::vector<std::uint8_t>{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}));
  EXPECT_EQ(program.data[2].bytes, (std::vector<std::uint8_t>{0x80, 0x3F, 0x20, 0xC0, 0x40, 0x40,
                                                              0xC1, 0x7F, 0xFF, 0xFF}));
  // 0.1 -> 0x3DCCCCCD; -0 is the integer 0 (the sign of an integer zero is lost: +0.0);
  // 16777217 rounds to the nearest fp32, 16777216.
  EXPECT_EQ(program.data[3].bytes,
            (std::vector<std::uint8_t>{0xCD, 0xCC, 0xCC, 0x3D, 0, 0, 0, 0, 0x00, 0x00, 0x80, 0x4B,
                                       0x00, 0x00, 0x80, 0x7F}));
  EXPECT_TRUE(program.words.empty());
}

TEST(Assembler, InputsOutputsTextAndConfig) {
  const Program program = Assemble(R"(
    .config small-int8      ; not an identifier, hence the rest of the line
    .text at=0x800
    .input  X, at=0x200000, dtype=bf16, shape=8x16
    .output Y, dtype=fp32, shape=4, at=X + 0x1000     ; options in any order
    .output Z, at=0x300000, dtype=int8, shape=2x3x4
    load mem=ub, dram=X, stride=32, rows=8, elems=16
    halt
  )");
  EXPECT_EQ(program.config, "small-int8");
  EXPECT_EQ(program.text_address, 0x800u);
  ASSERT_EQ(program.inputs.size(), 1u);
  EXPECT_EQ(program.inputs[0], (TensorDesc{"X", 0x200000, DataType::kBf16, {8, 16}}));
  ASSERT_EQ(program.outputs.size(), 2u);
  EXPECT_EQ(program.outputs[0], (TensorDesc{"Y", 0x201000, DataType::kFp32, {4}}));
  EXPECT_EQ(program.outputs[1].shape, (std::vector<std::uint64_t>{2, 3, 4}));
  EXPECT_EQ(program.outputs[1].Bytes(), 24u);
  EXPECT_EQ(Decoded(program, 0)[Field::kDram], 0x200000u);
  EXPECT_EQ(program.SourceOf(0), "<input>:7");
  EXPECT_EQ(program.SourceOf(1), "<input>:8");
}

TEST(Assembler, DefaultsAndComments) {
  const Program program =
      Assemble("# only comments\n; and blank lines\n\n   \nhalt ; done\nsync # too\r\n");
  EXPECT_FALSE(program.config.has_value());
  EXPECT_EQ(program.text_address, 0u);
  ASSERT_EQ(program.words.size(), 2u);
  EXPECT_EQ(Decoded(program, 0).opcode, Opcode::kHalt);
  EXPECT_EQ(Decoded(program, 1).opcode, Opcode::kSync);
  EXPECT_EQ(program.source_map[1], (SourceLine{"<input>", 6}));
}

TEST(Assembler, RawWordIsOneNumberMostSignificantDigitFirst) {
  const Program program = Assemble(
      ".word 0x00000000_00000000_00000000_00000000_00000000_00000000_00000000_0000000a\n"
      ".word 0x0100000000000000000000000000000000000000000000000000000000000000\n");
  ASSERT_EQ(program.words.size(), 2u);
  isa::Word halt{};
  halt[0] = 0x0A;
  EXPECT_EQ(program.words[0], halt);
  isa::Word top{};
  top[31] = 0x01;
  EXPECT_EQ(program.words[1], top);  // not decodable, and that is allowed
}

TEST(Assembler, EmptySourceIsAnEmptyProgram) {
  EXPECT_EQ(Assemble(""), Program{});
  EXPECT_EQ(Assemble("\n\n"), Program{});
}

TEST(Assembler, ExamplesAssemble) {
  for (const auto& path : testing::ExampleFiles()) {
    SCOPED_TRACE(path.string());
    const Program program = AssembleFile(path);
    EXPECT_FALSE(program.words.empty());
    EXPECT_TRUE(program.config.has_value());
    EXPECT_FALSE(program.outputs.empty());
    EXPECT_EQ(isa::DecodeOrThrow(program.words.back()).opcode, Opcode::kHalt);
  }
  EXPECT_GE(testing::ExampleFiles().size(), 3u);
}

}  // namespace
}  // namespace systole::assembly
