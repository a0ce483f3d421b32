#include "toolchain/hlo/parser_cursor.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace systole::hlo::detail {

namespace {

constexpr std::int64_t kIntegerLimit = std::int64_t{1} << 31;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

bool IsNameStart(char c) { return IsAlpha(c) || c == '_'; }
bool IsNameChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '_' || c == '.' || c == '-'; }

std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F) {
      out += fmt::format("\\x{:02X}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

Cursor::Cursor(std::string_view text, std::string file, std::uint32_t first_line)
    : text_(text), file_(std::move(file)), line_(first_line) {}

void Cursor::Advance(std::size_t count) {
  for (std::size_t i = 0; i < count && pos_ < text_.size(); ++i) {
    if (text_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
}

char Cursor::PeekRaw(std::size_t ahead) const {
  return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
}

void Cursor::SkipTrivia() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      Advance(1);
    } else if (c == '/' && PeekRaw(1) == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') Advance(1);
    } else if (c == '/' && PeekRaw(1) == '*') {
      const SourceLocation start = LocationHere();
      const std::size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) FailAt(start, "unterminated /* comment");
      Advance(end + 2 - pos_);
    } else {
      return;
    }
  }
}

bool Cursor::AtEnd() {
  SkipTrivia();
  return pos_ >= text_.size();
}

char Cursor::Peek(std::size_t ahead) {
  SkipTrivia();
  return PeekRaw(ahead);
}

bool Cursor::TryConsume(std::string_view token) {
  SkipTrivia();
  if (text_.substr(pos_, token.size()) != token) return false;
  Advance(token.size());
  return true;
}

bool Cursor::TryKeyword(std::string_view keyword) {
  SkipTrivia();
  if (text_.substr(pos_, keyword.size()) != keyword) return false;
  if (IsNameChar(PeekRaw(keyword.size()))) return false;
  Advance(keyword.size());
  return true;
}

void Cursor::Expect(std::string_view token) {
  if (!TryConsume(token)) Fail(fmt::format("'{}'", token));
}

bool Cursor::AtName() {
  SkipTrivia();
  const char first = PeekRaw();
  return IsNameStart(first) || (first == '%' && IsNameStart(PeekRaw(1)));
}

std::string_view Cursor::Name(std::string_view what) {
  if (!AtName()) Fail(what);
  if (PeekRaw() == '%') Advance(1);
  const std::size_t start = pos_;
  while (pos_ < text_.size() && IsNameChar(text_[pos_])) {
    if (text_[pos_] == '-' && PeekRaw(1) == '>') break;
    Advance(1);
  }
  return text_.substr(start, pos_ - start);
}

std::int64_t Cursor::Integer(std::string_view what) {
  SkipTrivia();
  const SourceLocation where = LocationHere();
  std::size_t length = PeekRaw() == '-' || PeekRaw() == '+' ? 1 : 0;
  while (IsDigit(PeekRaw(length))) ++length;
  const std::string_view digits = text_.substr(pos_, length);
  const std::size_t sign = digits.empty() || IsDigit(digits[0]) ? 0 : 1;
  if (digits.size() == sign) Fail(what);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data() + sign, digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size() || value > kIntegerLimit) {
    FailAt(where, fmt::format("{} '{}' is out of range (at most 2^31 in magnitude)", what, digits));
  }
  Advance(length);
  return digits[0] == '-' ? -value : value;
}

double Cursor::Number(std::string_view what) {
  SkipTrivia();
  const SourceLocation where = LocationHere();
  std::size_t length = 0;
  const bool negative = PeekRaw() == '-';
  if (PeekRaw() == '-' || PeekRaw() == '+') ++length;
  if (IsAlpha(PeekRaw(length))) {
    std::size_t end = length;
    while (IsAlpha(PeekRaw(end))) ++end;
    const std::string_view word = text_.substr(pos_ + length, end - length);
    double value = 0;
    if (word == "inf") {
      value = std::numeric_limits<double>::infinity();
    } else if (word == "nan") {
      value = std::numeric_limits<double>::quiet_NaN();
    } else if (word == "true" && length == 0) {
      value = 1;
    } else if (word == "false" && length == 0) {
      value = 0;
    } else {
      Fail(what);
    }
    Advance(end);
    // XLA may print a NaN payload: nan(0x7fc00000).
    if (word == "nan" && PeekRaw() == '(') {
      std::size_t close = 1;
      while (close < 32 && PeekRaw(close) != ')' && PeekRaw(close) != '\0') ++close;
      if (PeekRaw(close) == ')') Advance(close + 1);
    }
    return negative ? -value : value;
  }
  std::size_t end = length;
  while (true) {
    const char c = PeekRaw(end);
    const char previous = end > 0 ? PeekRaw(end - 1) : '\0';
    if (IsDigit(c) || c == '.' || c == 'e' || c == 'E' ||
        ((c == '-' || c == '+') && (previous == 'e' || previous == 'E'))) {
      ++end;
    } else {
      break;
    }
  }
  const std::string_view digits = text_.substr(pos_ + length, end - length);
  if (digits.empty()) Fail(what);
  double value = 0;
  const auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (stop != digits.data() + digits.size() ||
      (error != std::errc() && error != std::errc::result_out_of_range)) {
    FailAt(where, fmt::format("expected {}, found '{}'", what, Printable(text_.substr(pos_, end))));
  }
  if (error == std::errc::result_out_of_range) {
    // from_chars leaves `value` untouched on range errors: decide between overflow and underflow.
    const auto e = digits.find_first_of("eE");
    const bool tiny = e != std::string_view::npos && e + 1 < digits.size() && digits[e + 1] == '-';
    value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  }
  Advance(end);
  return negative ? -value : value;
}

