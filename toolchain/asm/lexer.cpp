#include "toolchain/asm/lexer.hpp"

#include <fmt/format.h>

#include "toolchain/asm/literals.hpp"

namespace systole::assembly {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsAlnum(char c) { return IsAlpha(c) || IsDigit(c); }

TokenKind PunctuationKind(char c) {
  switch (c) {
    case '=':
      return TokenKind::kEquals;
    case ',':
      return TokenKind::kComma;
    case '|':
      return TokenKind::kPipe;
    case '+':
      return TokenKind::kPlus;
    case '-':
      return TokenKind::kMinus;
    case '*':
      return TokenKind::kStar;
    case '(':
      return TokenKind::kLParen;
    case ')':
      return TokenKind::kRParen;
    default:
      return TokenKind::kInvalid;
  }
}

}  // namespace

std::vector<Token> Lex(std::string_view line) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  const auto column = [](std::size_t index) {
    return static_cast<std::uint32_t>(std::min<std::size_t>(index + 1, UINT32_MAX));
  };
  while (i < line.size()) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
      ++i;
      continue;
    }
    if (c == ';' || c == '#') break;
    const std::size_t start = i;
    TokenKind kind;
    if (IsAlpha(c) || (c == '.' && i + 1 < line.size() && IsAlpha(line[i + 1]))) {
      kind = c == '.' ? TokenKind::kDirective : TokenKind::kIdent;
      ++i;
      while (i < line.size() && IsAlnum(line[i])) ++i;
    } else if (IsDigit(c) || (c == '.' && i + 1 < line.size() && IsDigit(line[i + 1]))) {
      // A number runs over letters, digits, '_' and '.', so that "0x1g" or "1.2.3" arrive at the
      // parser whole and are reported as one bad number. A sign directly after an exponent 'e'
      // belongs to the number ("1e-3"), except in hex, where 'e' is a digit ("0x1e-2" is a
      // subtraction).
      kind = TokenKind::kNumber;
      const bool hex =
          c == '0' && i + 1 < line.size() && (line[i + 1] == 'x' || line[i + 1] == 'X');
      ++i;
      while (i < line.size()) {
        const char d = line[i];
        const bool sign =
            (d == '+' || d == '-') && !hex && (line[i - 1] == 'e' || line[i - 1] == 'E');
        if (!IsAlnum(d) && d != '.' && !sign) break;
        ++i;
      }
    } else {
      kind = PunctuationKind(c);
      ++i;
    }
    tokens.push_back({kind, line.substr(start, i - start), column(start)});
  }
  tokens.push_back({TokenKind::kEnd, line.substr(i, 0), column(i)});
  return tokens;
}

std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

std::string Describe(const Token& token) {
  if (token.kind == TokenKind::kEnd) return "end of line";
  return fmt::format("'{}'", Printable(token.text));
}

}  // namespace systole::assembly
