#include "cli/run_files.hpp"

#include <filesystem>

#include "toolchain/hlo/io.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::cli {

std::vector<hlo::Literal> ReadModelInputs(const hlo::Module& module, const std::string& npz, bool lossy) {
  const std::vector<npy::Array> arrays = npy::ReadNpz(npz);
  if (lossy) return hlo::InputsFromArrays(module, arrays, hlo::InputConversion::kLossy, npz);
  try {
    return hlo::InputsFromArrays(module, arrays, hlo::InputConversion::kExact, npz);
  } catch (const hlo::LossyInputError& error) {
    throw std::runtime_error(std::string(error.what()) + "; --lossy-inputs converts such values");
  }
}

void RemoveOutputsOnFailure(const std::string& outputs, const std::string& inputs, const std::function<void()>& run) {
  try {
    run();
  } catch (...) {
    std::error_code ignored;  // the run's own error is the one to report
    const bool is_inputs = !inputs.empty() && std::filesystem::equivalent(outputs, inputs, ignored);
    if (!outputs.empty() && !is_inputs) std::filesystem::remove(outputs, ignored);
    throw;
  }
}

}  // namespace systole::cli
