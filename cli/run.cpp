// systole run: load a program (assembly or bundle) onto a device through the driver API
// (systole/device.hpp), supply its inputs, launch it, and report outputs and counters.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "arch/config/config.hpp"
#include "arch/numerics/bf16.hpp"
#include "arch/regs/regmap.hpp"
#include "cli/commands.hpp"
#include "cli/run_files.hpp"
#include "cli/run_model.hpp"
#include "cli/tensor_text.hpp"
#include "sim/trace/timeline.hpp"
#include "systole/device.hpp"
#include "toolchain/asm/bundle.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::cli {
namespace {

using image::DataType;
using image::Program;
using image::TensorDesc;

struct RunOptions {
  std::string program;
  std::string device = "rtl";  // the Verilated core in process: what the hardware does
  std::string config;  // empty: the program's .config, else the default
  std::string inputs;
  std::optional<unsigned> random_seed;
  std::optional<std::uint64_t> network_seed;  // models only: compiler::NetworkInputs
  std::string outputs;
  bool lossy_inputs = false;  // models only: cli/run_files.hpp
  bool json = false;
  bool quiet = false;
  unsigned timeout_ms = 60000;
  std::string trace;  // a Chrome trace-event timeline of the launch (ref, rtl)
  std::string wave;   // an FST waveform of the launch (rtl)
  std::string module;  // HLO files of several modules: which one (NAME or INDEX)
  unsigned jobs = 1;   // models: device steps side by side (--jobs)
  bool device_state = false;  // HLO training steps: the optimizer state in device memory (--device-state)
};

// Converts one value to the device's little-endian representation of `dtype`. Integers must
// be exact and in range; floats round to bf16 with the device's rounding (NUMERICS.md) but must
// not overflow to infinity — the rules hlo::InputConversion::kExact applies to models.
void AppendElement(DataType dtype, double value, std::vector<std::uint8_t>& out,
                   const std::string& what) {
  auto refuse = [&] {
    throw std::runtime_error(fmt::format("{} = {} is not a {} value", what, value, image::DataTypeName(dtype)));
  };
  auto require_integer = [&](double lo, double hi) {
    // NaN fails every comparison, so it is caught by the range test before any cast.
    if (!(value >= lo && value <= hi) || value != static_cast<double>(static_cast<std::int64_t>(value))) refuse();
  };
  auto require_finite_float = [&] {
    if (std::isfinite(value) && !std::isfinite(static_cast<float>(value))) refuse();
  };
  switch (dtype) {
    case DataType::kInt8:
      require_integer(-128, 127);
      out.push_back(static_cast<std::uint8_t>(static_cast<std::int8_t>(value)));
      return;
    case DataType::kInt32: {
      require_integer(-2147483648.0, 2147483647.0);
      const auto bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(value));
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
      return;
    }
    case DataType::kBf16: {
      require_finite_float();
      const std::uint16_t bits =
          numerics::F32ToBf16(std::bit_cast<std::uint32_t>(static_cast<float>(value)));
      out.push_back(static_cast<std::uint8_t>(bits));
      out.push_back(static_cast<std::uint8_t>(bits >> 8));
      return;
    }
    case DataType::kFp32: {
      require_finite_float();
      const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(value));
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
      return;
    }
  }
}

double ReadElement(DataType dtype, const std::uint8_t* p) {
  std::uint32_t word = 0;
  for (unsigned i = 0; i < image::DataTypeBytes(dtype); ++i) word |= std::uint32_t{p[i]} << (8 * i);
  switch (dtype) {
    case DataType::kInt8: return static_cast<std::int8_t>(word);
    case DataType::kInt32: return static_cast<std::int32_t>(word);
    case DataType::kBf16: return std::bit_cast<float>(word << 16);
    case DataType::kFp32: return std::bit_cast<float>(word);
  }
  return 0;
}

npy::ElementType NpyTypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8: return npy::ElementType::kInt8;
    case DataType::kInt32: return npy::ElementType::kInt32;
    case DataType::kBf16:  // NumPy has no bf16: written as float32, exactly
    case DataType::kFp32: return npy::ElementType::kFloat32;
  }
  return npy::ElementType::kFloat32;
}

