// The assembler's internals, shared by assembler.cpp (driver, symbols, expressions),
// assembler_instructions.cpp and assembler_directives.cpp. Not part of the public API.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/image/program.hpp"
#include "arch/isa/isa.hpp"
#include "toolchain/asm/assembler.hpp"
#include "toolchain/asm/lexer.hpp"

namespace systole::assembly::internal {

using isa::FieldKind;
using isa::FieldSpec;
using isa::OpcodeSpec;

constexpr int kMaxSymbolDepth = 64;  // nested symbol definitions (A = B + 1, B = C, ...)
constexpr int kMaxParenDepth = 64;   // nested parentheses in one expression
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

// A float literal as the bits of `dtype` (kFp32 or kBf16); nullopt and `why` when it does not
// convert.
std::optional<std::uint64_t> FloatLiteralBits(image::DataType dtype, std::string_view text, bool negative,
                                              std::string* why);

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

// "mem, dram, ..." and "load, weight, ...".
std::string FieldList(const OpcodeSpec& spec);
std::string UnitList();

// One assembly run over one source text: Run() either returns the Program or throws
// AssemblyError with every diagnostic.
class Assembler {
 public:
  Assembler(std::string_view source, std::string_view file);
  image::Program Run();

 private:
  // Diagnostics -------------------------------------------------------------------------------
  bool TooManyErrors() const { return diagnostics_.size() >= kMaxDiagnostics; }
  void Report(const Line& line, std::uint32_t column, std::string message);
  [[noreturn]] void Fail(const Line& line, std::uint32_t column, std::string message);
  [[noreturn]] void Fail(const Cursor& cursor, const Token& token, std::string message);
  const Token& Expect(Cursor& cursor, TokenKind kind, std::string_view what);

  // Pass 1: symbol definitions ----------------------------------------------------------------
  void DefineSymbols(const Line& line);
  // Index of the comma (at parenthesis depth 0) or end token that ends the value at `begin`.
  static std::size_t ValueEnd(const std::vector<Token>& tokens, std::size_t begin);

  // Expressions -------------------------------------------------------------------------------
  // expr := term (('+' | '-') term)* ; term := unary ('*' unary)* ;
  // unary := '-' unary | NUMBER | SYMBOL | '(' expr ')'
  Value Expression(Cursor& cursor, int depth = 0);
  Value Term(Cursor& cursor, int depth);
  void RequireIntegers(const Cursor& cursor, const Token& op, const Value& a, const Value& b);
  Value Unary(Cursor& cursor, int depth);
  Value Primary(Cursor& cursor, int depth);
  // The value of a symbol, evaluating its definition on first use.
  Value Resolve(const Cursor& cursor, const Token& name);
  // A whole-range integer expression, e.g. the value of an option.
  std::int64_t Integer(Cursor& cursor, std::string_view what);
  void ExpectEndOfValue(Cursor& cursor, std::string_view what);

  // Pass 2: statements ------------------------------------------------------------------------
  void Statement(const Line& line);

  // Instructions ------------------------------------------------------------------------------
  void Instruction(const Line& line);
  void ExpectEquals(Cursor& cursor, const Token& name, const OpcodeSpec& spec,
                    std::string_view example);
  // wait=mxu|vector: unit names separated by '|'.
  std::uint8_t UnitMask(Cursor& cursor, std::string_view what);
  // The raw field value for `field`, as isa::Instruction stores it. Range checks are left to
  // isa::Encode (see CheckEncoding), except for what Encode cannot see: a negative number for
  // an unsigned field, a float where an integer is needed.
  std::uint64_t FieldValue(Cursor& cursor, const OpcodeSpec& spec, const FieldSpec& field);
  // Runs isa::Encode's checks one field at a time so that each error points at its field: the
  // field under test keeps its value and every other field takes its smallest legal value.
  void CheckEncoding(const Line& line, const OpcodeSpec& spec, const isa::Instruction& full,
                     const std::array<std::uint32_t, isa::kNumFields>& columns,
                     std::uint32_t wait_column, std::uint32_t signal_column);
  void AddWord(const Line& line, const isa::Word& word);

  // Directives --------------------------------------------------------------------------------
  void Directive(const Line& line);
  // NAME, key=value, ...: checks the syntax and returns the value token ranges by key.
  struct Options {
    const Token* name = nullptr;
    std::map<std::string_view, std::pair<std::size_t, std::size_t>, std::less<>> values;
    std::map<std::string_view, std::uint32_t, std::less<>> columns;
  };
  Options ParseOptions(const Line& line, bool named, std::initializer_list<std::string_view> keys);
  Cursor OptionCursor(const Line& line, const Options& options, std::string_view key);
  std::uint64_t Address(const Line& line, const Options& options);
  image::DataType ParseDataType(const Line& line, const Options& options);
  void CheckSymbolDefinition(const Line& line, const Token& name);
  void Equ(const Line& line);
  void Data(const Line& line);
  void Values(const Line& line);
  void AppendValue(Cursor& cursor, image::DataSegment& segment);
  // A raw bit pattern of `width` bits, written signed or unsigned.
  std::uint64_t RawBits(const Line& line, std::uint32_t column, std::int64_t raw, unsigned width,
                        std::string_view what);
  void Tensor(const Line& line, bool input);
  // shape=8x16 (or 16, or 2x3x4): the dimensions arrive as one number token.
  std::vector<std::uint64_t> Shape(const Line& line, const Options& options);
  void Text(const Line& line);
  // .config NAME: the rest of the line, since names like "small-int8" are not identifiers.
  void ConfigName(const Line& line);
  // .word 0x<64 hex digits>: bit n of the number is bit n of the instruction.
  void RawWord(const Line& line);
  // After both passes: problems of the program as a whole, at the line that defines the
  // segment concerned.
  void Finish();

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
  // Where each VECTOR with a `math` function was written (line, column of `math=`): an int8
  // `.config` refuses them in Finish, wherever in the file the .config line is.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> math_uses_;
  std::vector<Diagnostic> diagnostics_;
  image::Program program_;
};

}  // namespace systole::assembly::internal
