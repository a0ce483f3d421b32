// Parses XLA HLO text as JAX (`.as_text(dialect="hlo")`) and XLA (`--xla_dump_to`) write it,
// old and new: see docs/HLO.md for the accepted syntax. Any malformed input throws HloError
// with file:line:column and "expected X, found Y"; the parser never crashes or loops on bad
// input (tests/fuzz/fuzz_hlo.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "toolchain/hlo/ir.hpp"

namespace systole::hlo {

// Every module in `text`; modules are separated by lines starting with `// -----`.
// `file_name` only appears in error locations.
std::vector<Module> ParseModules(std::string_view text, std::string_view file_name = "");

// Exactly one module (throws HloError when the text holds several).
Module ParseModule(std::string_view text, std::string_view file_name = "");

// The text of one module of a `// -----` separated file, chosen by its index among the file's
// modules (`selector` all digits) or by its name (`HloModule NAME`), with every line before it
// left empty so that error locations keep the file's line numbers. Throws HloError listing the
// file's modules when none matches.
std::string SelectModuleText(std::string_view text, std::string_view file_name, std::string_view selector);

// Reads and parses a file: all of its modules.
std::vector<Module> ParseModuleFile(const std::filesystem::path& path);

}  // namespace systole::hlo
