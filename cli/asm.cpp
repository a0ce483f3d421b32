// systole asm: assembly text -> program bundle (.sbin).
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "toolchain/asm/assembler.hpp"
#include "toolchain/asm/bundle.hpp"

namespace systole::cli {
namespace {

struct AsmOptions {
  std::string source;
  std::string output;  // default: the source with .sbin
};

void RunAsm(const AsmOptions& options) {
  const image::Program program = assembly::AssembleFile(options.source);
  std::filesystem::path output = options.output;
  if (output.empty()) output = std::filesystem::path(options.source).replace_extension(".sbin");
  assembly::WriteBundle(program, output);
  std::uint64_t data_bytes = 0;
  for (const auto& segment : program.data) data_bytes += segment.bytes.size();
  fmt::print("wrote {}: {} instructions, {} data segment(s) ({} bytes), {} input(s), {} output(s)\n",
             output.string(), program.words.size(), program.data.size(), data_bytes,
             program.inputs.size(), program.outputs.size());
}

}  // namespace

void AddAsmCommand(CLI::App& app) {
  auto options = std::make_shared<AsmOptions>();
  CLI::App* cmd = app.add_subcommand("asm", "Assemble a program into a bundle (.sbin)");
  cmd->add_option("source", options->source, "Assembly file (docs/ISA.md, 'Assembly language')")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", options->output, "Bundle to write (default: SOURCE.sbin)");
  cmd->callback([options] { RunAsm(*options); });
}

}  // namespace systole::cli
