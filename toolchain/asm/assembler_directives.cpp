// Directive lines: .equ, .data/.values, .input/.output, .text, .config and .word.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "arch/config/config.hpp"
#include "toolchain/asm/assembler_internal.hpp"
#include "toolchain/asm/literals.hpp"

namespace systole::assembly::internal {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::DataSegment;
using image::TensorDesc;
using image::DataType;
using image::DataTypeName;
using image::DataTypeFromName;
using image::DataTypeBytes;
using image::DataTypeNames;

void Assembler::Directive(const Line& line) {
  const std::string_view name = line.tokens.front().text;
  if (name == ".equ") return Equ(line);
  if (name == ".data") return Data(line);
  if (name == ".values") return Values(line);
  if (name == ".input" || name == ".output") return Tensor(line, name == ".input");
  if (name == ".text") return Text(line);
  if (name == ".config") return ConfigName(line);
  if (name == ".word") return RawWord(line);
  Fail(line, line.tokens.front().column,
       fmt::format("unknown directive '{}' (expected one of: .equ, .data, .values, .input, "
                   ".output, .text, .config, .word)",
                   Printable(name)));
}

Assembler::Options Assembler::ParseOptions(const Line& line, bool named,
                                           std::initializer_list<std::string_view> keys) {
  const Token& directive = line.tokens.front();
  const std::string key_list = JoinNames(keys, [](std::string_view k) { return std::string(k); });
  Options options;
  Cursor cursor{&line, 1, line.tokens.size()};
  if (named) {
    const Token& name = cursor.Peek();
    if (name.kind != TokenKind::kIdent) {
      Fail(cursor, name,
           fmt::format("expected a name after '{}', got {}", directive.text, Describe(name)));
    }
    options.name = &cursor.Next();
  }
  bool first = true;
  while (!cursor.AtEnd()) {
    if (named || !first) Expect(cursor, TokenKind::kComma, "','");
    first = false;
    const Token& key = cursor.Peek();
    if (key.kind != TokenKind::kIdent) {
      Fail(cursor, key, fmt::format("expected an option ({}), got {}", key_list, Describe(key)));
    }
    if (std::find(keys.begin(), keys.end(), key.text) == keys.end()) {
      Fail(cursor, key,
           fmt::format("unknown option '{}' for '{}' (expected one of: {})", Printable(key.text),
                       directive.text, key_list));
    }
    if (options.columns.contains(key.text)) {
      Fail(cursor, key, fmt::format("duplicate option '{}'", key.text));
    }
    cursor.Next();
    const Token& equals = cursor.Peek();
    if (equals.kind != TokenKind::kEquals) {
      Fail(cursor, equals,
           fmt::format("missing '=' after '{}' (expected {}=VALUE), got {}", key.text, key.text,
                       Describe(equals)));
    }
    cursor.Next();
    const std::size_t begin = cursor.index;
    const std::size_t end = ValueEnd(line.tokens, begin);
    if (begin == end) {
      Fail(cursor, cursor.Peek(),
           fmt::format("expected a value after '{}=', got {}", key.text, Describe(cursor.Peek())));
    }
    options.values[key.text] = {begin, end};
    options.columns[key.text] = key.column;
    cursor.index = end;
  }
  for (std::string_view key : keys) {
    if (!options.values.contains(key)) {
      Fail(line, directive.column,
           fmt::format("'{}' needs '{}=' (options: {})", directive.text, key, key_list));
    }
  }
  return options;
}

Cursor Assembler::OptionCursor(const Line& line, const Options& options, std::string_view key) {
  const auto& [begin, end] = options.values.at(key);
  return Cursor{&line, begin, end};
}

std::uint64_t Assembler::Address(const Line& line, const Options& options) {
  // The name is a symbol for its address: resolve it, so the at= expression is evaluated
  // (and its errors reported) once.
  const Cursor cursor{&line, 1, line.tokens.size()};
  const Value value = Resolve(cursor, *options.name);
  const std::uint32_t column = line.tokens[options.values.at("at").first].column;
  if (value.is_float) Fail(line, column, "an address needs an integer");
  if (value.integer < 0) {
    Fail(line, column, fmt::format("address must not be negative, got {}", value.integer));
  }
  return static_cast<std::uint64_t>(value.integer);
}

DataType Assembler::ParseDataType(const Line& line, const Options& options) {
  const auto& [begin, end] = options.values.at("dtype");
  const Token& token = line.tokens[begin];
  const auto dtype = token.kind == TokenKind::kIdent && end == begin + 1
                         ? DataTypeFromName(token.text)
                         : std::nullopt;
  if (!dtype) {
    Fail(line, token.column,
         fmt::format("unknown dtype {} (expected one of: {})", Describe(token), DataTypeNames()));
  }
  return *dtype;
}

void Assembler::CheckSymbolDefinition(const Line& line, const Token& name) {
  // Pass 1 registered the symbol unless its definition was too malformed to find; then the
  // line has a syntax error that ParseOptions has reported already.
  const auto it = symbols_.find(name.text);
  if (it == symbols_.end() || it->second.line != &line) {
    Fail(line, name.column, fmt::format("symbol '{}' could not be defined", name.text));
  }
}

void Assembler::Equ(const Line& line) {
  Cursor cursor{&line, 1, line.tokens.size()};
  const Token& name = Expect(cursor, TokenKind::kIdent, "a name after '.equ'");
  Expect(cursor, TokenKind::kComma, "',' after the name");
  if (cursor.AtEnd()) {
    Fail(cursor, cursor.Peek(), fmt::format("expected a value, got {}", Describe(cursor.Peek())));
  }
  CheckSymbolDefinition(line, name);
  Resolve(cursor, name);
}

void Assembler::Data(const Line& line) {
  data_open_ = false;
  const Options options = ParseOptions(line, true, {"at", "dtype"});
  CheckSymbolDefinition(line, *options.name);
  DataSegment segment;
  segment.name = std::string(options.name->text);
  segment.address = Address(line, options);
  segment.dtype = ParseDataType(line, options);
  program_.data.push_back(std::move(segment));
  definitions_[program_.data.back().name] = line.number;
  data_open_ = true;
  data_failed_ = false;
}

void Assembler::Values(const Line& line) {
  if (!data_open_) {
    if (data_failed_) throw LineFailed{};  // the .data line was reported
    Fail(line, line.tokens.front().column, "'.values' without a preceding '.data'");
  }
  DataSegment& segment = program_.data.back();
  Cursor cursor{&line, 1, line.tokens.size()};
  if (cursor.AtEnd()) Fail(cursor, cursor.Peek(), "expected values after '.values'");
  while (!cursor.AtEnd()) {
    AppendValue(cursor, segment);
    if (cursor.AtEnd()) break;
    Expect(cursor, TokenKind::kComma, "',' between values");  // a trailing ',' is allowed
  }
}

void Assembler::AppendValue(Cursor& cursor, DataSegment& segment) {
  const unsigned size = DataTypeBytes(segment.dtype);
  const bool is_float = segment.dtype == DataType::kBf16 || segment.dtype == DataType::kFp32;
  const Token& first = cursor.Peek();
  std::uint64_t bits = 0;
  if (first.kind == TokenKind::kIdent && first.text == "bits") {
    cursor.Next();
    Expect(cursor, TokenKind::kLParen, "'(' after 'bits'");
    const std::int64_t raw = Integer(cursor, "bits()");
    Expect(cursor, TokenKind::kRParen, "')'");
    bits = RawBits(*cursor.line, first.column, raw, size * 8, "bits()");
  } else {
    const Value value = Expression(cursor);
    const std::string_view dtype = DataTypeName(segment.dtype);
    if (!is_float) {
      if (value.is_float) {
        Fail(*cursor.line, value.column,
             fmt::format("{} data needs integers, got '{}{}'", dtype, value.negative ? "-" : "",
                         value.float_text));
      }
      const std::int64_t lo = -(std::int64_t{1} << (size * 8 - 1)), hi = -lo - 1;
      if (value.integer < lo || value.integer > hi) {
        Fail(*cursor.line, value.column,
             fmt::format("value {} is out of range for {} ({}..{})", value.integer, dtype, lo, hi));
      }
      bits = static_cast<std::uint64_t>(value.integer);
    } else {
      // An integer element is the number, not bits: 3 means 3.0.
      std::string text;
      bool negative = value.negative;
      if (value.is_float) {
        text = std::string(value.float_text);
      } else {
        negative = value.integer < 0;
        const std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(value.integer)
                                                 : static_cast<std::uint64_t>(value.integer);
        text = fmt::format("{}.0", magnitude);
      }
      std::string why;
      const auto converted = FloatLiteralBits(segment.dtype, text, negative, &why);
      if (!converted) Fail(*cursor.line, value.column, fmt::format("{} value: {}", dtype, why));
      bits = *converted;
    }
  }
  for (unsigned i = 0; i < size; ++i) {
    segment.bytes.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  }
}

std::uint64_t Assembler::RawBits(const Line& line, std::uint32_t column, std::int64_t raw,
                                 unsigned width, std::string_view what) {
  const std::int64_t lo = -(std::int64_t{1} << (width - 1));
  const std::int64_t hi =
      width >= 63 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << width) - 1;
  if (raw < lo || raw > hi) {
    Fail(line, column, fmt::format("{} = {} does not fit {} bits", what, raw, width));
  }
  return static_cast<std::uint64_t>(raw) & ((std::uint64_t{1} << width) - 1);
}