// The arrays for the program's inputs: from an .npz, from a seeded generator, or none needed.
std::vector<npy::Array> InputArrays(const Program& program, const RunOptions& options) {
  std::vector<npy::Array> arrays;
  if (!options.inputs.empty()) {
    arrays = npy::ReadNpz(options.inputs);
    if (arrays.size() != program.inputs.size()) {
      throw std::runtime_error(fmt::format("{}: has {} arrays but the program takes {} inputs",
                                           options.inputs, arrays.size(), program.inputs.size()));
    }
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      const TensorDesc& input = program.inputs[i];
      if (arrays[i].shape != input.shape) {
        throw std::runtime_error(fmt::format("{}: arr_{} has shape ({}) but input '{}' is ({})",
                                             options.inputs, i, fmt::join(arrays[i].shape, ", "),
                                             input.name, fmt::join(input.shape, ", ")));
      }
    }
    return arrays;
  }
  if (options.random_seed) {
    std::mt19937 rng(*options.random_seed);
    for (const TensorDesc& input : program.inputs) {
      npy::Array array{NpyTypeOf(input.dtype), input.shape, {}};
      const bool integer = input.dtype == DataType::kInt8 || input.dtype == DataType::kInt32;
      for (std::uint64_t i = 0; i < array.Elements(); ++i) {
        array.values.push_back(integer ? static_cast<double>(static_cast<int>(rng() % 17) - 8)
                                       : std::uniform_real_distribution<double>(-1, 1)(rng));
      }
      arrays.push_back(std::move(array));
    }
    return arrays;
  }
  if (!program.inputs.empty()) {
    throw std::runtime_error(fmt::format(
        "the program takes {} input(s) ('{}', …): pass --inputs FILE.npz or --random-inputs SEED",
        program.inputs.size(), program.inputs.front().name));
  }
  return arrays;
}

