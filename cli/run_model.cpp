// systole run MODEL.hlo | MODEL.sbin (a compiled model): compile if needed, run the device
// steps on a device and the host steps on the interpreter, write the outputs as .npz.
#include "cli/run_model.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/run_files.hpp"
#include "cli/tensor_text.hpp"
#include "runtime/execute.hpp"
#include "runtime/parallel_steps.hpp"
#include "sim/trace/timeline.hpp"
#include "toolchain/compiler/model_file.hpp"
#include "toolchain/hlo/io.hpp"
#include "toolchain/hlo/parser.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::cli {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Progress on stderr: rewritten in place on a terminal, one line each otherwise.
std::function<void(const std::string&)> Progress(bool quiet) {
  if (quiet) return {};
  if (isatty(STDERR_FILENO)) return [](const std::string& m) { fmt::print(stderr, "\r\033[K{}", m); };
  return [](const std::string& m) { fmt::print(stderr, "{}\n", m); };
}

}  // namespace

bool IsHloFile(const std::filesystem::path& path) {
  if (path.extension() == ".hlo") return true;
  std::ifstream in(path);
  std::string first;
  in >> first;
  return first == "HloModule";
}

bool IsModelPath(const std::filesystem::path& path) { return compiler::IsModelFile(path); }

std::string ReadHloText(const std::filesystem::path& path, const std::string& source, const std::string& module) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  return module.empty() ? text.str() : hlo::SelectModuleText(text.str(), source, module);
}

