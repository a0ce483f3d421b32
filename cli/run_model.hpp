// Running HLO models (compiled on the fly) and compiled model files from `systole run`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace systole::cli {

struct ModelRunOptions {
  std::string model;
  std::string device;
  std::string config;  // empty: the model file's, or the default for HLO
  std::string inputs;
  std::optional<std::uint64_t> random_seed;
  std::optional<std::uint64_t> network_seed;  // compiler::NetworkInputs
  std::string outputs;
  bool lossy_inputs = false;  // ReadModelInputs
  bool json = false;
  bool quiet = false;
  std::string trace;  // a Chrome trace-event timeline of the device steps (ref, rtl)
  std::string wave;   // an FST waveform of the device steps (rtl)
  std::string module;  // HLO files of several modules: which one (NAME or INDEX); empty: the only one
  unsigned jobs = 1;   // >1: the device steps on that many devices side by side (runtime/parallel_steps.hpp)
  bool device_state = false;  // HLO: compiler::CompileOptions::device_state (the state written before, read after)
};

// HLO text: a .hlo file, or a file that starts with "HloModule".
bool IsHloFile(const std::filesystem::path& path);
// A compiled model (.sbin written by `systole compile`), not a program bundle.
bool IsModelPath(const std::filesystem::path& path);
void RunModel(const ModelRunOptions& options);
// The HLO text of `path`, or of its module `module` (a name or an index) when it holds several
// ('// -----' separated); `source` names the file in errors.
std::string ReadHloText(const std::filesystem::path& path, const std::string& source, const std::string& module);

}  // namespace systole::cli
