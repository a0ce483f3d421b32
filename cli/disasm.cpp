// systole disasm: a bundle (or raw instruction words) -> canonical assembly that reassembles
// to identical bytes.
#include <fmt/core.h>

#include <fstream>
#include <iterator>

#include "cli/commands.hpp"
#include "toolchain/asm/bundle.hpp"
#include "toolchain/asm/disassembler.hpp"

namespace systole::cli {
namespace {

struct DisasmOptions {
  std::string input;
  std::string output;  // empty: stdout
  std::string config;  // element type for scale/lo/hi; default: the program's .config
  bool raw = false;
  bool addresses = false;
};

void RunDisasm(const DisasmOptions& options) {
  assembly::DisassemblyOptions disasm;
  disasm.show_addresses = options.addresses;
  if (!options.config.empty()) disasm.element_type = LoadConfigNameOrFile(options.config).dtype;
  std::string text;
  if (options.raw) {
    std::ifstream in(options.input, std::ios::binary);
    const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    if (bytes.size() % isa::kInstructionBytes != 0) {
      throw std::runtime_error(fmt::format("{}: {} bytes is not a whole number of {}-byte words",
                                           options.input, bytes.size(), isa::kInstructionBytes));
    }
    std::vector<isa::Word> words(bytes.size() / isa::kInstructionBytes);
    for (std::size_t i = 0; i < words.size(); ++i) {
      std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(i * isa::kInstructionBytes),
                  isa::kInstructionBytes, words[i].begin());
    }
    text = assembly::Disassemble(words, disasm);
  } else {
    text = assembly::Disassemble(assembly::LoadProgram(options.input), disasm);
  }
  if (options.output.empty()) {
    fmt::print("{}", text);
    return;
  }
  std::ofstream out(options.output, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write", options.output));
}

}  // namespace

void AddDisasmCommand(CLI::App& app) {
  auto options = std::make_shared<DisasmOptions>();
  CLI::App* cmd = app.add_subcommand("disasm", "Disassemble a bundle (or raw words) to assembly");
  cmd->add_option("input", options->input, "Bundle (.sbin), assembly, or raw words with --raw")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", options->output, "Write here instead of standard output");
  cmd->add_option("-c,--config", options->config,
                  "Configuration whose element type prints scale/lo/hi (default: the program's)");
  cmd->add_flag("--raw", options->raw, "The input is bare 32-byte instruction words");
  cmd->add_flag("--addresses", options->addresses, "Show each instruction's device address");
  cmd->callback([options] { RunDisasm(*options); });
}

}  // namespace systole::cli
