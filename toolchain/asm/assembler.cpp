// Two passes over the lines: the first records where every symbol is defined (so that symbols
// may be used before their definition), the second parses each line completely, evaluating
// symbols lazily, and builds the Program. Each line is parsed by recursive descent over its
// tokens; the first syntax error on a line is reported and the rest of that line skipped, so
// one typo does not cascade, and the next lines are still checked.
#include "asm/assembler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "asm/lexer.hpp"
#include "asm/literals.hpp"
#include "regs/regmap.hpp"

namespace systole::assembly {

std::string Diagnostic::ToString() const {
  if (line == 0) return fmt::format("{}: error: {}", file, message);
  if (column == 0) return fmt::format("{}:{}: error: {}", file, line, message);
  return fmt::format("{}:{}:{}: error: {}", file, line, column, message);
}

namespace {

std::string JoinDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const Diagnostic& d : diagnostics) {
    if (!text.empty()) text += '\n';
    text += d.ToString();
  }
  return text;
}

}  // namespace

AssemblyError::AssemblyError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(JoinDiagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {}

namespace {

using isa::FieldKind;
using isa::FieldSpec;
using isa::OpcodeSpec;

constexpr int kMaxSymbolDepth = 64;   // nested symbol definitions (A = B + 1, B = C, ...)
constexpr int kMaxParenDepth = 64;    // nested parentheses in one expression
constexpr std::size_t kMaxShapeRank = 8;

// Thrown after a diagnostic has been recorded, to abandon the rest of the line.
struct LineFailed {};

struct Line {
  std::uint32_t number = 0;
  std::string_view text;
  std::vector<Token> tokens;
};

// The value of an expression: an integer, or a float literal kept as text (with its sign) so
// that each use converts it to the precision it needs (fp32 or bf16) with one rounding.
struct Value {
  bool is_float = false;
  std::int64_t integer = 0;
  std::string_view float_text;
  bool negative = false;
  std::uint32_t column = 0;  // where the expression starts
};

struct Symbol {
  enum class State : std::uint8_t { kPending, kResolving, kDone, kFailed };
  State state = State::kPending;
  const Line* line = nullptr;
  std::size_t begin = 0, end = 0;  // tokens of the defining expression in line->tokens
  Value value;
};

// A cursor over the tokens [index, end) of one line.
struct Cursor {
  const Line* line;
  std::size_t index;
  std::size_t end;

  // At the end of the range this is the token that ends it (a ',' or the end of the line).
  const Token& Peek(std::size_t ahead = 0) const {
    const std::size_t at = std::min(index + ahead, end);
    return line->tokens[std::min(at, line->tokens.size() - 1)];
  }
  const Token& Next() {
    const Token& token = Peek();
    if (index < end) ++index;
    return token;
  }
  bool AtEnd() const { return index >= end || Peek().kind == TokenKind::kEnd; }
};

// A float literal as the bits of `dtype` (kFp32 or kBf16).
std::optional<std::uint64_t> FloatLiteralBits(DataType dtype, std::string_view text, bool negative,
                                       std::string* why) {
  if (dtype == DataType::kFp32) {
    if (auto bits = ParseFp32(text, negative, why)) return *bits;
  } else if (auto bits = ParseBf16(text, negative, why)) {
    return *bits;
  }
  return std::nullopt;
}

// "a, b, c" for "expected one of" lists.
template <typename Range, typename Proj>
std::string JoinNames(const Range& range, Proj proj) {
  std::string text;
  for (const auto& item : range) {
    if (!text.empty()) text += ", ";
    text += proj(item);
  }
  return text;
}

std::string FieldList(const OpcodeSpec& spec) {
  return JoinNames(spec.fields, [](const FieldSpec& f) { return std::string(f.name); });
}

std::string UnitList() {
  std::string text;
  for (unsigned u = 0; u < isa::kNumUnits; ++u) {
    if (u != 0) text += ", ";
    text += isa::UnitName(static_cast<isa::Unit>(u));
  }
  return text;
}

class Assembler {
 public:
  Assembler(std::string_view source, std::string_view file) : file_(file) {
    std::uint32_t number = 0;
    std::size_t start = 0;
    while (start <= source.size()) {
      std::size_t stop = source.find('\n', start);
      if (stop == std::string_view::npos) stop = source.size();
      Line line;
      line.number = ++number;
      line.text = source.substr(start, stop - start);
      line.tokens = Lex(line.text);
      lines_.push_back(std::move(line));
      if (stop == source.size() || number == std::numeric_limits<std::uint32_t>::max()) break;
      start = stop + 1;
    }
  }

  Program Run() {
    for (const Line& line : lines_) {
      if (TooManyErrors()) break;  // pass 2 will not run; the message is added below
      try {
        DefineSymbols(line);
      } catch (const LineFailed&) {
        skip_.push_back(line.number);
      }
    }
    for (const Line& line : lines_) {
      if (TooManyErrors()) {
        stopped_ = true;
        break;
      }
      if (std::binary_search(skip_.begin(), skip_.end(), line.number)) {
        if (line.tokens.front().text == ".data") {
          data_open_ = false;  // a duplicate .data: its .values must not join the previous one
          data_failed_ = true;
        }
        continue;
      }
      try {
        Statement(line);
      } catch (const LineFailed&) {
        if (line.tokens.front().kind == TokenKind::kDirective &&
            line.tokens.front().text == ".data") {
          data_open_ = false;  // its .values lines belong to no segment: ignore them quietly
          data_failed_ = true;
        }
      }
    }
    if (diagnostics_.empty()) Finish();
    if (!diagnostics_.empty()) {
      std::stable_sort(diagnostics_.begin(), diagnostics_.end(),
                       [](const Diagnostic& a, const Diagnostic& b) {
                         return a.line != b.line ? a.line < b.line : a.column < b.column;
                       });
      if (stopped_ || diagnostics_.size() > kMaxDiagnostics) {
        diagnostics_.resize(std::min(diagnostics_.size(), kMaxDiagnostics));
        diagnostics_.push_back({file_, 0, 0, "too many errors; stopped"});
      }
      throw AssemblyError(std::move(diagnostics_));
    }
    return std::move(program_);
  }

 private:
  // Diagnostics ------------------------------------------------------------------------------
  bool TooManyErrors() const { return diagnostics_.size() >= kMaxDiagnostics; }

  void Report(const Line& line, std::uint32_t column, std::string message) {
    diagnostics_.push_back({file_, line.number, column, std::move(message)});
  }
  [[noreturn]] void Fail(const Line& line, std::uint32_t column, std::string message) {
    Report(line, column, std::move(message));
    throw LineFailed{};
  }
  [[noreturn]] void Fail(const Cursor& cursor, const Token& token, std::string message) {
    Fail(*cursor.line, token.column, std::move(message));
  }

  const Token& Expect(Cursor& cursor, TokenKind kind, std::string_view what) {
    const Token& token = cursor.Peek();
    if (token.kind != kind || cursor.index >= cursor.end) {
      Fail(cursor, token, fmt::format("expected {}, got {}", what, Describe(token)));
    }
    return cursor.Next();
  }

  // Pass 1: symbol definitions --------------------------------------------------------------
  void DefineSymbols(const Line& line) {
    const auto& tokens = line.tokens;
    if (tokens.front().kind != TokenKind::kDirective) return;
    const std::string_view directive = tokens.front().text;
    const bool equ = directive == ".equ";
    if (!equ && directive != ".data" && directive != ".input" && directive != ".output") return;
    // Malformed definitions are reported by pass 2; here we only need the name and the tokens
    // of the value (.equ) or of the at= option.
    if (tokens.size() < 3 || tokens[1].kind != TokenKind::kIdent) return;
    const Token& name = tokens[1];
    Symbol symbol;
    symbol.line = &line;
    if (equ) {
      if (tokens[2].kind != TokenKind::kComma) return;
      symbol.begin = 3;
      symbol.end = tokens.size() - 1;
    } else {
      bool found = false;
      for (std::size_t i = 2; i + 2 < tokens.size(); ++i) {
        if (tokens[i].kind == TokenKind::kComma && tokens[i + 1].kind == TokenKind::kIdent &&
            tokens[i + 1].text == "at" && tokens[i + 2].kind == TokenKind::kEquals) {
          symbol.begin = i + 3;
          symbol.end = ValueEnd(tokens, symbol.begin);
          found = true;
          break;
        }
      }
      if (!found) return;  // pass 2 reports the missing at=
    }
    if (!IsValidName(name.text)) {
      Fail(line, name.column,
           fmt::format("'{}' cannot name a symbol (bits, wait and signal are reserved; at most "
                       "128 characters)",
                       Printable(name.text)));
    }
    const auto [it, inserted] = symbols_.emplace(std::string(name.text), symbol);
    if (!inserted) {
      Fail(line, name.column,
           fmt::format("symbol '{}' is already defined at line {}", name.text,
                       it->second.line->number));
    }
  }

  // Index of the comma (at parenthesis depth 0) or end token that ends the value at `begin`.
  static std::size_t ValueEnd(const std::vector<Token>& tokens, std::size_t begin) {
    int depth = 0;
    std::size_t i = begin;
    for (; i + 1 < tokens.size(); ++i) {
      if (tokens[i].kind == TokenKind::kLParen) ++depth;
      if (tokens[i].kind == TokenKind::kRParen) --depth;
      if (tokens[i].kind == TokenKind::kComma && depth <= 0) break;
    }
    return i;
  }

  // Expressions ------------------------------------------------------------------------------
  // expr := term (('+' | '-') term)* ; term := unary ('*' unary)* ;
  // unary := '-' unary | NUMBER | SYMBOL | '(' expr ')'
  Value Expression(Cursor& cursor, int depth = 0) {
    Value left = Term(cursor, depth);
    while (cursor.Peek().kind == TokenKind::kPlus || cursor.Peek().kind == TokenKind::kMinus) {
      const Token& op = cursor.Next();
      const Value right = Term(cursor, depth);
      RequireIntegers(cursor, op, left, right);
      std::int64_t result = 0;
      const bool overflow = op.kind == TokenKind::kPlus
                                ? __builtin_add_overflow(left.integer, right.integer, &result)
                                : __builtin_sub_overflow(left.integer, right.integer, &result);
      if (overflow) Fail(cursor, op, "arithmetic overflows 64 bits");
      left.integer = result;
    }
    return left;
  }

  Value Term(Cursor& cursor, int depth) {
    Value left = Unary(cursor, depth);
    while (cursor.Peek().kind == TokenKind::kStar) {
      const Token& op = cursor.Next();
      const Value right = Unary(cursor, depth);
      RequireIntegers(cursor, op, left, right);
      std::int64_t result = 0;
      if (__builtin_mul_overflow(left.integer, right.integer, &result)) {
        Fail(cursor, op, "arithmetic overflows 64 bits");
      }
      left.integer = result;
    }
    return left;
  }

  void RequireIntegers(const Cursor& cursor, const Token& op, const Value& a, const Value& b) {
    if (a.is_float || b.is_float) {
      Fail(cursor, op,
           fmt::format("{} cannot combine floating-point values (a float must stand alone)",
                       Describe(op)));
    }
  }

  Value Unary(Cursor& cursor, int depth) {
    const std::uint32_t column = cursor.Peek().column;
    bool negative = false;
    while (cursor.Peek().kind == TokenKind::kMinus) {
      cursor.Next();
      negative = !negative;
    }
    Value value = Primary(cursor, depth);
    value.column = column;
    if (negative) {
      if (value.is_float) {
        value.negative = !value.negative;
      } else if (value.integer == std::numeric_limits<std::int64_t>::min()) {
        Fail(*cursor.line, column, "arithmetic overflows 64 bits");
      } else {
        value.integer = -value.integer;
      }
    }
    return value;
  }

  Value Primary(Cursor& cursor, int depth) {
    const Token& token = cursor.Peek();
    if (cursor.index >= cursor.end) {
      Fail(cursor, token, fmt::format("expected a value, got {}", Describe(token)));
    }
    switch (token.kind) {
      case TokenKind::kNumber: {
        cursor.Next();
        Value value;
        value.column = token.column;
        std::string why;
        switch (ClassifyLiteral(token.text)) {
          case LiteralKind::kInteger:
            if (auto integer = ParseInteger(token.text, &why)) {
              value.integer = *integer;
              return value;
            }
            Fail(cursor, token, why);
          case LiteralKind::kFloat:
            value.is_float = true;
            value.float_text = token.text;
            return value;
          case LiteralKind::kBad:
            break;
        }
        Fail(cursor, token,
             fmt::format("bad number '{}' (expected decimal, 0x hex or a float like 1.5e-3)",
                         Printable(token.text)));
      }
      case TokenKind::kIdent: {
        cursor.Next();
        Value value = Resolve(cursor, token);
        value.column = token.column;
        return value;
      }
      case TokenKind::kLParen: {
        cursor.Next();
        if (depth >= kMaxParenDepth) Fail(cursor, token, "parentheses nested too deeply");
        Value value = Expression(cursor, depth + 1);
        Expect(cursor, TokenKind::kRParen, "')'");
        return value;
      }
      default:
        Fail(cursor, token, fmt::format("expected a value, got {}", Describe(token)));
    }
  }

  // The value of a symbol, evaluating its definition on first use.
  Value Resolve(const Cursor& cursor, const Token& name) {
    const auto it = symbols_.find(name.text);
    if (it == symbols_.end()) {
      Fail(cursor, name, fmt::format("unknown symbol '{}'", Printable(name.text)));
    }
    Symbol& symbol = it->second;
    switch (symbol.state) {
      case Symbol::State::kDone:
        return symbol.value;
      case Symbol::State::kFailed:
        throw LineFailed{};  // already reported where it is defined
      case Symbol::State::kResolving:
        Fail(cursor, name, fmt::format("symbol '{}' is defined in terms of itself", name.text));
      case Symbol::State::kPending:
        break;
    }
    if (resolve_depth_ >= kMaxSymbolDepth) {
      Fail(cursor, name, fmt::format("symbol definitions nested more than {} deep at '{}'",
                                     kMaxSymbolDepth, name.text));
    }
    symbol.state = Symbol::State::kResolving;
    ++resolve_depth_;
    try {
      Cursor definition{symbol.line, symbol.begin, symbol.end};
      Value value = Expression(definition);
      if (!definition.AtEnd()) {
        const Token& extra = definition.Peek();
        Fail(definition, extra, fmt::format("unexpected {} after the value", Describe(extra)));
      }
      --resolve_depth_;
      symbol.value = value;
      symbol.state = Symbol::State::kDone;
      return value;
    } catch (const LineFailed&) {
      --resolve_depth_;
      symbol.state = Symbol::State::kFailed;
      throw;
    }
  }

  // A whole-range integer expression, e.g. the value of an option.
  std::int64_t Integer(Cursor& cursor, std::string_view what) {
    const Value value = Expression(cursor);
    if (value.is_float) {
      Fail(*cursor.line, value.column,
           fmt::format("{} needs an integer, got '{}{}'", what, value.negative ? "-" : "",
                       value.float_text));
    }
    return value.integer;
  }

  void ExpectEndOfValue(Cursor& cursor, std::string_view what) {
    const Token& token = cursor.Peek();
    if (cursor.index < cursor.end && token.kind != TokenKind::kComma &&
        token.kind != TokenKind::kEnd) {
      Fail(cursor, token,
           fmt::format("expected ',' or end of line after {}, got {}", what, Describe(token)));
    }
  }

  // Pass 2: statements ------------------------------------------------------------------------
  void Statement(const Line& line) {
    const Token& first = line.tokens.front();
    switch (first.kind) {
      case TokenKind::kEnd:
        return;
      case TokenKind::kDirective:
        return Directive(line);
      case TokenKind::kIdent:
        return Instruction(line);
      default:
        Fail(line, first.column,
             fmt::format("expected an instruction or a directive, got {}", Describe(first)));
    }
  }

  // Instructions ------------------------------------------------------------------------------
  void Instruction(const Line& line) {
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
          Fail(cursor, name, fmt::format("duplicate '{}' (already given at column {})", name.text,
                                         column));
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
    isa::Word word{};
    if (auto error = isa::Encode(instruction, word)) {
      Fail(line, mnemonic.column, error->message);  // not expected: CheckEncoding found nothing
    }
    AddWord(line, word);
  }

  void ExpectEquals(Cursor& cursor, const Token& name, const OpcodeSpec& spec,
                    std::string_view example) {
    const Token& token = cursor.Peek();
    if (token.kind != TokenKind::kEquals) {
      Fail(cursor, token,
           fmt::format("missing '=' after '{}' of '{}' (expected {}={}), got {}", name.text,
                       spec.mnemonic, name.text, example, Describe(token)));
    }
    cursor.Next();
  }

  // wait=mxu|vector: unit names separated by '|'.
  std::uint8_t UnitMask(Cursor& cursor, std::string_view what) {
    unsigned mask = 0;
    while (true) {
      const Token& token = cursor.Peek();
      const auto unit = token.kind == TokenKind::kIdent ? isa::UnitFromName(token.text)
                                                        : std::nullopt;
      if (!unit || *unit == isa::Unit::kSequencer) {
        Fail(cursor, token, fmt::format("expected a unit name in '{}', got {} (expected one of: {})",
                                        what, Describe(token), UnitList()));
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

  // The raw field value for `field`, as isa::Instruction stores it. Range checks are left to
  // isa::Encode (see CheckEncoding), except for what Encode cannot see: a negative number for
  // an unsigned field, a float where an integer is needed.
  std::uint64_t FieldValue(Cursor& cursor, const OpcodeSpec& spec, const FieldSpec& field) {
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
                         what, JoinNames(field.names, [](std::string_view n) {
                           return std::string(n);
                         })));
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

  // Runs isa::Encode's checks one field at a time so that each error points at its field: the
  // field under test keeps its value and every other field takes its smallest legal value.
  void CheckEncoding(const Line& line, const OpcodeSpec& spec, const isa::Instruction& full,
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
                           : fmt::format("{} (omitted fields are zero; give '{}=')",
                                         error->message, field.name));
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

  void AddWord(const Line& line, const isa::Word& word) {
    program_.words.push_back(word);
    program_.source_map.push_back({file_, line.number});
  }

  // Directives --------------------------------------------------------------------------------
  void Directive(const Line& line) {
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

  // NAME, key=value, ...: checks the syntax and returns the value token ranges by key.
  struct Options {
    const Token* name = nullptr;
    std::map<std::string_view, std::pair<std::size_t, std::size_t>, std::less<>> values;
    std::map<std::string_view, std::uint32_t, std::less<>> columns;
  };

  Options ParseOptions(const Line& line, bool named, std::initializer_list<std::string_view> keys) {
    const Token& directive = line.tokens.front();
    const std::string key_list = JoinNames(keys, [](std::string_view k) { return std::string(k); });
    Options options;
    Cursor cursor{&line, 1, line.tokens.size()};
    if (named) {
      const Token& name = cursor.Peek();
      if (name.kind != TokenKind::kIdent) {
        Fail(cursor, name, fmt::format("expected a name after '{}', got {}", directive.text,
                                       Describe(name)));
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
        Fail(cursor, key, fmt::format("unknown option '{}' for '{}' (expected one of: {})",
                                      Printable(key.text), directive.text, key_list));
      }
      if (options.columns.contains(key.text)) {
        Fail(cursor, key, fmt::format("duplicate option '{}'", key.text));
      }
      cursor.Next();
      const Token& equals = cursor.Peek();
      if (equals.kind != TokenKind::kEquals) {
        Fail(cursor, equals, fmt::format("missing '=' after '{}' (expected {}=VALUE), got {}",
                                         key.text, key.text, Describe(equals)));
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

  Cursor OptionCursor(const Line& line, const Options& options, std::string_view key) {
    const auto& [begin, end] = options.values.at(key);
    return Cursor{&line, begin, end};
  }

  std::uint64_t Address(const Line& line, const Options& options) {
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

  DataType ParseDataType(const Line& line, const Options& options) {
    const auto& [begin, end] = options.values.at("dtype");
    const Token& token = line.tokens[begin];
    const auto dtype = token.kind == TokenKind::kIdent && end == begin + 1
                           ? DataTypeFromName(token.text)
                           : std::nullopt;
    if (!dtype) {
      Fail(line, token.column, fmt::format("unknown dtype {} (expected one of: {})",
                                           Describe(token), DataTypeNames()));
    }
    return *dtype;
  }

  void CheckSymbolDefinition(const Line& line, const Token& name) {
    // Pass 1 registered the symbol unless its definition was too malformed to find; then the
    // line has a syntax error that ParseOptions has reported already.
    const auto it = symbols_.find(name.text);
    if (it == symbols_.end() || it->second.line != &line) {
      Fail(line, name.column, fmt::format("symbol '{}' could not be defined", name.text));
    }
  }

  void Equ(const Line& line) {
    Cursor cursor{&line, 1, line.tokens.size()};
    const Token& name = Expect(cursor, TokenKind::kIdent, "a name after '.equ'");
    Expect(cursor, TokenKind::kComma, "',' after the name");
    if (cursor.AtEnd()) {
      Fail(cursor, cursor.Peek(), fmt::format("expected a value, got {}", Describe(cursor.Peek())));
    }
    CheckSymbolDefinition(line, name);
    Resolve(cursor, name);
  }

  void Data(const Line& line) {
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

  void Values(const Line& line) {
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

  void AppendValue(Cursor& cursor, DataSegment& segment) {
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
               fmt::format("value {} is out of range for {} ({}..{})", value.integer, dtype, lo,
                           hi));
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
          const std::uint64_t magnitude =
              negative ? 0 - static_cast<std::uint64_t>(value.integer)
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

  // A raw bit pattern of `width` bits, written signed or unsigned.
  std::uint64_t RawBits(const Line& line, std::uint32_t column, std::int64_t raw, unsigned width,
                        std::string_view what) {
    const std::int64_t lo = -(std::int64_t{1} << (width - 1));
    const std::int64_t hi = width >= 63 ? std::numeric_limits<std::int64_t>::max()
                                        : (std::int64_t{1} << width) - 1;
    if (raw < lo || raw > hi) {
      Fail(line, column, fmt::format("{} = {} does not fit {} bits", what, raw, width));
    }
    return static_cast<std::uint64_t>(raw) & ((std::uint64_t{1} << width) - 1);
  }

  void Tensor(const Line& line, bool input) {
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

  // shape=8x16 (or 16, or 2x3x4): the dimensions arrive as one number token.
  std::vector<std::uint64_t> Shape(const Line& line, const Options& options) {
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
      if (part.empty() || !std::all_of(part.begin(), part.end(), [](char c) {
            return c >= '0' && c <= '9';
          })) {
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

  void Text(const Line& line) {
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
    program_.text_address = static_cast<std::uint64_t>(address);
    text_line_ = line.number;
  }

  // .config NAME: the rest of the line, since names like "small-int8" are not identifiers.
  void ConfigName(const Line& line) {
    const Token& directive = line.tokens.front();
    if (program_.config) {
      Fail(line, directive.column, fmt::format("'.config' given twice (first at line {})",
                                               config_line_));
    }
    const Token& end = line.tokens.back();
    const std::size_t from = static_cast<std::size_t>(directive.text.data() - line.text.data()) +
                             directive.text.size();
    const std::size_t to = static_cast<std::size_t>(end.text.data() - line.text.data());
    std::string_view name = line.text.substr(from, to - from);
    const std::size_t skip = name.find_first_not_of(" \t\r\v\f");
    name = skip == std::string_view::npos ? std::string_view{} : name.substr(skip);
    name = name.substr(0, name.find_last_not_of(" \t\r\v\f") + 1);
    const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '-' || c == '.' || c == '/' || c == '+';
    });
    if (!valid) {
      Fail(line,
           name.empty() ? end.column
                        : static_cast<std::uint32_t>(name.data() - line.text.data() + 1),
           fmt::format("expected a configuration name like small or small-int8, got '{}'",
                       Printable(name)));
    }
    program_.config = std::string(name);
    config_line_ = line.number;
  }

  // .word 0x<64 hex digits>: bit n of the number is bit n of the instruction.
  void RawWord(const Line& line) {
    Cursor cursor{&line, 1, line.tokens.size()};
    const Token& token = cursor.Peek();
    if (token.kind != TokenKind::kNumber || token.text.size() < 2 || token.text[0] != '0' ||
        (token.text[1] != 'x' && token.text[1] != 'X') ||
        ClassifyLiteral(token.text) != LiteralKind::kInteger) {
      Fail(cursor, token, fmt::format("'.word' needs 0x and 64 hex digits, got {}",
                                      Describe(token)));
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

  // After both passes: problems of the program as a whole, at the line that defines the
  // segment concerned.
  void Finish() {
    for (const DataSegment& segment : program_.data) {
      if (segment.bytes.empty()) {
        const std::uint32_t number = definitions_[segment.name];
        diagnostics_.push_back({file_, number, 1,
                                fmt::format("data '{}' has no '.values'", segment.name)});
      }
    }
    if (!diagnostics_.empty()) return;
    for (const ProgramProblem& problem : ValidateProgram(program_)) {
      const auto it = definitions_.find(problem.subject);
      const std::uint32_t number = it != definitions_.end() ? it->second : text_line_;
      diagnostics_.push_back({file_, number, number == 0 ? 0u : 1u, problem.message});
    }
  }

  std::string file_;
  std::vector<Line> lines_;
  std::vector<std::uint32_t> skip_;  // lines whose pass-1 error was reported (sorted)
  std::map<std::string, Symbol, std::less<>> symbols_;
  std::map<std::string, std::uint32_t, std::less<>> definitions_;  // data/input/output -> line
  int resolve_depth_ = 0;
  bool stopped_ = false;      // gave up after kMaxDiagnostics errors
  bool data_open_ = false;    // .values may follow: the last .data succeeded
  bool data_failed_ = false;  // the last .data had an error: ignore its .values
  std::uint32_t text_line_ = 0, config_line_ = 0;
  std::vector<Diagnostic> diagnostics_;
  Program program_;
};

}  // namespace

Program Assemble(std::string_view source, std::string_view file_name) {
  return Assembler(source, file_name).Run();
}

Program AssembleFile(const std::filesystem::path& path) {
  std::error_code error;
  std::ifstream in;
  if (std::filesystem::is_regular_file(path, error)) in.open(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in.is_open() || in.bad()) {
    throw AssemblyError({{path.string(), 0, 0, "cannot read the file"}});
  }
  return Assemble(text.str(), path.string());
}

}  // namespace systole::assembly