void RunProgram(const RunOptions& options) {
  const Program program = assembly::LoadProgram(options.program);
  // Only --config may name a file; the program's .config is a name (LoadConfig).
  const Config config = options.config.empty() ? LoadConfig(program.config.value_or(std::string(kDefaultConfig)))
                                               : LoadConfigNameOrFile(options.config);
  if (program.config && *program.config != config.name) {
    throw std::runtime_error(fmt::format("{} is written for configuration '{}' but --config is '{}'",
                                         options.program, *program.config, config.name));
  }
  const auto wall_start = std::chrono::steady_clock::now();

  // Declared before the device so that it outlives it: an exception between Record(&timeline)
  // and Record(nullptr) leaves the device pointing at the timeline until the device closes.
  trace::Timeline timeline(config, options.device);
  Device device = Device::Open(options.device, config);
  const Config& reported = device.config();
  if (reported.rows != config.rows || reported.cols != config.cols ||
      reported.dtype != config.dtype) {
    throw std::runtime_error(fmt::format(
        "device {} is a {}x{} {} machine ('{}'), but the program needs '{}' ({}x{} {})",
        options.device, reported.rows, reported.cols, DTypeName(reported.dtype), reported.name,
        config.name, config.rows, config.cols, DTypeName(config.dtype)));
  }

  // Device memory image: data segments and instructions (Load), then the inputs.
  systole::Program loaded = device.Load(program);
  const std::vector<npy::Array> inputs = InputArrays(program, options);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorDesc& input = program.inputs[i];
    std::vector<std::uint8_t> bytes;
    bytes.reserve(input.Bytes());
    for (std::size_t k = 0; k < inputs[i].values.size(); ++k) {
      AppendElement(input.dtype, inputs[i].values[k], bytes,
                    fmt::format("input '{}' element {}", input.name, k));
    }
    loaded.WriteInput(i, bytes);
  }

  device.ClearCounters();
  if (!options.wave.empty()) device.RecordWaveform(options.wave);
  if (!options.trace.empty()) {
    device.Record(&timeline);
    timeline.NameNextLaunch(std::filesystem::path(options.program).filename().string());
  }
  systole::Run run = loaded.Launch();
  try {
    if (!run.Wait(std::chrono::milliseconds(options.timeout_ms))) {
      throw std::runtime_error(fmt::format("device {}: no interrupt within {} ms", options.device,
                                           options.timeout_ms));
    }
  } catch (const RunError& error) {
    const std::uint64_t fault_pc = error.fault_pc();
    const std::uint64_t index =
        fault_pc >= loaded.text_address()
            ? (fault_pc - loaded.text_address()) / isa::kInstructionBytes
            : 0;
    const std::string where = program.SourceOf(index);
    throw std::runtime_error(fmt::format(
        "device {} stopped with {} ({}) at pc 0x{:x} (instruction {}{})", options.device,
        regs::ErrorName(error.code()), regs::ErrorDescription(error.code()), fault_pc, index,
        where.empty() ? "" : ", " + where));
  }

  // Outputs and counters.
  std::vector<npy::Array> outputs;
  for (std::size_t i = 0; i < program.outputs.size(); ++i) {
    const TensorDesc& output = program.outputs[i];
    const std::vector<std::uint8_t> bytes = loaded.ReadOutput(i);
    npy::Array array{NpyTypeOf(output.dtype), output.shape, {}};
    for (std::uint64_t k = 0; k < output.Elements(); ++k) {
      array.values.push_back(ReadElement(output.dtype, &bytes[k * image::DataTypeBytes(output.dtype)]));
    }
    outputs.push_back(std::move(array));
  }
  if (!options.outputs.empty()) npy::WriteNpz(options.outputs, outputs);
  const double wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  if (!options.wave.empty()) device.RecordWaveform({});
  const Counters read = device.ReadCounters();
  if (!options.trace.empty()) {
    device.Record(nullptr);
    timeline.SetLaunchCounters(read.values);
    timeline.WriteChromeTrace(options.trace);
  }
  nlohmann::ordered_json counters;
  for (const auto& [name, value] : read.values) counters[name] = value;
  const double cycles = counters["CYCLES"].get<double>();
  const double utilization =
      cycles > 0 ? counters["MACS"].get<double>() / (cycles * static_cast<double>(config.PeakMacsPerCycle())) : 0.0;

  if (options.json) {
    nlohmann::ordered_json json = {
        {"program", options.program}, {"device", options.device}, {"config", config.name},
        {"instructions", program.words.size()}, {"cycles", counters["CYCLES"]},
        {"mxu_utilization", utilization}, {"wall_seconds", wall_seconds},
        {"counters", counters}};
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      out[program.outputs[i].name] = {{"dtype", image::DataTypeName(program.outputs[i].dtype)},
                                      {"shape", program.outputs[i].shape},
                                      {"values", outputs[i].values}};
    }
    json["outputs"] = out;
    fmt::print("{}\n", json.dump(2));
    return;
  }
  fmt::print("{} on {} ({}: {}x{} {}): {} instructions, {} data segment(s), {} input(s)\n",
             options.program, options.device, config.name, config.rows, config.cols,
             DTypeName(config.dtype), program.words.size(), program.data.size(),
             program.inputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const TensorDesc& output = program.outputs[i];
    fmt::print("\noutput {} ({}, {}):\n{}", output.name, image::DataTypeName(output.dtype),
               fmt::join(output.shape, "x"), FormatTensor(outputs[i].values, output.shape));
  }
  fmt::print("\ncounters ({}{}):\n", options.device,
             options.device == "ref" ? "; cycle counts are the model's estimate, docs/MODEL.md" : "");
  for (const auto& [name, value] : counters.items()) {
    fmt::print("  {:<22} {:>14}\n", name, value.get<std::uint64_t>());
  }
  fmt::print("  {:<22} {:>13.1f}%  (MACS / (CYCLES x {} x {}))\n", "MXU utilization",
             100.0 * utilization, config.rows, config.cols);
  fmt::print("  {:<22} {:>13.3f}s\n", "wall time", wall_seconds);
}

}  // namespace

void AddRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a program (.s, .sbin) or a model (.hlo, compiled .sbin) on a device");
  cmd->add_option("program", options->program,
                  "Assembly (.s), program bundle (.sbin), HLO text (.hlo) or compiled model (.sbin)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-d,--device", options->device, "Device URI (rtl: Verilated RTL in process, ref: golden model, systemc: the golden model in the SystemC/TLM platform, tcp://HOST:PORT, …)")->check(NoTokenInUri())->capture_default_str();
  cmd->add_option("-c,--config", options->config,
                  "Configuration (default: the program's .config, else small)");
  auto* inputs = cmd->add_option("--inputs", options->inputs,
                                 "Input arrays as .npz (arr_0, arr_1, … in .input order)")
                     ->check(CLI::ExistingFile);
  auto* random = cmd->add_option("--random-inputs", options->random_seed, "Fill the inputs randomly from SEED")
      ->excludes(inputs);
  cmd->add_option("--outputs", options->outputs, "Write the outputs to this .npz");
  cmd->add_flag("--json", options->json, "Print a JSON summary");
  cmd->add_option("--timeout-ms", options->timeout_ms, "Give up waiting after this long")
      ->capture_default_str();
  cmd->add_option("--network-inputs", options->network_seed,
                  "Models: random inputs scaled like a trained network's from SEED (weights by fan-in, "
                  "positive per-channel vectors; docs/COMPILER.md)")
      ->excludes(inputs)
      ->excludes(random);
  cmd->add_flag("--lossy-inputs", options->lossy_inputs,
                "Models: convert --inputs values the parameter type cannot hold (saturate integers, NaN to 0) "
                "instead of refusing them");
  cmd->add_flag("-q,--quiet", options->quiet, "Models: no progress on stderr");
  cmd->add_option("--module", options->module,
                  "HLO files of several modules ('// -----' separated): which one, by name or index");
  cmd->add_option("--trace", options->trace,
                  "Write a timeline of every launch (Chrome trace-event JSON: Perfetto, chrome://tracing; "
                  "ref and rtl; docs/TRACE.md)");
  cmd->add_option("-j,--jobs", options->jobs,
                  "Models: run the device steps on N devices side by side, each step from the golden model's "
                  "inputs and checked bit for bit against its output (rtl on N cores; docs/MODEL.md)")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_flag("--device-state", options->device_state,
                "HLO training steps: compile with the optimizer updates on the device and run with the state in "
                "device memory, written before the run and read back after (as `systole train`; docs/TRAINING.md)");
  cmd->add_option("--fst,--wave", options->wave,
                  "Write the waveform of every signal during the run (FST: GTKWave, Surfer; rtl only; slow)");
  cmd->callback([options] {
    RemoveOutputsOnFailure(options->outputs, options->inputs, [&options] {
      if (IsHloFile(options->program) || IsModelPath(options->program)) {
        RunModel({options->program, options->device, options->config, options->inputs,
                  options->random_seed ? std::optional<std::uint64_t>(*options->random_seed) : std::nullopt,
                  options->network_seed, options->outputs, options->lossy_inputs, options->json, options->quiet,
                  options->trace, options->wave, options->module, options->jobs, options->device_state});
      } else {
        if (!options->module.empty()) throw std::runtime_error("--module is for HLO files");
        if (options->network_seed) throw std::runtime_error("--network-inputs is for models (.hlo, compiled .sbin)");
        if (options->jobs != 1) throw std::runtime_error("--jobs is for models (.hlo, compiled .sbin)");
        if (options->device_state) throw std::runtime_error("--device-state is for HLO training steps (.hlo)");
        // Programs take exactly what their .input dtypes hold (AppendElement); there is no lossy mode.
        if (options->lossy_inputs) throw std::runtime_error("--lossy-inputs is for models (.hlo, compiled .sbin)");
        RunProgram(*options);
      }
    });
  });
}

}  // namespace systole::cli
