// Splits one line of assembly into tokens, each with its 1-based column so that every
// diagnostic can point at the character it is about.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace systole::assembly {

enum class TokenKind : std::uint8_t {
  kIdent,      // [A-Za-z_][A-Za-z0-9_]*: mnemonics, field names, enum values, symbols
  kDirective,  // '.' followed by an identifier: .data, .equ, ...
  kNumber,     // starts with a digit (or '.' and a digit); see literals.hpp for what is valid
  kEquals,     // =
  kComma,      // ,
  kPipe,       // |  (between unit names in wait= / signal=)
  kPlus,       // +
  kMinus,      // -
  kStar,       // *
  kLParen,     // (
  kRParen,     // )
  kInvalid,    // a character the language does not use
  kEnd,        // end of line (or start of a comment)
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;  // points into the line passed to Lex
  std::uint32_t column = 0;
};

// Tokens of `line` (without its newline), always ending with one kEnd token. A ';' or '#'
// starts a comment that runs to the end of the line. Never fails: unexpected characters become
// kInvalid tokens that the parser reports.
std::vector<Token> Lex(std::string_view line);

// How a token is shown in a message: the text, or "end of line"; control and non-ASCII bytes
// are escaped as \xNN so that a message is always printable.
std::string Describe(const Token& token);
std::string Printable(std::string_view text);

}  // namespace systole::assembly
