// Golden encoding vectors: the exact 32 bytes of one instruction of every opcode, with
// non-trivial values in every field, and the decode errors of broken words.
//
// The expected bytes were computed independently of isa::Encode, by a few lines of Python that
// shift each value to the bit position copied by hand from isa_table.cpp:
//   v = opcode | wait << 8 | signal << 13 | sum(value << lsb);  v.to_bytes(32, 'little').hex()
// A change to the table that moves any bit breaks these tests: that is their purpose. Such a
// change is an incompatible ISA change (bump kIsaVersionMajor, regenerate the RTL header).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "arch/isa/isa.hpp"
#include "arch/regs/regmap.hpp"

namespace systole::isa {
namespace {

using regs::ErrorCode;

Word FromHex(std::string_view hex) {
  EXPECT_EQ(hex.size(), 2 * kInstructionBytes);
  Word word{};
  for (unsigned i = 0; i < kInstructionBytes; ++i) {
    word[i] = static_cast<std::uint8_t>(std::stoul(std::string(hex.substr(2 * i, 2)), nullptr, 16));
  }
  return word;
}

std::string ToHex(const Word& word) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (std::uint8_t byte : word) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

// Writes `value` into bits [lsb, lsb + width) of `word`, bit by bit (independent of isa.cpp).
void SetBits(Word& word, unsigned lsb, unsigned width, std::uint64_t value) {
  for (unsigned i = 0; i < width; ++i) {
    const unsigned bit = lsb + i;
    const auto mask = static_cast<std::uint8_t>(1u << (bit % 8));
    if ((value >> i & 1u) != 0) {
      word[bit / 8] = static_cast<std::uint8_t>(word[bit / 8] | mask);
    } else {
      word[bit / 8] = static_cast<std::uint8_t>(word[bit / 8] & ~mask);
    }
  }
}

constexpr std::uint8_t kLoad = 1 << 0, kWeight = 1 << 1, kMxu = 1 << 2, kVector = 1 << 3,
                       kStore = 1 << 4;

struct Golden {
  const char* name;
  Instruction instruction;
  const char* hex;
};

std::vector<Golden> Vectors() {
  using F = Field;
  return {
      {"load",
       MakeInstruction(Opcode::kLoad,
                       {{F::kMem, 1},
                        {F::kDram, 0x123456789ABC},
                        {F::kStride, 0x00C0FFEE},
                        {F::kRow, 0xABCDEF},
                        {F::kCol, 0x1234},
                        {F::kRows, 0x0102},
                        {F::kElems, 0x0304}},
                       kMxu | kVector, kStore),
       "010c0600bc9a78563412eeffc000efcdab341202010403000000000000000000"},
      {"store",  // every field at its widest
       MakeInstruction(Opcode::kStore,
                       {{F::kMem, 0},
                        {F::kDram, 0xFFFFFFFFFFFF},
                        {F::kStride, 0xFFFFFFFF},
                        {F::kRow, 0xFFFFFF},
                        {F::kCol, 0xFFFF},
                        {F::kRows, 0xFFFF},
                        {F::kElems, 0xFFFF}},
                       kVector, kLoad),
       "02280000ffffffffffffffffffffffffffffffffffffff000000000000000000"},
      {"load_weights",
       MakeInstruction(Opcode::kLoadWeights,
                       {{F::kDram, 0x100000}, {F::kStride, 32}, {F::kRows, 16}, {F::kCols, 8}},
                       kLoad, kMxu | kVector),
       "0381010000001000000020000000100008000000000000000000000000000000"},
      {"matmul",
       MakeInstruction(Opcode::kMatmul,
                       {{F::kPop, 1},
                        {F::kAccumulate, 1},
                        {F::kUb, 0x123456},
                        {F::kAcc, 0x654321},
                        {F::kRows, 0x0808},
                        {F::kK, 0x0010}},
                       kLoad | kWeight, kVector),
       "04030d0056341221436508081000000000000000000000000000000000000000"},
      {"activate",
       MakeInstruction(Opcode::kActivate,
                       {{F::kBias, 1},
                        {F::kFunc, 3},
                        {F::kAcc, 0x000102},
                        {F::kUb, 0x030405},
                        {F::kRows, 0x0607},
                        {F::kBiasRow, 0x08090A},
                        {F::kScale, 0x3F800000},
                        {F::kShift, 62},
                        {F::kZeroPoint, static_cast<std::uint64_t>(std::int64_t{-5})},
                        {F::kLo, 0xBFC0},
                        {F::kHi, 0x40C0}},
                       kLoad | kMxu, kMxu | kStore),
       "05851e0002010005040307060a09080000803f3efbc0bfc04000000000000000"},
      {"vector",
       MakeInstruction(Opcode::kVector,
                       {{F::kOp, 4},
                        {F::kFunc, 2},
                        {F::kBcast, 1},
                        {F::kA, 0x111111},
                        {F::kB, 0x222222},
                        {F::kDst, 0x333333},
                        {F::kRows, 0x4444},
                        {F::kShift, 7},
                        {F::kLo, 0x8001},
                        {F::kHi, 0x7FFF}},
                       kStore, kLoad),
       "063090021111112222223333334444070180ff7f000000000000000000000000"},
      {"pool",
       MakeInstruction(Opcode::kPool,
                       {{F::kOp, 1},
                        {F::kSrc, 0xAAAAAA},
                        {F::kDst, 0x555555},
                        {F::kInW, 0x0102},
                        {F::kOutH, 0x0304},
                        {F::kOutW, 0x0506},
                        {F::kWinH, 7},
                        {F::kWinW, 8},
                        {F::kStrideH, 9},
                        {F::kStrideW, 10},
                        {F::kScale, 0xDEADBEEF},
                        {F::kShift, 0x1F}},
                       kMxu, kStore),
       "07040600aaaaaa5555550201040306050708090aefbeadde1f00000000000000"},
      {"sync", MakeInstruction(Opcode::kSync, {}, 0, 0),
       "0800000000000000000000000000000000000000000000000000000000000000"},
      {"interrupt", MakeInstruction(Opcode::kInterrupt, {{F::kCode, 0xBEEF}}, 0, 0),
       "09000000efbe0000000000000000000000000000000000000000000000000000"},
      {"halt", MakeInstruction(Opcode::kHalt, {}, 0, 0),
       "0a00000000000000000000000000000000000000000000000000000000000000"},
      {"reduce",
       MakeInstruction(Opcode::kReduce,
                       {{F::kOp, 1},
                        {F::kOver, 1},
                        {F::kSrc, 0x123456},
                        {F::kDst, 0x654321},
                        {F::kRows, 0x1234},
                        {F::kElems, 0x10},
                        {F::kScale, 0x3F800000},
                        {F::kShift, 3}},
                       kMxu, kStore),
       "0b040e00563412214365341210000000803f0300000000000000000000000000"},
      // op=div (5) at 21:18, bcast at 25, a/b/dst/rows as VECTOR's, imm 1.0f at 151:120.
      {"accvec",
       MakeInstruction(Opcode::kAccVec,
                       {{F::kOp, 5},
                        {F::kBcast, 1},
                        {F::kA, 0x123456},
                        {F::kB, 0x654321},
                        {F::kDst, 0x0ABCDE},
                        {F::kRows, 0x1234},
                        {F::kImm, 0x3F800000}},
                       kLoad, kStore),
       "0c011602563412214365debc0a34120000803f00000000000000000000000000"},
  };
}

Word GoldenWord(std::string_view name) {
  for (const Golden& golden : Vectors()) {
    if (golden.name == name) return FromHex(golden.hex);
  }
  ADD_FAILURE() << "no golden vector " << name;
  return {};
}

ErrorCode DecodeError(const Word& word, std::string* message = nullptr) {
  Instruction instruction;
  const auto error = Decode(word, instruction);
  if (!error) return ErrorCode::kNone;
  if (message != nullptr) *message = error->message;
  return static_cast<ErrorCode>(error->code);
}

TEST(IsaGolden, EveryOpcodeHasAVector) {
  EXPECT_EQ(Vectors().size(), Opcodes().size());
  for (const OpcodeSpec& spec : Opcodes()) {
    bool found = false;
    for (const Golden& golden : Vectors()) {
      found = found || golden.instruction.opcode == spec.opcode;
    }
    EXPECT_TRUE(found) << spec.mnemonic;
  }
}

TEST(IsaGolden, EncodeGivesTheGoldenBytes) {
  for (const Golden& golden : Vectors()) {
    Word word{};
    const auto error = Encode(golden.instruction, word);
    ASSERT_FALSE(error) << golden.name << ": " << error->message;
    EXPECT_EQ(ToHex(word), golden.hex) << golden.name;
  }
}

TEST(IsaGolden, DecodeGivesTheInstructionBack) {
  for (const Golden& golden : Vectors()) {
    Instruction instruction;
    const auto error = Decode(FromHex(golden.hex), instruction);
    ASSERT_FALSE(error) << golden.name << ": " << error->message;
    EXPECT_EQ(instruction, golden.instruction) << golden.name;
    EXPECT_EQ(FindOpcode(static_cast<std::uint8_t>(instruction.opcode))->mnemonic, golden.name);
  }
  // A signed field comes back sign-extended.
  EXPECT_EQ(DecodeOrThrow(GoldenWord("activate")).Signed(Field::kZeroPoint), -5);
}

TEST(IsaGolden, IllegalOpcodes) {
  EXPECT_EQ(DecodeError(Word{}), ErrorCode::kIllegalOpcode);  // zeroed memory faults at once
  for (const unsigned opcode : {0x0Du, 0x0Fu, 0x80u, 0xFFu}) {
    Word word{};
    word[0] = static_cast<std::uint8_t>(opcode);
    std::string message;
    EXPECT_EQ(DecodeError(word, &message), ErrorCode::kIllegalOpcode) << opcode;
    EXPECT_NE(message.find("is not defined"), std::string::npos) << message;
  }
}

// For each opcode, two bits that no field covers (one between the header and the first
// operand word, one above the last field), again read off isa_table.cpp by hand.
TEST(IsaGolden, ReservedBitsInEveryOpcode) {
  const std::vector<std::pair<std::string_view, std::vector<unsigned>>> reserved = {
      {"load", {20, 31, 184, 255}},   {"store", {19, 184}},     {"load_weights", {18, 144}},
      {"matmul", {20, 112}},          {"activate", {22, 200}},  {"vector", {31, 160}},
      {"pool", {19, 200}},            {"sync", {18, 128, 255}}, {"interrupt", {31, 48}},
      {"halt", {18, 32, 255}},        {"reduce", {20, 152}},    {"accvec", {22, 152}},
  };
  ASSERT_EQ(reserved.size(), Opcodes().size());
  for (const auto& [name, bits] : reserved) {
    for (const unsigned bit : bits) {
      Word word = GoldenWord(name);
      SetBits(word, bit, 1, 1);
      std::string message;
      EXPECT_EQ(DecodeError(word, &message), ErrorCode::kReservedBits) << name << " bit " << bit;
      EXPECT_NE(message.find("reserved bit " + std::to_string(bit) + " is set"), std::string::npos)
          << message;
    }
  }
}

TEST(IsaGolden, OutOfRangeFields) {
  struct Case {
    std::string_view name;
    unsigned lsb, width;
    std::uint64_t value;
    std::string_view field;
  };
  const std::vector<Case> cases = {
      {"activate", 19, 3, 4, "func"},    // enum: 4 of 0..3
      {"activate", 19, 3, 7, "func"},
      {"vector", 18, 4, 6, "op"},        // enum: 6 of 0..5
      {"vector", 18, 4, 15, "op"},
      {"vector", 22, 3, 6, "func"},
      {"vector", 27, 4, 9, "math"},      // enum: 9 of 0..8
      {"vector", 27, 4, 15, "math"},
      {"activate", 152, 8, 63, "shift"},  // shift: 0..62
      {"vector", 120, 8, 200, "shift"},
      {"pool", 192, 8, 255, "shift"},
      {"load", 152, 16, 0, "rows"},       // counts are at least 1
      {"store", 168, 16, 0, "elems"},
      {"load_weights", 128, 16, 0, "cols"},
      {"matmul", 96, 16, 0, "k"},
      {"activate", 80, 16, 0, "rows"},
      {"pool", 128, 8, 0, "win_h"},
      {"pool", 152, 8, 0, "stride_w"},
      {"reduce", 96, 16, 0, "elems"},
      {"reduce", 144, 8, 63, "shift"},
  };
  for (const Case& c : cases) {
    Word word = GoldenWord(c.name);
    SetBits(word, c.lsb, c.width, c.value);
    std::string message;
    EXPECT_EQ(DecodeError(word, &message), ErrorCode::kIllegalField) << c.name << " " << c.field;
    EXPECT_NE(message.find("'" + std::string(c.field) + "' = " + std::to_string(c.value)),
              std::string::npos)
        << message;
  }
}

TEST(IsaGolden, TokenMasks) {
  // A unit waiting for or signalling itself.
  const std::vector<std::tuple<std::string_view, unsigned, unsigned>> own = {
      {"load", 8 + 0, 0},       // wait bit LOAD
      {"load_weights", 13 + 1, 0},  // signal bit WEIGHT
      {"matmul", 8 + 2, 0},     // wait bit MXU
      {"activate", 13 + 3, 0},  // signal bit VECTOR
      {"vector", 8 + 3, 0},
      {"pool", 13 + 3, 0},
      {"store", 8 + 4, 0},
  };
  for (const auto& [name, bit, unused] : own) {
    Word word = GoldenWord(name);
    SetBits(word, bit, 1, 1);
    std::string message;
    EXPECT_EQ(DecodeError(word, &message), ErrorCode::kIllegalField) << name;
    EXPECT_NE(message.find("names its own unit"), std::string::npos) << message;
  }
  // Sequencer instructions take no tokens at all.
  for (const std::string_view name : {"sync", "interrupt", "halt"}) {
    for (const unsigned bit : {8u, 12u, 13u, 17u}) {
      Word word = GoldenWord(name);
      SetBits(word, bit, 1, 1);
      std::string message;
      EXPECT_EQ(DecodeError(word, &message), ErrorCode::kIllegalField) << name << " bit " << bit;
      EXPECT_NE(message.find("takes no"), std::string::npos) << message;
    }
  }
}

TEST(IsaGolden, EncodeRejectsWhatDecodeRejects) {
  Instruction load = DecodeOrThrow(GoldenWord("load"));
  Word word{};
  load[Field::kRows] = 0;
  EXPECT_EQ(Encode(load, word)->code, static_cast<std::uint32_t>(ErrorCode::kIllegalField));
  load[Field::kRows] = 1;
  load[Field::kCol] = 0x10000;  // does not fit 16 bits
  EXPECT_EQ(Encode(load, word)->code, static_cast<std::uint32_t>(ErrorCode::kIllegalField));
  load[Field::kCol] = 0;
  load[Field::kK] = 1;  // a field LOAD does not have
  EXPECT_EQ(Encode(load, word)->code, static_cast<std::uint32_t>(ErrorCode::kIllegalField));
  load[Field::kK] = 0;
  load.wait = kLoad;
  EXPECT_EQ(Encode(load, word)->code, static_cast<std::uint32_t>(ErrorCode::kIllegalField));
  Instruction bad;
  bad.opcode = static_cast<Opcode>(0x42);
  EXPECT_EQ(Encode(bad, word)->code, static_cast<std::uint32_t>(ErrorCode::kIllegalOpcode));
}

}  // namespace
}  // namespace systole::isa
