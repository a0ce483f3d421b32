// systole compile: HLO text -> a compiled model (.sbin), with the placement of every
// instruction printed and, on request, the assembly listing of the device steps.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/run_model.hpp"  // ReadHloText
#include "toolchain/compiler/listing.hpp"
#include "toolchain/compiler/model_file.hpp"
#include "toolchain/hlo/ir.hpp"

namespace systole::cli {
namespace {

struct CompileOptions {
  std::string input;
  std::string config = std::string(kDefaultConfig);
  std::string output;
  std::string listing;
  bool no_fuse = false;
  bool device_state = false;
  bool json = false;
  bool quiet = false;
  std::string module;  // HLO files of several modules: which one (NAME or INDEX)
};

// Cycles the step would take if every MAC streamed through a full array: MACS / (R x C).
std::uint64_t IdealCycles(const compiler::StepEstimate& e, const Config& config) {
  const std::uint64_t cells = std::uint64_t{config.rows} * config.cols;
  return (e.macs + cells - 1) / cells;
}

// Where the golden model's timing spent a step's cycles, per unit: instructions and the stall
// cycles charged to them (docs/MODEL.md "Timing model"; docs/CODEGEN.md "The schedule").
nlohmann::ordered_json UnitStallsJson(const compiler::StepEstimate& e) {
  nlohmann::ordered_json units = nlohmann::ordered_json::object();
  for (unsigned u = 0; u < isa::kNumUnits; ++u) {
    const codegen::CycleEstimate::UnitStalls& s = e.units[u];
    units[std::string(isa::UnitName(static_cast<isa::Unit>(u)))] = {
        {"instructions", s.instructions}, {"stall_dispatch", s.dispatch}, {"stall_token", s.token},
        {"stall_memory", s.memory}, {"stall_wfifo", s.wfifo}};
  }
  return units;
}

// "  @ mlp.py:12:8 (mlp)" when the HLO names the Python line (JAX's metadata), else "".
std::string SourceSuffix(const hlo::Module& module, const hlo::Computation& computation,
                         const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const hlo::Instruction* i = computation.Find(name);
    if (i == nullptr) continue;
    if (std::string source = module.SourceOf(*i); !source.empty()) return "  @ " + source;
  }
  return "";
}

void PrintPlacement(const compiler::CompiledModel& model, const Config& config) {
  const hlo::Computation& entry = *model.module->entry;
  for (const hlo::Instruction* parameter : entry.Parameters()) {
    fmt::print("  input   {:<28} {}\n", parameter->name, parameter->shape.ToString());
  }
  // The steps of a loop's body or a conditional's branch are indented under it, below the name
  // of their computation.
  for (const compiler::PlacementRow& row : model.PlacementRows()) {
    const std::string indent(2 * row.depth, ' ');
    if (row.step == nullptr) {
      fmt::print("  {}{} {}:\n", std::string(2 * row.depth - 1, ' '), row.region->role, row.region->computation);
      continue;
    }
    const compiler::Step& step = *row.step;
    if (step.kind == compiler::Step::Kind::kDevice) {
      const compiler::DeviceStep& d = *step.device;
      const std::uint64_t ideal = IdealCycles(d.estimate, config);
      fmt::print("  {}device  {:<28} {}  [{}]  ~{} cycles, ideal {} ({:.1f}% useful){}\n", indent, d.covers.back(),
                 d.kernel, fmt::join(d.covers, " "), d.estimate.cycles, ideal,
                 d.estimate.cycles ? 100.0 * double(ideal) / double(d.estimate.cycles) : 0.0,
                 SourceSuffix(*model.module, *row.computation, d.covers));
      continue;
    }
    const hlo::Instruction* i = row.computation->Find(step.instruction);
    const bool host = step.kind == compiler::Step::Kind::kHost;
    fmt::print("  {}{:<7} {:<28} {} ({}){}\n", indent, host ? "host" : "control", step.instruction,
               hlo::OpcodeName(i->opcode), host ? compiler::HostStepNote(step) : compiler::ControlStepNote(step, *i),
               SourceSuffix(*model.module, *row.computation, {step.instruction}));
  }
}

std::size_t ControlSteps(const compiler::CompiledModel& model) {
  std::size_t n = 0;
  model.ForEachStep([&](const compiler::Step& step, const hlo::Computation&, std::size_t) {
    n += step.kind == compiler::Step::Kind::kControl ? 1 : 0;
  });
  return n;
}

void Compile(const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Config config = LoadConfigNameOrFile(options.config);
  const std::string source = std::filesystem::path(options.input).filename().string();
  const std::string text = ReadHloText(options.input, source, options.module);
  compiler::CompileOptions compile_options;
  compile_options.fuse = !options.no_fuse;
  compile_options.device_state = options.device_state;
  const bool terminal = isatty(STDERR_FILENO) != 0;
  if (!options.quiet) {
    // Rewritten in place on a terminal, one line per step otherwise.
    compile_options.progress = [terminal](const std::string& message) {
      if (terminal) {
        fmt::print(stderr, "\r\033[K{}", message);
      } else {
        fmt::print(stderr, "{}\n", message);
      }
    };
  }
  const compiler::CompiledModel model = compiler::Compile(text, source, config, compile_options);
  if (!options.quiet && terminal) fmt::print(stderr, "\r\033[K");
  if (!options.output.empty()) compiler::SaveModel(model, options.output);
  std::vector<compiler::ListingFile> listings;
  if (!options.listing.empty()) {
    listings = compiler::ListingFiles(model, options.listing);
    for (const compiler::ListingFile& file : listings) {
      std::ofstream out(file.path);
      out << file.text;
      if (!out) throw std::runtime_error(fmt::format("cannot write {}", file.path.string()));
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const compiler::StepEstimate total = model.TotalEstimate();
  std::map<std::string, std::size_t> host_ops, compute_ops;
  nlohmann::ordered_json host_list = nlohmann::ordered_json::array();
  std::size_t host_steps = 0;
  model.ForEachStep([&](const compiler::Step& step, const hlo::Computation& computation, std::size_t) {
    if (step.kind != compiler::Step::Kind::kHost) return;
    ++host_steps;
    const hlo::Instruction& i = *computation.Find(step.instruction);
    const std::string opcode(hlo::OpcodeName(i.opcode));
    ++host_ops[opcode];
    if (step.work == compiler::HostWork::kCompute) ++compute_ops[opcode];
    host_list.push_back({{"instruction", step.instruction}, {"opcode", opcode}, {"shape", i.shape.ToString()},
                         {"work", compiler::HostWorkName(step.work)}, {"reason", step.reason}});
  });
  using compiler::HostWork;
  const std::size_t host_compute = model.HostStepCount(HostWork::kCompute);
  const std::size_t host_parameters = model.HostStepCount(HostWork::kParameters);
  const std::size_t host_movement = model.HostStepCount(HostWork::kDataMovement);
  const std::size_t host_values = model.HostStepCount(HostWork::kValue);
  const double utilization = total.cycles ? double(total.mxu_busy) / double(total.cycles) : 0.0;
  if (options.json) {
    nlohmann::ordered_json json = {{"model", options.input}, {"config", config.name}, {"output", options.output},
                                   {"steps", model.DeviceStepCount() + host_steps},
                                   {"device_steps", model.DeviceStepCount()}, {"host_steps", host_steps},
                                   {"control_steps", ControlSteps(model)},
                                   {"host_compute_steps", host_compute},
                                   {"host_parameter_steps", host_parameters},
                                   {"host_data_movement_steps", host_movement},
                                   {"host_value_steps", host_values},
                                   {"host_ops", host_ops}, {"host_compute_ops", compute_ops},
                                   {"estimated_cycles", total.cycles},
                                   {"device_tensor_bytes", model.DeviceTensorBytes()},
                                   {"estimated_mxu_busy", total.mxu_busy}, {"macs", total.macs},
                                   {"estimated_mxu_utilization", utilization}, {"compile_seconds", seconds}};
    // Per device step: where the cycles go (the static estimate equals ref's count).
    nlohmann::ordered_json per_step = nlohmann::ordered_json::array();
    for (const compiler::DeviceStep* step : model.DeviceSteps()) {
      const compiler::StepEstimate& e = step->estimate;
      const std::uint64_t ideal = IdealCycles(e, config);
      per_step.push_back({{"result", step->covers.back()}, {"kernel", step->kernel},
                          {"cycles", e.cycles}, {"mxu_busy", e.mxu_busy}, {"macs", e.macs},
                          {"ideal_cycles", ideal},
                          {"mxu_utilization", e.cycles ? double(ideal) / double(e.cycles) : 0.0},
                          {"units", UnitStallsJson(e)}});
    }
    json["device_step_estimates"] = per_step;
    json["host_step_list"] = host_list;
    fmt::print("{}\n", json.dump(2));
    return;
  }
  fmt::print("{} for '{}' ({}x{} {}): placement, in execution order\n", source, config.name, config.rows, config.cols,
             DTypeName(config.dtype));
  PrintPlacement(model, config);
  fmt::print("\n{} device step(s), {} host step(s) ({}), compiled in {:.2f} s\n", model.DeviceStepCount(), host_steps,
             fmt::join(host_ops, ", "), seconds);
  if (const std::size_t loops = ControlSteps(model); loops > 0) {
    fmt::print("{} loop(s) or conditional(s) with device work: their steps are counted once, and so in the estimate "
               "below, whatever the number of iterations (not known at compile time)\n",
               loops);
  }
  fmt::print("host steps: {} compute ({}), {} parameter arithmetic, {} data movement, {} values\n", host_compute,
             fmt::join(compute_ops, ", "), host_parameters, host_movement, host_values);
  fmt::print("static estimate: {} cycles, MXU busy {} ({:.1f}%), {} MACs; device tensors {} bytes\n", total.cycles,
             total.mxu_busy, 100.0 * utilization, total.macs, model.DeviceTensorBytes());
  if (!options.output.empty()) fmt::print("wrote {}\n", options.output);
  if (!listings.empty()) {
    fmt::print("wrote {} (placement) and {} device step listing(s) {}", options.listing, listings.size() - 1,
               listings.size() > 1 ? listings[1].path.filename().string() : std::string());
    fmt::print("{}\n", listings.size() > 2 ? " … " + listings.back().path.filename().string() : std::string());
  }
}

}  // namespace

void AddCompileCommand(CLI::App& app) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile XLA HLO text to a Systole model (.sbin)");
  cmd->add_option("model", options->input, "HLO text (.hlo)")->required()->check(CLI::ExistingFile);
  cmd->add_option("-c,--config", options->config, "Target configuration")->capture_default_str();
  cmd->add_option("--module", options->module,
                  "HLO files of several modules ('// -----' separated): which one, by name or index");
  cmd->add_option("-o,--output", options->output, "Write the compiled model here (.sbin)");
  cmd->add_option("--listing", options->listing, "Write the placement here (.s) and each device step's assembly to MODEL.N.s (reassembles to steps/N.sbin)");
  cmd->add_flag("--no-fuse", options->no_fuse, "Keep bias, batch norm and activations out of the drain");
  cmd->add_flag("--device-state", options->device_state, "A training step: place the optimizer updates the "
                "compiler recognises on the device, state in device memory, as `systole train` does (listing only: "
                "such a model is not saved with -o)");
  cmd->add_flag("--json", options->json, "Print a JSON summary instead of the placement");
  cmd->add_flag("-q,--quiet", options->quiet, "No progress on stderr");
  cmd->callback([options] { Compile(*options); });
}

}  // namespace systole::cli
