// Shared by the training tests: the fixtures of examples/training/ (make_fixtures.py writes
// them), compiled for `small`, and JAX's CPU reference run.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include "arch/config/config.hpp"
#include "runtime/train_loop.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::runtime::testing {

inline std::filesystem::path Fixture(const std::string& name) {
  return std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "training" / name;
}

inline std::shared_ptr<const CompiledModel> CompileFixture(const std::string& name,
                                                           const std::string& config = "small") {
  const auto path = Fixture(name);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return std::make_shared<const CompiledModel>(compiler::Compile(text.str(), name, LoadConfig(config)));
}

// The initial state of <model>_step.hlo ("mlp_sgd", "mlp_adam", "cnn_sgd").
inline std::vector<hlo::Literal> LoadState(const std::string& model) {
  const auto step = CompileFixture(model + "_step.hlo");
  return ReadInitialState(Fixture(model + "_init.npz"), *step, ReadStepSignature(*step->module, step->source_name));
}

inline Dataset LoadDataset(const CompiledModel& step) {
  return ReadDataset(Fixture("digits.npz"), step, ReadStepSignature(*step.module, step.source_name));
}

// <model>_jax.npz: JAX on the CPU from the same initialization and batches.
struct JaxReference {
  std::vector<double> losses;         // every step
  std::vector<double> test_accuracy;  // after every epoch
  std::vector<std::vector<double>> early_state;  // after early_state_steps steps
  std::size_t early_state_steps = 8;  // make_fixtures.py's REFERENCE_STEPS
};

inline JaxReference LoadJaxReference(const std::string& model) {
  const std::vector<npy::Array> arrays = npy::ReadNpz(Fixture(model + "_jax.npz"));
  JaxReference reference;
  reference.losses = arrays.at(0).values;
  reference.test_accuracy = arrays.at(1).values;
  for (std::size_t i = 2; i < arrays.size(); ++i) reference.early_state.push_back(arrays[i].values);
  return reference;
}

// max |a - b| / max |b| (0 when b is all zero and a equals it).
// Trains `model` (its step, eval and fixtures) on `ref` for as many epochs as JAX's reference
// and returns the summary.
inline TrainSummary TrainLikeJax(const std::string& model, const std::string& eval) {
  const auto step = CompileFixture(model + "_step.hlo");
  Device device = Device::Open("ref", LoadConfig("small"));
  DeviceTrainer trainer(step, CompileFixture(eval), device, LoadState(model));
  TrainLoopOptions options;
  options.epochs = LoadJaxReference(model).test_accuracy.size();
  return TrainLoop(trainer, LoadDataset(*step), options, true);
}

inline double RelativeError(const std::vector<double>& a, const std::vector<double>& b) {
  double error = 0, scale = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    error = std::max(error, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  if (a.size() != b.size()) return INFINITY;
  return scale == 0 ? error : error / scale;
}

}  // namespace systole::runtime::testing
