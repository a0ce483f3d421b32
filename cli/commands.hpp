// The `systole` command line: one program, one subcommand per file.
#pragma once

#include <CLI/CLI.hpp>

namespace systole::cli {

void AddInfoCommand(CLI::App& app);    // info.cpp: a configuration or a device's identity
void AddAsmCommand(CLI::App& app);     // asm.cpp: assembly -> program bundle
void AddDisasmCommand(CLI::App& app);  // disasm.cpp: bundle or raw words -> assembly
void AddRunCommand(CLI::App& app);     // run.cpp: run a program on a device
void AddServeCommand(CLI::App& app);   // serve.cpp: host a device for network clients
void AddGenCommand(CLI::App& app);     // gen.cpp: regenerate files derived from the definitions
void AddHloCommand(CLI::App& app);     // hlo.cpp: check HLO text, run it on the reference interpreter
void AddCompileCommand(CLI::App& app); // compile.cpp: HLO text -> compiled model (.sbin)
void AddReportCommand(CLI::App& app);  // report.cpp: a timeline (run --trace) -> an HTML page

}  // namespace systole::cli
