// Invariants of the instruction table itself (the golden encoding vectors live in
// isa_golden_test.cpp): fields fit and never overlap, names agree, and every legal instruction
// survives Encode -> Decode unchanged.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <set>

#include "arch/isa/isa.hpp"
#include "arch/regs/regmap.hpp"

namespace systole::isa {
namespace {

unsigned SeedFromEnvironment() {
  if (const char* seed = std::getenv("SYSTOLE_SEED")) return static_cast<unsigned>(std::atoll(seed));
  return std::random_device{}();
}

TEST(IsaTable, OpcodesAndMnemonicsAreUnique) {
  std::set<unsigned> codes;
  std::set<std::string_view> mnemonics;
  for (const OpcodeSpec& op : Opcodes()) {
    EXPECT_NE(static_cast<unsigned>(op.opcode), 0u) << "opcode 0 must stay illegal";
    EXPECT_TRUE(codes.insert(static_cast<unsigned>(op.opcode)).second) << op.mnemonic;
    EXPECT_TRUE(mnemonics.insert(op.mnemonic).second) << op.mnemonic;
    EXPECT_EQ(FindMnemonic(op.mnemonic), &op);
    EXPECT_EQ(FindOpcode(static_cast<std::uint8_t>(op.opcode)), &op);
  }
}

TEST(IsaTable, FieldsFitAndDoNotOverlap) {
  for (const OpcodeSpec& op : Opcodes()) {
    std::vector<bool> used(kInstructionBits, false);
    for (unsigned bit = 0; bit < kSignalLsb + kUnitMaskWidth; ++bit) used[bit] = true;
    std::set<Field> seen;
    for (const FieldSpec& field : op.fields) {
      SCOPED_TRACE(std::string(op.mnemonic) + "." + std::string(field.name));
      EXPECT_TRUE(seen.insert(field.field).second) << "field listed twice";
      EXPECT_EQ(field.name, FieldName(field.field)) << "name differs from the global field name";
      ASSERT_GE(field.width, 1u);
      ASSERT_LE(field.width, 64u);
      ASSERT_LE(field.lsb + field.width, kInstructionBits);
      for (unsigned bit = field.lsb; bit < field.lsb + field.width; ++bit) {
        EXPECT_FALSE(used[bit]) << "bit " << bit << " used twice";
        used[bit] = true;
      }
      if (field.kind == FieldKind::kFlag) {
        EXPECT_EQ(field.width, 1u);
      }
      if (field.kind == FieldKind::kEnum) {
        EXPECT_EQ(field.names.size(), field.max + 1) << "every legal enum value has a name";
        EXPECT_LE(field.max, (1ull << field.width) - 1);
      }
      if (field.kind == FieldKind::kScale) {
        EXPECT_EQ(field.width, 32u);
      }
      if (field.kind == FieldKind::kClamp) {
        EXPECT_EQ(field.width, 16u);
      }
    }
  }
}

TEST(IsaTable, AddressFieldsReachV1SizedBuffersAndLargeMemories) {
  // 24-bit rows cover v1's 98304 unified-buffer rows; 48-bit addresses cover 256 TiB.
  for (const OpcodeSpec& op : Opcodes()) {
    for (const FieldSpec& field : op.fields) {
      if (field.field == Field::kDram) {
        EXPECT_GE(field.width, 48u) << op.mnemonic;
      }
      if (field.field == Field::kRow || field.field == Field::kUb || field.field == Field::kAcc ||
          field.field == Field::kDst || field.field == Field::kSrc) {
        EXPECT_GE(field.width, 17u) << op.mnemonic << "." << field.name;
      }
    }
  }
}

// A random legal instruction of `op`.
Instruction RandomInstruction(const OpcodeSpec& op, std::mt19937_64& rng) {
  Instruction in;
  in.opcode = op.opcode;
  if (op.unit != Unit::kSequencer) {
    const unsigned own = 1u << static_cast<unsigned>(op.unit);
    in.wait = static_cast<std::uint8_t>(rng() % 32 & ~own);
    in.signal = static_cast<std::uint8_t>(rng() % 32 & ~own);
  }
  for (const FieldSpec& field : op.fields) {
    const std::uint64_t all = field.width == 64 ? ~0ull : (1ull << field.width) - 1;
    if (field.kind == FieldKind::kSigned) {
      const std::int64_t lo = -(std::int64_t{1} << (field.width - 1));
      const std::uint64_t span = std::uint64_t{1} << field.width;
      in[field.field] = static_cast<std::uint64_t>(lo + static_cast<std::int64_t>(rng() % span));
      continue;
    }
    const std::uint64_t hi = std::min(field.max, all);
    in[field.field] = field.min + rng() % (hi - field.min + 1);
  }
  return in;
}

TEST(IsaTable, RandomLegalInstructionsRoundTrip) {
  const unsigned seed = SeedFromEnvironment();
  std::cout << "seed " << seed << " (set SYSTOLE_SEED to reproduce)\n";
  RecordProperty("seed", static_cast<int>(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    const OpcodeSpec& op = Opcodes()[rng() % Opcodes().size()];
    const Instruction in = RandomInstruction(op, rng);
    Word word{};
    const auto error = Encode(in, word);
    ASSERT_FALSE(error.has_value()) << error->message;
    Instruction out;
    const auto decode_error = Decode(word, out);
    ASSERT_FALSE(decode_error.has_value()) << decode_error->message;
    ASSERT_EQ(out, in) << op.mnemonic << " seed " << seed << " iteration " << i;
  }
}

TEST(IsaTable, EncodeRejectsValuesThatDoNotFit) {
  Instruction in;
  in.opcode = Opcode::kMatmul;
  in[Field::kRows] = 0x10000;  // 17 bits into a 16-bit field
  in[Field::kK] = 1;
  Word word{};
  auto error = Encode(in, word);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, static_cast<std::uint32_t>(regs::ErrorCode::kIllegalField));
  EXPECT_NE(error->message.find("'rows'"), std::string::npos) << error->message;
}

TEST(IsaTable, EncodeRejectsFieldOfAnotherOpcode) {
  Instruction in;
  in.opcode = Opcode::kHalt;
  in[Field::kRows] = 3;
  Word word{};
  auto error = Encode(in, word);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("halt: has no field 'rows'"), std::string::npos) << error->message;
}

TEST(IsaTable, EncodeRejectsTokensToOwnUnit) {
  Instruction in;
  in.opcode = Opcode::kMatmul;
  in[Field::kRows] = 1;
  in[Field::kK] = 1;
  in.signal = 1u << static_cast<unsigned>(Unit::kMxu);
  Word word{};
  auto error = Encode(in, word);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("own unit 'mxu'"), std::string::npos) << error->message;
}

TEST(IsaTable, SignedFieldsSignExtend) {
  Instruction in;
  in.opcode = Opcode::kActivate;
  in[Field::kRows] = 1;
  in[Field::kZeroPoint] = static_cast<std::uint64_t>(std::int64_t{-128});
  const Instruction out = DecodeOrThrow(EncodeOrThrow(in));
  EXPECT_EQ(out.Signed(Field::kZeroPoint), -128);
  in[Field::kZeroPoint] = 128;  // does not fit int8
  Word word{};
  EXPECT_TRUE(Encode(in, word).has_value());
}

TEST(IsaTable, UnitNamesRoundTrip) {
  for (unsigned u = 0; u <= kNumUnits; ++u) {
    const auto unit = static_cast<Unit>(u);
    EXPECT_EQ(UnitFromName(UnitName(unit)), unit);
  }
  EXPECT_FALSE(UnitFromName("dma").has_value());
}

}  // namespace
}  // namespace systole::isa
