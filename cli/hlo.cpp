// systole hlo: the HLO front end from the command line. `check` parses and verifies a file and
// summarizes it; `interp` runs it on the CPU interpreter (the numerical reference) with inputs
// from an .npz or from the documented random generator, and writes the outputs as an .npz.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/run_files.hpp"
#include "cli/tensor_text.hpp"
#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/io.hpp"
#include "toolchain/hlo/parser.hpp"
#include "toolchain/hlo/verifier.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::cli {
namespace {

struct CheckOptions {
  std::string file;
  bool json = false;
};

struct InterpOptions {
  std::string file;
  std::size_t module_index = 0;
  std::string inputs;
  std::optional<std::uint64_t> random_seed;
  std::string outputs;
  bool lossy_inputs = false;  // cli/run_files.hpp
  bool json = false;
};

nlohmann::json Summary(const hlo::Module& module) {
  std::map<std::string, std::size_t> histogram;
  nlohmann::json computations = nlohmann::json::array();
  for (const auto& computation : module.computations) {
    for (const auto& instruction : computation->instructions) ++histogram[std::string(hlo::OpcodeName(instruction->opcode))];
    computations.push_back({{"name", computation->name},
                            {"instructions", computation->instructions.size()},
                            {"entry", computation.get() == module.entry},
                            {"root", computation->root->name}});
  }
  nlohmann::json parameters = nlohmann::json::array();
  for (const hlo::Instruction* parameter : module.entry->Parameters()) parameters.push_back(parameter->shape.ToString());
  return {{"module", module.name},
          {"entry", module.entry->name},
          {"computations", computations},
          {"instructions", module.InstructionCount()},
          {"parameters", parameters},
          {"result", module.entry->root->shape.ToString()},
          {"opcodes", histogram}};
}

void Check(const CheckOptions& options) {
  const std::vector<hlo::Module> modules = hlo::ParseModuleFile(options.file);
  nlohmann::json summaries = nlohmann::json::array();
  for (const hlo::Module& module : modules) {
    hlo::Verify(module);
    summaries.push_back(Summary(module));
  }
  if (options.json) {
    fmt::print("{}\n", (modules.size() == 1 ? summaries[0] : summaries).dump(2));
    return;
  }
  for (const nlohmann::json& s : summaries) {
    fmt::print("module        {} (ok: parsed and verified)\n", s["module"].get<std::string>());
    std::string result = s["result"].get<std::string>();
    if (result.size() > 80) result = result.substr(0, 77) + "...";  // 321-element tuples in real dumps
    fmt::print("entry         {} ({} parameter(s) -> {})\n", s["entry"].get<std::string>(), s["parameters"].size(),
               result);
    fmt::print("computations  {}, {} instructions\n", s["computations"].size(), s["instructions"].get<std::size_t>());
    std::vector<std::pair<std::size_t, std::string>> ops;
    for (const auto& [name, count] : s["opcodes"].items()) ops.emplace_back(count.get<std::size_t>(), name);
    std::sort(ops.rbegin(), ops.rend());
    for (const auto& [count, name] : ops) fmt::print("  {:>6}  {}\n", count, name);
  }
}

std::vector<std::uint64_t> Dims(const npy::Array& array) { return array.shape; }

void Interp(const InterpOptions& options) {
  std::vector<hlo::Module> modules = hlo::ParseModuleFile(options.file);
  if (options.module_index >= modules.size()) {
    throw std::runtime_error(fmt::format("{} holds {} module(s); --module {} is out of range", options.file,
                                         modules.size(), options.module_index));
  }
  const hlo::Module& module = modules[options.module_index];
  hlo::Verify(module);
  std::vector<hlo::Literal> inputs;
  if (!options.inputs.empty()) {
    inputs = ReadModelInputs(module, options.inputs, options.lossy_inputs);
  } else if (options.random_seed) {
    inputs = hlo::RandomInputs(module, *options.random_seed);
  } else if (!module.entry->Parameters().empty()) {
    throw std::runtime_error(fmt::format("'{}' takes {} parameter(s): pass --inputs FILE.npz or --random-inputs SEED",
                                         module.entry->name, module.entry->Parameters().size()));
  }
  const auto start = std::chrono::steady_clock::now();
  const hlo::Literal result = hlo::Interpreter(module).Run(inputs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<npy::Array> outputs = hlo::OutputArrays(result);
  if (!options.outputs.empty()) npy::WriteNpz(options.outputs, outputs);
  if (options.json) {
    nlohmann::json json{{"module", module.name}, {"seconds", seconds}, {"outputs", nlohmann::json::array()}};
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::size_t shown = std::min<std::size_t>(outputs[i].values.size(), 8);
      json["outputs"].push_back({{"name", fmt::format("arr_{}", i)},
                                 {"shape", outputs[i].shape},
                                 {"dtype", npy::ElementTypeName(outputs[i].type)},
                                 {"first_values", std::vector<double>(outputs[i].values.begin(),
                                                                      outputs[i].values.begin() + static_cast<std::ptrdiff_t>(shown))}});
    }
    fmt::print("{}\n", json.dump(2));
    return;
  }
  fmt::print("ran {} ({}) in {:.3f} s on the interpreter\n", module.name, module.entry->name, seconds);
  const std::size_t shown = std::min<std::size_t>(outputs.size(), 4);
  for (std::size_t i = 0; i < shown; ++i) {
    fmt::print("arr_{} {} ({}):\n{}\n", i, npy::ElementTypeName(outputs[i].type), fmt::join(Dims(outputs[i]), ", "),
               FormatTensor(outputs[i].values, outputs[i].shape, 3));
  }
  if (outputs.size() > shown) fmt::print("… and {} more output(s)\n", outputs.size() - shown);
  if (!options.outputs.empty()) fmt::print("wrote {} output(s) to {}\n", outputs.size(), options.outputs);
}

}  // namespace

