// systole — the one command-line program: inspect configurations, assemble, disassemble, run.
#include <fmt/core.h>

#include <exception>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Systole: an open TPU — configurations, assembler, models and devices"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "systole 0.1.0");
  systole::cli::AddInfoCommand(app);
  systole::cli::AddAsmCommand(app);
  systole::cli::AddDisasmCommand(app);
  systole::cli::AddRunCommand(app);
  systole::cli::AddServeCommand(app);
  systole::cli::AddGenCommand(app);
  systole::cli::AddHloCommand(app);
  systole::cli::AddCompileCommand(app);
  systole::cli::AddReportCommand(app);
  systole::cli::AddTrainCommand(app);
#ifdef SYSTOLE_CLI_SIM_BOARD
  systole::cli::AddSimBoardCommand(app);
#endif
#ifdef SYSTOLE_CLI_ARRAY_VIEW
  systole::cli::AddArrayViewCommand(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    fmt::print(stderr, "systole: error: {}\n", error.what());
    return 1;
  }
  return 0;
}
