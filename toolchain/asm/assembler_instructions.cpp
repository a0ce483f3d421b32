// Instruction lines: the mnemonic and its operands, read through the ISA table, each value
// checked by isa::Encode at the column where it was written.
#include <fmt/format.h>

#include <array>

#include "toolchain/asm/assembler_internal.hpp"
#include "toolchain/asm/literals.hpp"

namespace systole::assembly::internal {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::DataType;

void Assembler::Instruction(const Line& line) {
  const Token& mnemonic = line.tokens.front();
  const OpcodeSpec* spec = isa::FindMnemonic(mnemonic.text);
  if (spec == nullptr) {
    Fail(line, mnemonic.column,
         fmt::format("unknown mnemonic '{}' (expected one of: {})", Printable(mnemonic.text),
                     JoinNames(isa::Opcodes(),
                               [](const OpcodeSpec& o) { return std::string(o.mnemonic); })));
  }
  isa::Instruction instruction;
  instruction.opcode = spec->opcode;
  std::array<std::uint32_t, isa::kNumFields> columns{};  // where each field was given; 0: not
  std::uint32_t wait_column = 0, signal_column = 0;

  Cursor cursor{&line, 1, line.tokens.size()};
  bool first_operand = true;
  while (!cursor.AtEnd()) {
    if (!first_operand) Expect(cursor, TokenKind::kComma, "',' between operands");
    first_operand = false;
    const Token& name = cursor.Peek();
    if (name.kind != TokenKind::kIdent) {
      Fail(cursor, name, fmt::format("expected a field name, got {}", Describe(name)));
    }
    cursor.Next();
    if (name.text == "wait" || name.text == "signal") {
      const bool wait = name.text == "wait";
      std::uint32_t& column = wait ? wait_column : signal_column;
      if (column != 0) {
        Fail(cursor, name,
             fmt::format("duplicate '{}' (already given at column {})", name.text, column));
      }
      column = name.column;
      ExpectEquals(cursor, name, *spec, "unit|unit");
      (wait ? instruction.wait : instruction.signal) = UnitMask(cursor, name.text);
      continue;
    }
    const FieldSpec* field = nullptr;
    for (const FieldSpec& candidate : spec->fields) {
      if (candidate.name == name.text) field = &candidate;
    }
    if (field == nullptr) {
      Fail(cursor, name,
           spec->fields.empty()
               ? fmt::format("unknown field '{}': '{}' takes no fields", Printable(name.text),
                             spec->mnemonic)
               : fmt::format("unknown field '{}' for '{}' (expected one of: {})",
                             Printable(name.text), spec->mnemonic, FieldList(*spec)));
    }
    std::uint32_t& column = columns[static_cast<unsigned>(field->field)];
    if (column != 0) {
      Fail(cursor, name,
           fmt::format("duplicate field '{}' (already given at column {})", name.text, column));
    }
    column = name.column;
    const TokenKind after = cursor.Peek().kind;
    if (field->kind == FieldKind::kFlag &&
        (after == TokenKind::kComma || after == TokenKind::kEnd)) {
      instruction[field->field] = 1;  // a bare flag
      continue;
    }
    ExpectEquals(cursor, name, *spec, "VALUE");
    instruction[field->field] = FieldValue(cursor, *spec, *field);
    ExpectEndOfValue(cursor, fmt::format("the value of '{}'", field->name));
  }
  CheckEncoding(line, *spec, instruction, columns, wait_column, signal_column);
  if (spec->opcode == isa::Opcode::kVector && instruction[isa::Field::kMath] != 0) {
    math_uses_.emplace_back(line.number, columns[static_cast<unsigned>(isa::Field::kMath)]);
  }
  isa::Word word{};
  if (auto error = isa::Encode(instruction, word)) {
    Fail(line, mnemonic.column, error->message);  // not expected: CheckEncoding found nothing
  }
  AddWord(line, word);
}

void Assembler::ExpectEquals(Cursor& cursor, const Token& name, const OpcodeSpec& spec,
                             std::string_view example) {
  const Token& token = cursor.Peek();
  if (token.kind != TokenKind::kEquals) {
    Fail(cursor, token,
         fmt::format("missing '=' after '{}' of '{}' (expected {}={}), got {}", name.text,
                     spec.mnemonic, name.text, example, Describe(token)));
  }
  cursor.Next();
}

std::uint8_t Assembler::UnitMask(Cursor& cursor, std::string_view what) {
  unsigned mask = 0;
  while (true) {
    const Token& token = cursor.Peek();
    const auto unit =
        token.kind == TokenKind::kIdent ? isa::UnitFromName(token.text) : std::nullopt;
    if (!unit || *unit == isa::Unit::kSequencer) {
      Fail(cursor, token,
           fmt::format("expected a unit name in '{}', got {} (expected one of: {})", what,
                       Describe(token), UnitList()));
    }
    cursor.Next();
    const unsigned bit = 1u << static_cast<unsigned>(*unit);
    if ((mask & bit) != 0) {
      Fail(cursor, token, fmt::format("unit '{}' named twice in '{}'", token.text, what));
    }
    mask |= bit;
    if (cursor.Peek().kind != TokenKind::kPipe) break;
    cursor.Next();
  }
  ExpectEndOfValue(cursor, fmt::format("the units of '{}'", what));
  return static_cast<std::uint8_t>(mask);
}

std::uint64_t Assembler::FieldValue(Cursor& cursor, const OpcodeSpec& spec,
                                    const FieldSpec& field) {
  const std::string what = fmt::format("field '{}' of '{}'", field.name, spec.mnemonic);
  const Token& first = cursor.Peek();
  if (field.kind == FieldKind::kEnum && first.kind == TokenKind::kIdent) {
    for (std::size_t i = 0; i < field.names.size(); ++i) {
      if (field.names[i] == first.text) {
        cursor.Next();
        return i;
      }
    }
    if (!symbols_.contains(first.text)) {
      Fail(cursor, first,
           fmt::format("unknown value '{}' for {} (expected one of: {})", Printable(first.text),
                       what,
                       JoinNames(field.names, [](std::string_view n) { return std::string(n); })));
    }
  }
  const Value value = Expression(cursor);
  switch (field.kind) {
    case FieldKind::kScale:
    case FieldKind::kClamp: {
      const bool scale = field.kind == FieldKind::kScale;
      if (value.is_float) {
        std::string why;
        const auto bits = FloatLiteralBits(scale ? DataType::kFp32 : DataType::kBf16,
                                           value.float_text, value.negative, &why);
        if (!bits) Fail(*cursor.line, value.column, fmt::format("{}: {}", what, why));
        return *bits;
      }
      // An integer is the raw bit pattern: int32 / int16, or the same bits written unsigned.
      const unsigned width = field.width;
      const std::int64_t lowest = -(std::int64_t{1} << (width - 1));
      if (value.integer < lowest) {
        Fail(*cursor.line, value.column,
             fmt::format("{} = {} is below {} (the field holds {} bits)", what, value.integer,
                         lowest, width));
      }
      return value.integer < 0
                 ? static_cast<std::uint64_t>(value.integer + (std::int64_t{1} << width))
                 : static_cast<std::uint64_t>(value.integer);
    }
    case FieldKind::kSigned:
      if (value.is_float) break;
      return static_cast<std::uint64_t>(value.integer);  // Encode checks it fits
    default:
      if (value.is_float) break;
      if (value.integer < 0) {
        Fail(*cursor.line, value.column,
             fmt::format("{} must not be negative, got {}", what, value.integer));
      }
      return static_cast<std::uint64_t>(value.integer);
  }
  Fail(*cursor.line, value.column,
       fmt::format("{} needs an integer, got '{}{}'", what, value.negative ? "-" : "",
                   value.float_text));
}

void Assembler::CheckEncoding(const Line& line, const OpcodeSpec& spec,
                              const isa::Instruction& full,
                              const std::array<std::uint32_t, isa::kNumFields>& columns,
                              std::uint32_t wait_column, std::uint32_t signal_column) {
  isa::Instruction base;
  base.opcode = spec.opcode;
  for (const FieldSpec& field : spec.fields) base[field.field] = field.min;
  const std::uint32_t mnemonic_column = line.tokens.front().column;
  bool failed = false;
  isa::Word scratch{};
  for (const FieldSpec& field : spec.fields) {
    isa::Instruction probe = base;
    probe[field.field] = full[field.field];
    if (auto error = isa::Encode(probe, scratch)) {
      const std::uint32_t column = columns[static_cast<unsigned>(field.field)];
      Report(line, column != 0 ? column : mnemonic_column,
             column != 0 ? error->message
                         : fmt::format("{} (omitted fields are zero; give '{}=')", error->message,
                                       field.name));
      failed = true;
    }
  }
  for (const bool wait : {true, false}) {
    isa::Instruction probe = base;
    (wait ? probe.wait : probe.signal) = wait ? full.wait : full.signal;
    if (auto error = isa::Encode(probe, scratch)) {
      Report(line, wait ? wait_column : signal_column, error->message);
      failed = true;
    }
  }
  if (failed) throw LineFailed{};
}

void Assembler::AddWord(const Line& line, const isa::Word& word) {
  program_.words.push_back(word);
  program_.source_map.push_back({file_, line.number});
}

}  // namespace systole::assembly::internal
