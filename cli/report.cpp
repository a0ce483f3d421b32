// systole report: a timeline of `systole run --trace` -> one self-contained HTML page
// (sim/trace/report.hpp).
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "sim/trace/report.hpp"

namespace systole::cli {
namespace {

struct ReportOptions {
  std::string trace;
  std::string output;
};

void RunReport(const ReportOptions& options) {
  std::ifstream in(options.trace, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read", options.trace));
  std::stringstream text;
  text << in.rdbuf();
  std::string html;
  try {
    html = trace::HtmlReport(text.str(), std::filesystem::path(options.trace).filename().string());
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(fmt::format("{}: {}", options.trace, error.what()));
  }
  // Written beside the target and renamed, so a failed write leaves no half page behind.
  const std::filesystem::path target(options.output);
  const std::filesystem::path partial = target.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << html;
    if (!out.flush()) throw std::runtime_error(fmt::format("{}: cannot write", options.output));
  }
  std::filesystem::rename(partial, target);
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Turn a timeline (systole run --trace) into one self-contained HTML page: utilization per "
                "launch, stalls by unit and cause, a timeline overview");
  cmd->add_option("trace", options->trace, "Timeline written by systole run --trace")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", options->output, "The HTML page to write")->required();
  cmd->callback([options] { RunReport(*options); });
}

}  // namespace systole::cli
