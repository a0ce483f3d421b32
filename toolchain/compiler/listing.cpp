#include "toolchain/compiler/listing.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "toolchain/asm/disassembler.hpp"
#include "toolchain/hlo/ir.hpp"

namespace systole::compiler {
namespace {

// One comment line per step, in execution order, the steps of a loop's or conditional's
// computations indented under it; `mark` flags one device step.
std::string Placement(const CompiledModel& model, const std::filesystem::path& listing, std::size_t mark) {
  std::string out;
  std::size_t device = 0;
  for (const PlacementRow& row : model.PlacementRows()) {
    const std::string indent(2 * row.depth, ' ');
    if (row.step == nullptr) {
      out += fmt::format(";   {}{} {}:\n", std::string(2 * row.depth - 1, ' '), row.region->role, row.region->computation);
      continue;
    }
    const Step& step = *row.step;
    if (step.kind == Step::Kind::kDevice) {
      const DeviceStep& d = *step.device;
      out += fmt::format(";{}  {}device  {}  {}  [{}]  ~{} cycles  ({})\n", device == mark ? ">" : " ", indent,
                         d.covers.back(), d.kernel, fmt::join(d.covers, " "), d.estimate.cycles,
                         StepListingPath(listing, device).filename().string());
      ++device;
      continue;
    }
    const hlo::Instruction* i = row.computation->Find(step.instruction);
    const std::string_view opcode = i ? hlo::OpcodeName(i->opcode) : "?";
    const std::string note = step.kind == Step::Kind::kHost ? HostStepNote(step) : i ? ControlStepNote(step, *i) : "";
    out += fmt::format(";   {}{:<7} {}  {} ({})\n", indent, step.kind == Step::Kind::kHost ? "host" : "control",
                       step.instruction, opcode, note);
  }
  return out;
}

}  // namespace

std::filesystem::path StepListingPath(const std::filesystem::path& listing, std::size_t n) {
  std::filesystem::path path = listing;
  const std::string extension = listing.has_extension() ? listing.extension().string() : std::string(".s");
  path.replace_extension(fmt::format(".{}{}", n, extension));
  return path;
}

std::vector<ListingFile> ListingFiles(const CompiledModel& model, const std::filesystem::path& listing) {
  const std::size_t devices = model.DeviceStepCount();
  std::size_t steps = 0;  // a loop's body and a conditional's branches included, each once
  model.ForEachStep([&](const Step&, const hlo::Computation&, std::size_t) { ++steps; });
  std::vector<ListingFile> files;
  files.push_back({listing, fmt::format("; {} compiled for '{}': {} step(s), {} on the device, one assembly file "
                                        "per device step (systole asm reassembles each to the model's steps/N.sbin)\n"
                                        "; placement, in execution order:\n{}",
                                        model.source_name, model.config, steps, devices,
                                        Placement(model, listing, devices))});
  std::size_t n = 0;
  for (const DeviceStep* step : model.DeviceSteps()) {
    const DeviceStep& d = *step;
    std::string text = fmt::format(
        "; {} compiled for '{}': device step {} (steps/{}.sbin; {} device steps, numbered from 0): {}\n"
        "; covers {}; estimate {} cycles, "
        "MXU busy {}, {} MACs\n; placement of the model, in execution order ('>' marks this step):\n{}\n",
        model.source_name, model.config, n, n, devices, d.kernel, fmt::join(d.covers, ", "), d.estimate.cycles,
        d.estimate.mxu_busy, d.estimate.macs, Placement(model, listing, n));
    text += assembly::Disassemble(d.program);
    files.push_back({StepListingPath(listing, n), std::move(text)});
    ++n;
  }
  return files;
}

}  // namespace systole::compiler
