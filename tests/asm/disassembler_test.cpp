// The disassembler's canonical text, and exact round trips: assemble(disassemble(words)) ==
// words for every example and for random valid instructions, and the text is a fixed point.
#include "toolchain/asm/disassembler.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "tests/asm/asm_test_util.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::assembly {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::Program;
using image::DataSegment;
using image::DataType;
using image::DataTypeBytes;

namespace {

using isa::Field;

DisassemblyOptions Typed(std::optional<DType> element_type) {
  DisassemblyOptions options;
  options.element_type = element_type;
  return options;
}

std::string Line(std::string_view source, const DisassemblyOptions& options = {}) {
  const Program program = Assemble(source);
  EXPECT_EQ(program.words.size(), 1u);
  return DisassembleWord(program.words.at(0), options);
}

TEST(Disassembler, CanonicalForm) {
  EXPECT_EQ(Line("load elems=16, rows=8, dram=0x100000, mem=ub, stride=32, signal=mxu|store, "
                 "wait=vector"),
            "load dram=0x100000, stride=32, rows=8, elems=16, wait=vector, signal=mxu|store");
  EXPECT_EQ(Line("matmul accumulate, pop, rows=3, k=16"), "matmul pop, accumulate, rows=3, k=16");
  EXPECT_EQ(Line("vector op=add, rows=1, func=relu, bcast"), "vector func=relu, bcast, rows=1");
  EXPECT_EQ(Line("activate rows=1, zp=-5"), "activate rows=1, zp=-5");
  EXPECT_EQ(Line("halt"), "halt");
  EXPECT_EQ(Line("interrupt code=7"), "interrupt code=7");
  EXPECT_EQ(Line("accvec imm=0.9, scalar, rows=4, dst=2, op=mul, wait=mxu"),
            "accvec op=mul, scalar, dst=2, rows=4, imm=0.9, wait=mxu");
}

// ACCVEC's immediate is fp32 whatever the element type (int8 configurations fault ACCVEC), so
// it prints as a float literal where one reproduces its bits, raw otherwise.
TEST(Disassembler, AccVecImmediateIsAlwaysFp32) {
  for (const auto& options : {Typed(DType::kBf16), Typed(DType::kInt8)}) {
    EXPECT_EQ(Line("accvec op=add, rows=1, scalar, imm=1e-8", options),
              "accvec scalar, rows=1, imm=1e-08");
    EXPECT_EQ(Line("accvec op=add, rows=1, scalar, imm=0x7fc00001", options),
              "accvec scalar, rows=1, imm=0x7fc00001");
  }
}

TEST(Disassembler, ScaleAndClampFollowTheElementType) {
  const std::string source = "activate rows=1, func=clamp, scale=0.1, lo=-1.5, hi=6.0";
  EXPECT_EQ(Line(source, Typed(DType::kBf16)),
            "activate func=clamp, rows=1, scale=0.1, lo=-1.5, hi=6.0");
  EXPECT_EQ(Line(source, Typed(DType::kInt8)),
            "activate func=clamp, rows=1, scale=1036831949, lo=-16448, hi=16576");
  EXPECT_EQ(Line(source), "activate func=clamp, rows=1, scale=0x3dcccccd, lo=0xbfc0, hi=0x40c0");
  // Bit patterns no float literal produces are printed raw, even for bf16.
  EXPECT_EQ(Line("vector rows=1, lo=0xff80, hi=0x0001", Typed(DType::kBf16)),
            "vector rows=1, lo=0xff80, hi=0x0001");
  EXPECT_EQ(Line("activate rows=1, scale=0x7fc00000", Typed(DType::kBf16)),
            "activate rows=1, scale=0x7fc00000");
  EXPECT_EQ(Line("activate rows=1, scale=-3, lo=-8", Typed(DType::kInt8)),
            "activate rows=1, scale=-3, lo=-8");
}

TEST(Disassembler, UndecodableWordsBecomeRawWords) {
  isa::Word word{};
  EXPECT_EQ(DisassembleWord(word),
            ".word 0x0000000000000000_0000000000000000_0000000000000000_0000000000000000 ; "
            "ILLEGAL_OPCODE: opcode 0x00 is not defined");
  word[0] = 0x0A;
  word[31] = 0x80;
  EXPECT_EQ(DisassembleWord(word),
            ".word 0x8000000000000000_0000000000000000_0000000000000000_000000000000000a ; "
            "RESERVED_BITS: halt: reserved bit 255 is set");
  // ... and reassemble to the same bytes.
  EXPECT_EQ(Assemble(DisassembleWord(word)).words.at(0), word);
}

TEST(Disassembler, AddressesOnRequest) {
  const Program program = Assemble("sync\nhalt\n");
  DisassemblyOptions options;
  options.show_addresses = true;
  EXPECT_EQ(Disassemble(program.words, options, 0x400),
            fmt::format("{:<72} ; 0x000400\n{:<72} ; 0x000420\n", "sync", "halt"));
}

TEST(Disassembler, ProgramWithDirectivesAndSymbols) {
  const Program program = Assemble(R"(
    .config nosuchconfig
    .text at=0x1000
    .input X, at=0x2000, dtype=bf16, shape=2x16
    .output Y, at=0x3000, dtype=fp32, shape=2x16
    .data W, at=0x4000, dtype=bf16
    .values 1.0, 2.0, bits(0x7fc1)
    load mem=ub, dram=X + 32, stride=32, rows=1, elems=16
    load_weights dram=W, stride=2, rows=1, cols=3
    store mem=acc, dram=Y, stride=64, rows=2, elems=16
    store mem=acc, dram=0x5000, stride=64, rows=2, elems=16
    halt
  )");
  EXPECT_EQ(Disassemble(program),
            "; Systole program: 5 instructions at 0x1000\n"
            ".config nosuchconfig\n"
            ".text at=0x1000\n"
            ".input  X, at=0x2000, dtype=bf16, shape=2x16\n"
            ".output Y, at=0x3000, dtype=fp32, shape=2x16\n"
            "\n"
            ".data W, at=0x4000, dtype=bf16\n"
            ".values 1.0, 2.0, bits(0x7fc1)\n"
            "\n"
            "load dram=X+32, stride=32, rows=1, elems=16\n"
            "load_weights dram=W, stride=2, rows=1, cols=3\n"
            "store mem=acc, dram=Y, stride=64, rows=2, elems=16\n"
            "store mem=acc, dram=0x5000, stride=64, rows=2, elems=16\n"
            "halt\n");
  EXPECT_EQ(Assemble(Disassemble(program)), program);
}

TEST(Disassembler, DataOfEveryTypeRoundTrips) {
  Program program;
  std::mt19937_64 rng(testing::TestSeed());
  for (const DataType dtype :
       {DataType::kInt8, DataType::kInt32, DataType::kBf16, DataType::kFp32}) {
    DataSegment segment;
    segment.name = fmt::format("D{}", static_cast<int>(dtype));
    segment.address = 0x10000 * (static_cast<std::uint64_t>(dtype) + 1);
    segment.dtype = dtype;
    for (int i = 0; i < 37 * static_cast<int>(DataTypeBytes(dtype)); ++i) {
      segment.bytes.push_back(static_cast<std::uint8_t>(rng()));
    }
    program.data.push_back(std::move(segment));
  }
  const std::string text = Disassemble(program);
  EXPECT_EQ(Assemble(text), program) << text;
  EXPECT_EQ(Disassemble(Assemble(text)), text);
}

TEST(Disassembler, ExamplesRoundTrip) {
  for (const auto& path : testing::ExampleFiles()) {
    SCOPED_TRACE(path.string());
    const Program program = AssembleFile(path);
    // Words alone, with every element-type choice.
    for (const std::optional<DType> type :
         {std::optional<DType>(), std::optional(DType::kInt8), std::optional(DType::kBf16)}) {
      const std::string text = Disassemble(program.words, Typed(type));
      EXPECT_EQ(Assemble(text).words, program.words) << text;
    }
    // The whole program, directives included.
    const std::string text = Disassemble(program);
    const Program again = Assemble(text, "again.s");
    EXPECT_EQ(again, program) << text;
    EXPECT_EQ(Disassemble(again), text);
  }
}

TEST(Disassembler, RandomInstructionsRoundTrip) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int i = 0; i < 20000; ++i) {
    const isa::Instruction instruction = testing::RandomInstruction(rng);
    const isa::Word word = isa::EncodeOrThrow(instruction);
    for (const std::optional<DType> type :
         {std::optional<DType>(), std::optional(DType::kInt8), std::optional(DType::kBf16)}) {
      const std::string text = DisassembleWord(word, Typed(type));
      const Program program = Assemble(text);
      ASSERT_EQ(program.words.size(), 1u) << text;
      ASSERT_EQ(program.words[0], word) << text;
      ASSERT_EQ(DisassembleWord(program.words[0], Typed(type)), text);
    }
  }
}

TEST(Disassembler, RandomWordsRoundTripEvenWhenUndecodable) {
  std::mt19937_64 rng(testing::TestSeed());
  std::vector<isa::Word> words(2000);
  for (isa::Word& word : words) {
    for (auto& byte : word) byte = static_cast<std::uint8_t>(rng());
    word[0] = static_cast<std::uint8_t>(rng() % 12);  // mostly real opcodes, some not
  }
  const std::string text = Disassemble(words);
  EXPECT_EQ(Assemble(text).words, words);
}

}  // namespace
}  // namespace systole::assembly