void Assembler::Tensor(const Line& line, bool input) {
  const Options options = ParseOptions(line, true, {"at", "dtype", "shape"});
  CheckSymbolDefinition(line, *options.name);
  TensorDesc tensor;
  tensor.name = std::string(options.name->text);
  tensor.address = Address(line, options);
  tensor.dtype = ParseDataType(line, options);
  tensor.shape = Shape(line, options);
  (input ? program_.inputs : program_.outputs).push_back(std::move(tensor));
  definitions_[std::string(options.name->text)] = line.number;
}

std::vector<std::uint64_t> Assembler::Shape(const Line& line, const Options& options) {
  const auto& [begin, end] = options.values.at("shape");
  const Token& token = line.tokens[begin];
  const auto bad = [&](std::string_view why) {
    Fail(line, token.column,
         fmt::format("bad shape {}: {} (expected dimensions like 8x16)", Describe(token), why));
  };
  if (token.kind != TokenKind::kNumber || end != begin + 1) bad("not a list of numbers");
  std::vector<std::uint64_t> shape;
  std::string_view rest = token.text;
  while (true) {
    const std::size_t x = rest.find('x');
    const std::string_view part = rest.substr(0, x);
    if (part.empty() ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      bad("each dimension must be a decimal number");
    }
    const auto value = ParseInteger(part);
    if (!value || *value == 0) bad("dimensions must be at least 1");
    shape.push_back(static_cast<std::uint64_t>(*value));
    if (shape.size() > kMaxShapeRank) bad(fmt::format("at most {} dimensions", kMaxShapeRank));
    if (x == std::string_view::npos) break;
    rest = rest.substr(x + 1);
  }
  return shape;
}

