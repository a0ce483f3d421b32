// Helpers shared by the HLO tests: parse inline HLO, run it, build literals.
#pragma once

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/parser.hpp"
#include "toolchain/hlo/verifier.hpp"

namespace systole::hlo::testing {

inline Module ParseAndVerify(std::string_view text) {
  Module module = ParseModule(text, "test.hlo");
  Verify(module);
  return module;
}

inline Literal Array(ElementType type, std::vector<std::int64_t> dims, std::vector<double> values) {
  Literal literal;
  literal.shape = Shape(type, std::move(dims));
  literal.values = std::move(values);
  return literal;
}

inline Literal F32(std::vector<std::int64_t> dims, std::vector<double> values) {
  return Array(ElementType::kF32, std::move(dims), std::move(values));
}

inline Literal RunText(std::string_view text, const std::vector<Literal>& arguments = {}) {
  const Module module = ParseAndVerify(text);
  return Interpreter(module).Run(arguments);
}

// The message of the HloError thrown by `body`, or "" when nothing is thrown.
template <typename Body>
std::string ErrorOf(Body body) {
  try {
    body();
  } catch (const HloError& error) {
    return error.what();
  }
  return "";
}

// The error of parsing `text` as the file "bad.hlo" ("" when it parses).
inline std::string ParseError(std::string_view text) {
  return ErrorOf([&] { ParseModule(text, "bad.hlo"); });
}

}  // namespace systole::hlo::testing
