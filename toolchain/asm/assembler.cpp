// Two passes over the lines: the first records where every symbol is defined (so that symbols
// may be used before their definition), the second parses each line completely, evaluating
// symbols lazily, and builds the Program. Each line is parsed by recursive descent over its
// tokens; the first syntax error on a line is reported and the rest of that line skipped, so
// one typo does not cascade, and the next lines are still checked.
#include "toolchain/asm/assembler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "arch/config/config.hpp"
#include "toolchain/asm/assembler_internal.hpp"
#include "toolchain/asm/lexer.hpp"
#include "toolchain/asm/literals.hpp"

namespace systole::assembly {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::Program;
using image::DataSegment;
using image::DataType;
using image::IsValidName;
using image::ValidateProgram;
using image::ProgramProblem;


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

namespace internal {

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

Assembler::Assembler(std::string_view source, std::string_view file) : file_(file) {
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

Program Assembler::Run() {
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

void Assembler::Report(const Line& line, std::uint32_t column, std::string message) {
  diagnostics_.push_back({file_, line.number, column, std::move(message)});
}

[[noreturn]] void Assembler::Fail(const Line& line, std::uint32_t column, std::string message) {
  Report(line, column, std::move(message));
  throw LineFailed{};
}

[[noreturn]] void Assembler::Fail(const Cursor& cursor, const Token& token, std::string message) {
  Fail(*cursor.line, token.column, std::move(message));
}

const Token& Assembler::Expect(Cursor& cursor, TokenKind kind, std::string_view what) {
  const Token& token = cursor.Peek();
  if (token.kind != kind || cursor.index >= cursor.end) {
    Fail(cursor, token, fmt::format("expected {}, got {}", what, Describe(token)));
  }
  return cursor.Next();
}

void Assembler::DefineSymbols(const Line& line) {
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

std::size_t Assembler::ValueEnd(const std::vector<Token>& tokens, std::size_t begin) {
  int depth = 0;
  std::size_t i = begin;
  for (; i + 1 < tokens.size(); ++i) {
    if (tokens[i].kind == TokenKind::kLParen) ++depth;
    if (tokens[i].kind == TokenKind::kRParen) --depth;
    if (tokens[i].kind == TokenKind::kComma && depth <= 0) break;
  }
  return i;
}

Value Assembler::Expression(Cursor& cursor, int depth) {
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

Value Assembler::Term(Cursor& cursor, int depth) {
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

void Assembler::RequireIntegers(const Cursor& cursor, const Token& op, const Value& a,
                                const Value& b) {
  if (a.is_float || b.is_float) {
    Fail(cursor, op,
         fmt::format("{} cannot combine floating-point values (a float must stand alone)",
                     Describe(op)));
  }
}

Value Assembler::Unary(Cursor& cursor, int depth) {
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

Value Assembler::Primary(Cursor& cursor, int depth) {
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

Value Assembler::Resolve(const Cursor& cursor, const Token& name) {
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
    Fail(cursor, name,
         fmt::format("symbol definitions nested more than {} deep at '{}'", kMaxSymbolDepth,
                     name.text));
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

std::int64_t Assembler::Integer(Cursor& cursor, std::string_view what) {
  const Value value = Expression(cursor);
  if (value.is_float) {
    Fail(*cursor.line, value.column,
         fmt::format("{} needs an integer, got '{}{}'", what, value.negative ? "-" : "",
                     value.float_text));
  }
  return value.integer;
}

void Assembler::ExpectEndOfValue(Cursor& cursor, std::string_view what) {
  const Token& token = cursor.Peek();
  if (cursor.index < cursor.end && token.kind != TokenKind::kComma &&
      token.kind != TokenKind::kEnd) {
    Fail(cursor, token,
         fmt::format("expected ',' or end of line after {}, got {}", what, Describe(token)));
  }
}

void Assembler::Statement(const Line& line) {
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

void Assembler::Finish() {
  for (const DataSegment& segment : program_.data) {
    if (segment.bytes.empty()) {
      const std::uint32_t number = definitions_[segment.name];
      diagnostics_.push_back(
          {file_, number, 1, fmt::format("data '{}' has no '.values'", segment.name)});
    }
  }
  if (!diagnostics_.empty()) return;
  // The transcendental functions exist in bf16 configurations only (docs/ISA.md, VECTOR).
  if (program_.config && !math_uses_.empty()) {
    std::optional<Config> config;
    try {
      config = LoadConfig(*program_.config);
    } catch (const std::exception&) {
      // A configuration this machine does not know: the device it runs on checks (the fault
      // ILLEGAL_FIELD), as for every other configuration-dependent rule.
    }
    if (config && config->dtype != DType::kBf16) {
      for (const auto& [number, column] : math_uses_) {
        diagnostics_.push_back(
            {file_, number, column,
             fmt::format("'math' needs a bf16 configuration; '{}' (line {}) is int8",
                         *program_.config, config_line_)});
      }
    }
    if (!diagnostics_.empty()) return;
  }
  for (const ProgramProblem& problem : ValidateProgram(program_)) {
    const auto it = definitions_.find(problem.subject);
    const std::uint32_t number = it != definitions_.end() ? it->second : text_line_;
    diagnostics_.push_back({file_, number, number == 0 ? 0u : 1u, problem.message});
  }
}

}  // namespace internal

Program Assemble(std::string_view source, std::string_view file_name) {
  return internal::Assembler(source, file_name).Run();
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
