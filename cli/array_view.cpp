// systole array-view: an rtl run's waveform (systole run --device rtl --fst RUN.fst) -> one
// self-contained HTML page stepping through the systolic array cycle by cycle
// (sim/rtl/array_waveform.hpp reads it, sim/trace/array_view.hpp draws it; docs/TRACE.md).
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/commands.hpp"
#include "sim/rtl/array_waveform.hpp"
#include "sim/trace/array_view.hpp"

namespace systole::cli {
namespace {

struct ArrayViewOptions {
  std::string waveform;
  std::string output;
  std::uint64_t first = 0;
  std::uint64_t cycles = 4096;
};

void RunArrayView(const ArrayViewOptions& options) {
  const trace::ArrayFrames frames = rtl::ReadArrayWaveform(options.waveform, options.first, options.cycles);
  // Written beside the target and renamed, so a failed write leaves no half page behind.
  const std::filesystem::path target(options.output);
  const std::filesystem::path partial = target.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << trace::ArrayViewHtml(frames);
    if (!out.flush()) throw std::runtime_error(fmt::format("{}: cannot write", options.output));
  }
  std::filesystem::rename(partial, target);
  fmt::print("{}: {}x{} array, {} cycles (from cycle {})\n", options.output, frames.rows, frames.cols,
             frames.cycles.size(), options.first);
}

}  // namespace

void AddArrayViewCommand(CLI::App& app) {
  auto options = std::make_shared<ArrayViewOptions>();
  CLI::App* cmd = app.add_subcommand(
      "array-view", "Turn an rtl run's waveform (systole run --device rtl --fst RUN.fst) into an HTML page that "
                    "steps through the systolic array cycle by cycle: inputs entering skewed, weights held and "
                    "double-buffered, partial sums flowing down");
  cmd->add_option("waveform", options->waveform, "FST waveform of an rtl run")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", options->output, "The HTML page to write")->required();
  cmd->add_option("--first", options->first, "First cycle shown (counted from the waveform's first)");
  cmd->add_option("--cycles", options->cycles, "Most cycles shown")->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20));
  cmd->callback([options] { RunArrayView(*options); });
}

}  // namespace systole::cli
