#include "toolchain/asm/literals.hpp"

#include <fmt/format.h>

#include "arch/numerics/bf16.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>

namespace systole::assembly {
namespace {

constexpr std::uint32_t kFp32Sign = 0x80000000u, kFp32Exp = 0x7F800000u;
constexpr std::uint16_t kBf16Exp = 0x7F80u;

bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsHexPrefix(std::string_view text) {
  return text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
}

void Fail(std::string* why, std::string message) {
  if (why != nullptr) *why = std::move(message);
}

}  // namespace

std::uint32_t FloatBits(float value) { return std::bit_cast<std::uint32_t>(value); }
float BitsToFloat(std::uint32_t bits) { return std::bit_cast<float>(bits); }

LiteralKind ClassifyLiteral(std::string_view text) {
  if (text.empty()) return LiteralKind::kBad;
  if (IsHexPrefix(text)) {
    bool any = false;
    for (char c : text.substr(2)) {
      if (c == '_') continue;
      if (!IsHexDigit(c)) return LiteralKind::kBad;
      any = true;
    }
    // No leading, trailing or doubled underscores: they would hide a typo.
    if (!any || text[2] == '_' || text.back() == '_' || text.find("__") != std::string_view::npos) {
      return LiteralKind::kBad;
    }
    return LiteralKind::kInteger;
  }
  bool all_digits = true;
  for (char c : text) all_digits = all_digits && IsDigit(c);
  if (all_digits) return LiteralKind::kInteger;
  // A float: digits with a '.' and/or an exponent. from_chars decides the details; it must
  // consume the whole token and the token must start like a number (no "inf", "nan").
  if (!IsDigit(text[0]) && !(text[0] == '.' && text.size() > 1 && IsDigit(text[1]))) {
    return LiteralKind::kBad;
  }
  float value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ptr != text.data() + text.size()) return LiteralKind::kBad;
  return LiteralKind::kFloat;
}

std::optional<std::int64_t> ParseInteger(std::string_view text, std::string* why) {
  if (ClassifyLiteral(text) != LiteralKind::kInteger) {
    Fail(why, fmt::format("'{}' is not an integer", text));
    return std::nullopt;
  }
  const bool hex = IsHexPrefix(text);
  const std::uint64_t base = hex ? 16 : 10;
  std::uint64_t value = 0;
  for (char c : hex ? text.substr(2) : text) {
    if (c == '_') continue;
    const std::uint64_t digit = IsDigit(c)               ? static_cast<std::uint64_t>(c - '0')
                                : (c >= 'a' && c <= 'f') ? static_cast<std::uint64_t>(c - 'a' + 10)
                                                         : static_cast<std::uint64_t>(c - 'A' + 10);
    if (value >
        (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - digit) / base) {
      Fail(why, fmt::format("number '{}' is too large (at most 0x7fffffffffffffff)", text));
      return std::nullopt;
    }
    value = value * base + digit;
  }
  return static_cast<std::int64_t>(value);
}

std::optional<std::uint32_t> ParseFp32(std::string_view text, bool negative, std::string* why) {
  if (ClassifyLiteral(text) != LiteralKind::kFloat) {
    Fail(why, fmt::format("'{}' is not a floating-point literal", text));
    return std::nullopt;
  }
  float value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    // from_chars reports both overflow and total underflow; tell them apart by the exponent.
    double wide = 0;
    const auto wide_result = std::from_chars(text.data(), text.data() + text.size(), wide);
    const bool tiny = wide_result.ec == std::errc() ? std::fabs(wide) < 1.0
                                                    : text.find("e-") != std::string_view::npos ||
                                                          text.find("E-") != std::string_view::npos;
    Fail(why, tiny ? fmt::format("'{}' is too small for fp32 (write 0.0)", text)
                   : fmt::format("'{}' is too large for fp32", text));
    return std::nullopt;
  }
  std::uint32_t bits = FloatBits(value);
  if ((bits & kFp32Exp) == kFp32Exp) {
    Fail(why, fmt::format("'{}' is too large for fp32", text));
    return std::nullopt;
  }
  if (negative) bits ^= kFp32Sign;
  return bits;
}

std::optional<std::uint16_t> ParseBf16(std::string_view text, bool negative, std::string* why) {
  const auto fp32 = ParseFp32(text, negative, why);
  if (!fp32) return std::nullopt;
  const std::uint16_t bits = numerics::F32ToBf16(*fp32);
  if ((bits & kBf16Exp) == kBf16Exp) {
    Fail(why, fmt::format("'{}' rounds to infinity in bf16 (largest is 3.3895e+38)", text));
    return std::nullopt;
  }
  return bits;
}

namespace {

// Tries ever more significant digits until the literal converts back to `bits`.
template <typename Bits, typename Parse>
std::optional<std::string> FormatShortest(float value, Bits bits, Parse parse) {
  const bool negative = std::signbit(value);
  const float magnitude = negative ? -value : value;
  // Start with as many digits as the integer part has, so that %g-style output stays in plain
  // notation ("10.0", not "1e+01") for values below 10^9.
  int first = 1;
  for (float limit = 10.0f; first < 9 && magnitude >= limit; limit *= 10.0f) ++first;
  for (int precision = first; precision <= 9; ++precision) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, magnitude,
                                      std::chars_format::general, precision);
    if (result.ec != std::errc()) continue;
    std::string text(buffer, result.ptr);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";  // "3" would be an integer
    const auto back = parse(text, negative);
    if (back && *back == bits) return (negative ? "-" : "") + text;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> FormatFp32(std::uint32_t bits) {
  return FormatShortest(BitsToFloat(bits), bits, [](std::string_view text, bool negative) {
    return ParseFp32(text, negative);
  });
}

std::optional<std::string> FormatBf16(std::uint16_t bits) {
  return FormatShortest(
      BitsToFloat(std::uint32_t{bits} << 16), bits,
      [](std::string_view text, bool negative) { return ParseBf16(text, negative); });
}

}  // namespace systole::assembly
