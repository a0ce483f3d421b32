// The parser's view of the text: a position that knows its line and column, trivia skipping
// (whitespace, `//` and `/* */` comments) and the primitive tokens HLO is made of. Internal to
// the parser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "toolchain/hlo/error.hpp"

namespace systole::hlo::detail {

class Cursor {
 public:
  Cursor(std::string_view text, std::string file, std::uint32_t first_line);

  // Skips whitespace and comments; an unterminated /* comment is an error.
  void SkipTrivia();
  bool AtEnd();                      // after trivia
  char Peek(std::size_t ahead = 0);  // after trivia; '\0' at the end
  char PeekRaw(std::size_t ahead = 0) const;  // no trivia skipping
  // Consumes `token` if the text continues with it (after trivia).
  bool TryConsume(std::string_view token);
  // Consumes a keyword (`ENTRY`, `ROOT`, `HloModule`) only when no name character follows.
  bool TryKeyword(std::string_view keyword);
  void Expect(std::string_view token);  // fails with "expected 'token', found …"

  bool AtName();  // a name (optionally '%'-prefixed) starts here
  // [%]?[A-Za-z_][A-Za-z0-9_.-]* — a '-' is only part of a name when '>' does not follow it
  // (so `b01f_01io->b01f` splits at the arrow). Returns the name without '%'.
  std::string_view Name(std::string_view what);
  std::int64_t Integer(std::string_view what);  // optional '-', decimal digits, |v| <= 2^31
  double Number(std::string_view what);  // ints, decimals, exponents, inf, nan, true, false
  // Raw characters while `accept` holds (no trivia inside); fails when empty.
  template <typename Accept>
  std::string_view Word(std::string_view what, Accept accept) {
    SkipTrivia();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && accept(text_[pos_])) Advance(1);
    if (pos_ == start) Fail(what);
    return text_.substr(start, pos_ - start);
  }
  // A double-quoted string on one line, with C escapes (\" \\ \n \t); returns it unescaped.
  std::string String(std::string_view what);
  // Skips one attribute value: a balanced {…}, (…) or […] group, a string, or a bare word.
  void SkipValue();
  // Skips raw text up to (not including) an unnested `close`; nesting counts (), [] and {}.
  void SkipUntilClosing(char close);

  SourceLocation Location();  // of the next token (after trivia)
  SourceLocation LocationHere() const;
  [[noreturn]] void Fail(std::string_view expected);  // "expected X, found Y" at the next token
  [[noreturn]] void FailAt(const SourceLocation& location, const std::string& message) const;

  std::size_t position() const { return pos_; }
  // A saved position to go back to (one token of lookahead beyond Peek).
  struct Mark {
    std::size_t pos, line_start;
    std::uint32_t line;
  };
  Mark Save() const { return {pos_, line_start_, line_}; }
  void Restore(const Mark& mark) {
    pos_ = mark.pos;
    line_start_ = mark.line_start;
    line_ = mark.line;
  }

 private:
  void Advance(std::size_t count);
  std::string DescribeNext();

  std::string_view text_;
  std::string file_;
  std::size_t pos_ = 0;
  std::uint32_t line_;
  std::size_t line_start_ = 0;
};

bool IsNameStart(char c);
bool IsNameChar(char c);
// Text safe to print: control and non-ASCII bytes as \xNN.
std::string Printable(std::string_view text);

}  // namespace systole::hlo::detail