void AddHloCommand(CLI::App& app) {
  CLI::App* hlo = app.add_subcommand("hlo", "XLA HLO text: check it, run it on the reference interpreter");
  hlo->require_subcommand(1);

  auto check = std::make_shared<CheckOptions>();
  CLI::App* check_cmd = hlo->add_subcommand("check", "Parse and verify an HLO file; summarize its computations");
  check_cmd->add_option("file", check->file, "HLO text file")->required()->check(CLI::ExistingFile);
  check_cmd->add_flag("--json", check->json, "Print a JSON summary");
  check_cmd->callback([check] { Check(*check); });

  auto interp = std::make_shared<InterpOptions>();
  CLI::App* interp_cmd = hlo->add_subcommand("interp", "Run an HLO file on the CPU reference interpreter");
  interp_cmd->add_option("file", interp->file, "HLO text file")->required()->check(CLI::ExistingFile);
  auto* inputs = interp_cmd->add_option("--inputs", interp->inputs, "Inputs as .npz (arr_0, … in parameter order)")
                     ->check(CLI::ExistingFile);
  interp_cmd->add_option("--random-inputs", interp->random_seed, "Random inputs from SEED (docs/HLO.md)")
      ->excludes(inputs);
  interp_cmd->add_option("--outputs", interp->outputs, "Write the outputs (tuple flattened) to this .npz");
  interp_cmd->add_option("--module", interp->module_index, "Which module of a '// -----' separated file")
      ->capture_default_str();
  interp_cmd->add_flag("--lossy-inputs", interp->lossy_inputs,
                       "Convert --inputs values the parameter type cannot hold (saturate integers, NaN to 0) "
                       "instead of refusing them");
  interp_cmd->add_flag("--json", interp->json, "Print a JSON summary");
  interp_cmd->callback([interp] { RemoveOutputsOnFailure(interp->outputs, interp->inputs, [&interp] { Interp(*interp); }); });
}

}  // namespace systole::cli
