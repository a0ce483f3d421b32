// Number literals of the assembly language, shared by the assembler (text -> bits) and the
// disassembler (bits -> text) so that the two agree exactly.
//
// Integers are decimal (`42`) or hex (`0x2A`, underscores allowed between hex digits). A float
// literal is a decimal number with a '.' or an exponent (`1.0`, `.5`, `6e-3`, `1e+10`); it is
// rounded to the nearest fp32 (correctly rounded), and for bf16 that fp32 is then rounded as
// NUMERICS.md's ToBf16 does (round to nearest even, subnormals flushed to zero). Signs are not
// part of a literal: the assembler applies unary minus by flipping the sign bit, which is exact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace systole::assembly {

// A decimal digit, as the lexer and the literal grammar both read one (not locale-dependent).
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::uint32_t FloatBits(float value);
float BitsToFloat(std::uint32_t bits);

// What kind of number a literal token is; kBad when it is not a well-formed number.
enum class LiteralKind : std::uint8_t { kInteger, kFloat, kBad };
LiteralKind ClassifyLiteral(std::string_view text);

// An integer literal's value; nullopt (and `why`) when it is malformed or above INT64_MAX.
std::optional<std::int64_t> ParseInteger(std::string_view text, std::string* why = nullptr);

// A float literal as fp32 or bf16 bits (negated when `negative`); nullopt and `why` when the
// text is not a float literal or the value does not fit (overflow to infinity, or so small
// that fp32 cannot tell it from zero).
std::optional<std::uint32_t> ParseFp32(std::string_view text, bool negative,
                                       std::string* why = nullptr);
std::optional<std::uint16_t> ParseBf16(std::string_view text, bool negative,
                                       std::string* why = nullptr);

// The shortest float literal (with its sign) that ParseFp32 / ParseBf16 turn back into exactly
// `bits`, always containing '.' or 'e' so that it reads as a float; nullopt when no literal
// does (infinity, NaN, values the conversion flushes): print those as raw integers.
std::optional<std::string> FormatFp32(std::uint32_t bits);
std::optional<std::string> FormatBf16(std::uint16_t bits);

}  // namespace systole::assembly
