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
void AddTrainCommand(CLI::App& app);   // train.cpp: a training step run epoch after epoch
void AddSimBoardCommand(CLI::App& app);  // sim_board.cpp: the serial board simulated on a pty
                                         // (builds with the Verilated RTL only)
void AddArrayViewCommand(CLI::App& app);  // array_view.cpp: an rtl waveform -> the array, cycle
                                          // by cycle, as an HTML page (Verilated RTL only)

// Checks a --device URI: a token in it (tcp://…?token=…) would show in `ps`, in shell history
// and in logs, so the command line refuses it and names the alternatives (SYSTOLE_TOKEN,
// SYSTOLE_TOKEN_FILE) without echoing the value.
inline CLI::Validator NoTokenInUri() {
  return CLI::Validator(
      [](std::string& uri) -> std::string {
        const auto query = uri.find('?');
        if (!uri.starts_with("tcp://") || query == std::string::npos) return "";
        if (uri.find("token=", query) == std::string::npos) return "";
        return "a token on the command line shows in ps and shell history: put it in "
               "SYSTOLE_TOKEN, or in a file named by SYSTOLE_TOKEN_FILE";
      },
      "URI");
}

}  // namespace systole::cli