void RunModel(const ModelRunOptions& options) {
  const auto start = Clock::now();
  const auto progress = Progress(options.quiet);
  compiler::CompiledModel model;
  double compile_seconds = 0;
  if (IsHloFile(options.model)) {
    const std::string source = std::filesystem::path(options.model).filename().string();
    const std::string text = ReadHloText(options.model, source, options.module);
    compiler::CompileOptions compile_options;
    compile_options.progress = progress;
    compile_options.device_state = options.device_state;
    const std::string config = options.config.empty() ? std::string(kDefaultConfig) : options.config;
    model = compiler::Compile(text, source, LoadConfigNameOrFile(config), compile_options);
    compile_seconds = Since(start);
  } else {
    if (!options.module.empty()) throw std::runtime_error("--module is for HLO files, not compiled models");
    if (options.device_state) throw std::runtime_error("--device-state is for HLO files (a compiled model keeps no state)");
    model = compiler::LoadModel(options.model);
  }
  // Only --config may name a file; the model's configuration is a name (LoadConfig).
  const Config config = options.config.empty() ? LoadConfig(model.config) : LoadConfigNameOrFile(options.config);
  if (config.name != model.config) {
    throw std::runtime_error(fmt::format("{} is compiled for configuration '{}' but --config is '{}'", options.model,
                                         model.config, config.name));
  }

  std::vector<hlo::Literal> inputs;
  if (!options.inputs.empty()) {
    inputs = ReadModelInputs(*model.module, options.inputs, options.lossy_inputs);
  } else if (options.random_seed) {
    inputs = hlo::RandomInputs(*model.module, *options.random_seed);
  } else if (options.network_seed) {
    inputs = runtime::NetworkInputs(*model.module, *options.network_seed);
  } else if (!model.module->entry->Parameters().empty()) {
    throw std::runtime_error(fmt::format("{} takes {} input(s): pass --inputs FILE.npz or --random-inputs SEED",
                                         options.model, model.module->entry->Parameters().size()));
  }

  trace::Timeline timeline(config, options.device);  // outlives the device that may point at it
  const auto run_start = Clock::now();
  runtime::RunResult run;
  if (options.jobs > 1) {
    if (!options.wave.empty()) throw std::runtime_error("--wave records one device: it cannot be used with --jobs");
    runtime::ParallelOptions parallel;
    parallel.uri = options.device;
    parallel.jobs = options.jobs;
    parallel.timeline = options.trace.empty() ? nullptr : &timeline;
    parallel.progress = progress;
    run = runtime::ExecuteParallel(model, config, inputs, parallel);
  } else {
    Device device = Device::Open(options.device, config);
    if (!options.trace.empty()) device.Record(&timeline);
    if (!options.wave.empty()) device.RecordWaveform(options.wave);
    run = runtime::Execute(model, device, inputs, progress);
    if (!options.wave.empty()) device.RecordWaveform({});
    if (!options.trace.empty()) device.Record(nullptr);
  }
  const double run_seconds = Since(run_start);
  if (!options.trace.empty()) timeline.WriteChromeTrace(options.trace);
  if (progress && isatty(STDERR_FILENO)) fmt::print(stderr, "\r\033[K");
  const std::vector<npy::Array> outputs = hlo::OutputArrays(run.result);
  if (!options.outputs.empty()) npy::WriteNpz(options.outputs, outputs);

  std::map<std::string, std::size_t> host_ops;  // computing ops only: data movement is not "fallback"
  model.ForEachStep([&](const compiler::Step& step, const hlo::Computation& computation, std::size_t) {
    if (step.kind == compiler::Step::Kind::kHost && step.work == compiler::HostWork::kCompute) {
      ++host_ops[std::string(hlo::OpcodeName(computation.Find(step.instruction)->opcode))];
    }
  });
  const runtime::RunStats& s = run.stats;
  const double peak = double(config.PeakMacsPerCycle());
  const double utilization = s.cycles ? double(s.macs) / (double(s.cycles) * peak) : 0.0;
  const double busy = s.cycles ? double(s.mxu_busy) / double(s.cycles) : 0.0;
  if (options.json) {
    nlohmann::ordered_json json = {
        {"model", options.model}, {"device", options.device}, {"config", config.name},
        {"cycles", s.cycles}, {"mxu_busy", s.mxu_busy}, {"macs", s.macs},
        {"mxu_utilization", utilization}, {"mxu_busy_fraction", busy},
        {"jobs", options.jobs}, {"device_steps", s.device_steps}, {"host_steps", s.host_steps}, {"host_fallback_ops", host_ops},
        {"compile_seconds", compile_seconds}, {"run_seconds", run_seconds},
        {"host_seconds", s.host_seconds}, {"device_seconds", s.device_seconds}, {"wall_seconds", Since(start)}};
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const npy::Array& a : outputs) out.push_back({{"shape", a.shape}, {"dtype", npy::ElementTypeName(a.type)}});
    json["outputs"] = out;
    fmt::print("{}\n", json.dump(2));
    return;
  }
  fmt::print("{} on {} ({}: {}x{} {}): {} device step(s), {} host step(s)\n", options.model, options.device,
             config.name, config.rows, config.cols, DTypeName(config.dtype), s.device_steps, s.host_steps);
  for (std::size_t i = 0; i < outputs.size() && i < 4; ++i) {
    fmt::print("\noutput arr_{} ({}):\n{}", i, fmt::join(outputs[i].shape, "x"),
               FormatTensor(outputs[i].values, outputs[i].shape));
  }
  if (outputs.size() > 4) fmt::print("\n… and {} more output arrays (--outputs FILE.npz)\n", outputs.size() - 4);
  fmt::print("\ndevice cycles        {:>14}\n", s.cycles);
  fmt::print("MXU utilization      {:>13.1f}%  (MACS / (CYCLES x {} x {}); MXU busy {:.1f}%)\n", 100.0 * utilization,
             config.rows, config.cols, 100.0 * busy);
  fmt::print("host fallback ops    {}\n", host_ops.empty() ? "none" : fmt::format("{}", fmt::join(host_ops, ", ")));
  fmt::print("wall time            {:>13.3f}s  (compile {:.3f}s, device {:.3f}s, host {:.3f}s)\n", Since(start),
             compile_seconds, s.device_seconds, s.host_seconds);
}

}  // namespace systole::cli
