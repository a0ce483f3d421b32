// systole gen: writes the files derived from the ISA table and the register map, or (--check)
// fails listing the ones that are stale. The test suite runs the check.
#include <fmt/core.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "arch/gen/generate.hpp"
#include "cli/commands.hpp"

namespace systole::cli {
namespace {

struct GenOptions {
  std::string root = ".";
  bool check = false;
};

std::string ReadIfExists(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  return text.str();
}

void RunGen(const GenOptions& options) {
  const std::filesystem::path root(options.root);
  std::vector<std::string> stale;
  for (const gen::Output& output : gen::AllOutputs(root)) {
    const std::filesystem::path path = root / output.path;
    if (ReadIfExists(path) == output.content) continue;
    if (options.check) {
      stale.push_back(output.path.string());
      continue;
    }
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << output.content;
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write", path.string()));
    fmt::print("wrote {}\n", output.path.string());
  }
  if (!stale.empty()) {
    std::string list;
    for (const auto& path : stale) list += "\n  " + path;
    throw std::runtime_error(
        fmt::format("generated files are stale (run `make generate`):{}", list));
  }
}

}  // namespace

void AddGenCommand(CLI::App& app) {
  auto options = std::make_shared<GenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gen", "Regenerate the RTL headers and doc tables derived from the ISA and register map");
  cmd->add_option("--root", options->root, "Source tree root")->capture_default_str();
  cmd->add_flag("--check", options->check, "Only check; fail if a file is stale");
  cmd->callback([options] { RunGen(*options); });
}

}  // namespace systole::cli