void Cursor::SkipValue() {
  SkipTrivia();
  const SourceLocation start = LocationHere();
  const char first = PeekRaw();
  if (first == '{' || first == '(' || first == '[') {
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        Advance(1);
        while (pos_ < text_.size() && text_[pos_] != '"') Advance(text_[pos_] == '\\' ? 2 : 1);
        if (pos_ >= text_.size()) FailAt(start, "unterminated string");
        Advance(1);
        continue;
      }
      if (c == '/' && PeekRaw(1) == '*') {
        SkipTrivia();
        continue;
      }
      if (c == '{' || c == '(' || c == '[') ++depth;
      if (c == '}' || c == ')' || c == ']') --depth;
      Advance(1);
      if (depth == 0) return;
    }
    FailAt(start, fmt::format("unterminated '{}'", first));
  }
  if (first == '"') {
    Advance(1);
    while (pos_ < text_.size() && text_[pos_] != '"') Advance(text_[pos_] == '\\' ? 2 : 1);
    if (pos_ >= text_.size()) FailAt(start, "unterminated string");
    Advance(1);
    return;
  }
  const std::size_t begin = pos_;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ',' || c == ')' || c == '}' || c == ' ' || c == '\n' || c == '\t' || c == '\r') break;
    Advance(1);
  }
  if (pos_ == begin) Fail("an attribute value");
}

std::string Cursor::String(std::string_view what) {
  SkipTrivia();
  if (PeekRaw() != '"') Fail(what);
  const SourceLocation start = LocationHere();
  Advance(1);
  std::string value;
  while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
    char c = text_[pos_];
    if (c == '\\' && pos_ + 1 < text_.size()) {
      const char escaped = text_[pos_ + 1];
      c = escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
      Advance(2);
    } else {
      Advance(1);
    }
    value.push_back(c);
  }
  if (pos_ >= text_.size() || text_[pos_] == '\n') FailAt(start, "unterminated string");
  Advance(1);
  return value;
}

void Cursor::SkipUntilClosing(char close) {
  const SourceLocation start = LocationHere();
  int depth = 0;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (depth == 0 && c == close) return;
    if (c == '{' || c == '(' || c == '[') ++depth;
    if (c == '}' || c == ')' || c == ']') --depth;
    if (depth < 0) break;
    Advance(1);
  }
  FailAt(start, fmt::format("expected '{}' to close this group", close));
}

SourceLocation Cursor::LocationHere() const {
  return SourceLocation{file_, line_, static_cast<std::uint32_t>(pos_ - line_start_ + 1)};
}

SourceLocation Cursor::Location() {
  SkipTrivia();
  return LocationHere();
}

std::string Cursor::DescribeNext() {
  if (pos_ >= text_.size()) return "end of input";
  std::size_t length = 0;
  while (pos_ + length < text_.size() && length < 40 &&
         (IsNameChar(text_[pos_ + length]) || text_[pos_ + length] == '%')) {
    ++length;
  }
  if (length == 0) length = 1;
  return "'" + Printable(text_.substr(pos_, length)) + "'";
}

void Cursor::Fail(std::string_view expected) {
  SkipTrivia();
  FailAt(LocationHere(), fmt::format("expected {}, found {}", expected, DescribeNext()));
}

void Cursor::FailAt(const SourceLocation& location, const std::string& message) const {
  throw HloError(location, message);
}

}  // namespace systole::hlo::detail
