// Files derived from the ISA table and the register map: the RTL's header files and the
// generated tables inside docs/ISA.md and docs/REGISTERS.md. `systole gen` writes them and
// `systole gen --check` (run by the test suite) fails when a checked-in copy is stale, so the
// RTL, the docs and the C++ cannot drift apart.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "arch/config/config.hpp"

namespace systole::gen {

std::string RtlIsaHeader();        // rtl/generated/systole_isa.svh
std::string RtlRegsHeader();       // rtl/generated/systole_regs.svh
std::string DocsOpcodeTables();    // docs/ISA.md, section "opcodes"
std::string DocsErrorTable();      // docs/ISA.md, section "errors"
std::string DocsRegisterTables();  // docs/REGISTERS.md, section "registers"
// rtl/generated/params/NAME.vc: the configuration as top-level RTL parameters, one
// `-GNAME=VALUE` per line (a Verilator command file; CMake turns it into Yosys `chparam` and
// Icarus `-P` arguments). Every RTL top takes the subset it declares.
// `source` names the file the configuration came from (default: configs/NAME.toml).
std::string RtlParams(const Config& config, std::string_view source = {});

// hls/generated/configs.hpp: every configuration's sizes as constants for the HLS kernels
// (hls/README.md), one namespace systole::hls::configs::NAME each ('-' becomes '_').
std::string HlsConfigsHeader(const std::vector<Config>& configs);

// Replaces the text between "<!-- BEGIN GENERATED: NAME" and "<!-- END GENERATED: NAME -->"
// lines. Throws std::runtime_error if the markers are missing.
std::string ReplaceSection(std::string_view document, std::string_view name,
                           std::string_view content);

// One derived file: where it lives under the source root and what it should contain.
struct Output {
  std::filesystem::path path;  // relative to the source root
  std::string content;         // the whole file as it should be
};
// Every derived file, computed from the current definitions and (for docs, whose hand-written
// parts are kept) the current contents under `root`.
std::vector<Output> AllOutputs(const std::filesystem::path& root);
// rtl/generated/params/tests/NAME.vc: the parameters of RTL block tests that no shipped
// configuration provides, so that no test's CMake file writes a parameter list by hand. Read
// from tests/rtl: every tests/rtl/**/params.toml table `[NAME]` (a `description` and integer
// parameters) and every other tests/rtl/**/*.toml, a test-only configuration in the format of
// configs/ (its name is NAME).
std::vector<Output> RtlTestParams(const std::filesystem::path& root);

}  // namespace systole::gen
