// Helpers shared by the assembler tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tests/util/test_seed.hpp"
#include "arch/isa/isa.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::assembly::testing {

inline std::filesystem::path ExampleDir() {
  return std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm";
}

// Every example program, sorted so that failures are reproducible.
inline std::vector<std::filesystem::path> ExampleFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(ExampleDir())) {
    if (entry.path().extension() == ".s") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The seed of a randomized test: tests/util/test_seed.hpp's (SYSTOLE_SEED, else one derived
// from the test's name, so CI repeats itself), printed with the command that replays it.
inline std::uint64_t TestSeed() { return systole::test::Seed(); }

// The diagnostics of assembling `source`; fails the test if it assembles.
inline std::vector<Diagnostic> Errors(std::string_view source, std::string_view file = "t.s") {
  try {
    Assemble(source, file);
  } catch (const AssemblyError& error) {
    return error.diagnostics();
  }
  ADD_FAILURE() << "expected an error for:\n" << source;
  return {};
}

// The first diagnostic as "line:column: message" (without the file name).
inline std::string FirstError(std::string_view source) {
  const std::vector<Diagnostic> errors = Errors(source);
  if (errors.empty()) return "<none>";
  return std::to_string(errors[0].line) + ":" + std::to_string(errors[0].column) + ": " +
         errors[0].message;
}

// A random valid instruction, built from the ISA table alone: every field gets a random value
// inside its legal range (biased towards the edges), every token mask a random set of other
// units.
inline isa::Instruction RandomInstruction(std::mt19937_64& rng) {
  const auto opcodes = isa::Opcodes();
  const isa::OpcodeSpec& spec = opcodes[rng() % opcodes.size()];
  isa::Instruction instruction;
  instruction.opcode = spec.opcode;
  for (const isa::FieldSpec& field : spec.fields) {
    const std::uint64_t width_max =
        field.width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << field.width) - 1;
    const std::uint64_t hi = std::min(field.max, width_max), lo = field.min;
    std::uint64_t value = 0;
    switch (rng() % 4) {
      case 0:
        value = lo;
        break;
      case 1:
        value = hi;
        break;
      case 2:
        value = lo + rng() % std::min<std::uint64_t>(hi - lo + 1, 17);
        break;
      default:
        value = hi == ~std::uint64_t{0} ? rng() : lo + rng() % (hi - lo + 1);
        break;
    }
    if (field.kind == isa::FieldKind::kSigned) {
      const unsigned shift = 64 - field.width;  // sign-extend, as Decode stores it
      value = static_cast<std::uint64_t>(static_cast<std::int64_t>(value << shift) >> shift);
    }
    instruction[field.field] = value;
  }
  if (spec.unit != isa::Unit::kSequencer) {
    const unsigned others =
        ((1u << isa::kNumUnits) - 1) & ~(1u << static_cast<unsigned>(spec.unit));
    instruction.wait = static_cast<std::uint8_t>(rng() & others);
    instruction.signal = static_cast<std::uint8_t>(rng() & others);
  }
  return instruction;
}

}  // namespace systole::assembly::testing