void Assembler::Text(const Line& line) {
  if (text_line_ != 0) {
    Fail(line, line.tokens.front().column,
         fmt::format("'.text' given twice (first at line {})", text_line_));
  }
  const Options options = ParseOptions(line, false, {"at"});
  Cursor cursor = OptionCursor(line, options, "at");
  const std::int64_t address = Integer(cursor, "'.text at='");
  ExpectEndOfValue(cursor, "the address");
  if (address < 0) {
    Fail(line, line.tokens[options.values.at("at").first].column,
         fmt::format("address must not be negative, got {}", address));
  }
  if (address % isa::kInstructionBytes != 0) {  // CMD_PC must be aligned (docs/ISA.md)
    Fail(line, line.tokens[options.values.at("at").first].column,
         fmt::format("instructions must start on a {}-byte boundary, got 0x{:x}",
                     isa::kInstructionBytes, address));
  }
  program_.text_address = static_cast<std::uint64_t>(address);
  text_line_ = line.number;
}

void Assembler::ConfigName(const Line& line) {
  const Token& directive = line.tokens.front();
  if (program_.config) {
    Fail(line, directive.column,
         fmt::format("'.config' given twice (first at line {})", config_line_));
  }
  const Token& end = line.tokens.back();
  const std::size_t from =
      static_cast<std::size_t>(directive.text.data() - line.text.data()) + directive.text.size();
  const std::size_t to = static_cast<std::size_t>(end.text.data() - line.text.data());
  std::string_view name = line.text.substr(from, to - from);
  const std::size_t skip = name.find_first_not_of(" \t\r\v\f");
  name = skip == std::string_view::npos ? std::string_view{} : name.substr(skip);
  name = name.substr(0, name.find_last_not_of(" \t\r\v\f") + 1);
  // A name as LoadConfig takes it, never a path: a program must not make a tool read a file.
  if (!IsConfigName(name)) {
    Fail(line,
         name.empty() ? end.column : static_cast<std::uint32_t>(name.data() - line.text.data() + 1),
         fmt::format("expected a configuration name like small or small-int8, got '{}'",
                     Printable(name)));
  }
  program_.config = std::string(name);
  config_line_ = line.number;
}

void Assembler::RawWord(const Line& line) {
  Cursor cursor{&line, 1, line.tokens.size()};
  const Token& token = cursor.Peek();
  if (token.kind != TokenKind::kNumber || token.text.size() < 2 || token.text[0] != '0' ||
      (token.text[1] != 'x' && token.text[1] != 'X') ||
      ClassifyLiteral(token.text) != LiteralKind::kInteger) {
    Fail(cursor, token, fmt::format("'.word' needs 0x and 64 hex digits, got {}", Describe(token)));
  }
  cursor.Next();
  std::string digits;
  for (char c : token.text.substr(2)) {
    if (c != '_') digits += c;
  }
  if (digits.size() != 2 * isa::kInstructionBytes) {
    Fail(cursor, token,
         fmt::format("'.word' needs exactly {} hex digits ({} bytes), got {}",
                     2 * isa::kInstructionBytes, isa::kInstructionBytes, digits.size()));
  }
  if (!cursor.AtEnd()) {
    Fail(cursor, cursor.Peek(),
         fmt::format("unexpected {} after the '.word' value", Describe(cursor.Peek())));
  }
  isa::Word word{};
  for (unsigned i = 0; i < isa::kInstructionBytes; ++i) {
    const std::size_t at = digits.size() - 2 * (i + 1);  // least significant byte last
    word[i] = static_cast<std::uint8_t>(std::stoul(digits.substr(at, 2), nullptr, 16));
  }
  AddWord(line, word);
}

}  // namespace systole::assembly::internal
