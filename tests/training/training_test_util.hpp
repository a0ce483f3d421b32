// Shared by the training tests: the fixtures of examples/training/ (make_fixtures.py writes
// them), compiled for `small`, and JAX's CPU reference run.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/config/config.hpp"
#include "systole/link.hpp"
#include "runtime/train_loop.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::runtime::testing {

inline std::filesystem::path Fixture(const std::string& name) {
  return std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "training" / name;
}

// `device_state`: parameters and optimizer state in device memory where the compiler can place
// their update there (CompileOptions::device_state, what `systole train` does by default).
inline std::shared_ptr<const CompiledModel> CompileFixture(const std::string& name,
                                                           const std::string& config = "small",
                                                           bool device_state = false) {
  const auto path = Fixture(name);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  compiler::CompileOptions options;
  options.device_state = device_state;
  return std::make_shared<const CompiledModel>(compiler::Compile(text.str(), name, LoadConfig(config), options));
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

// bf16 operands on the MXU (RNE, fp32 accumulation) against f32 on the CPU: each step's
// loss within 2 % of JAX's, and the state after 8 steps, relative to the largest element of
// each array, within 2^-5 of JAX's for SGD (measured: at most 0.029, the momentum of the first
// layer) and 2^-2 for Adam (measured: 0.168, the hidden bias: Adam divides by sqrt(v), so the
// small, noisy gradients of a bias that starts at zero move it by about the learning rate
// whatever their size, and bf16 differences flip their sign); the CNN's within 2^-4 (measured:
// 0.040, a momentum: bf16 operands through two convolutions and their gradients).
// docs/TRAINING.md.
// The state tensors of the MLP with SGD when its state is in device memory (mlp_sgd_step.hlo,
// and mlp_sgd_loop.hlo's, named by the parameters that start the loop): w1 in the layout of its
// forward dot; w2 in its forward dot's and (transposed) in the backward dot's: fp32 value, fp32
// momentum and bf16 weights for each. b1 and b2 as rows of 16 with their momenta, and
// replicated over the 32 rows their forward drains start from.
inline std::vector<std::string> StateTensorNames(const CompiledModel& model) {
  std::vector<std::string> names;
  for (const compiler::StateTensor& t : model.state_tensors) names.push_back(t.name);
  return names;
}
inline const std::vector<std::string> kMlpSgdStateTensors = {
    "params_0_.1 fp32 [0,1]", "momentum_0_.1 fp32 [0,1]", "params_0_.1 weights [0,1]",
    "params_2_.1 fp32 [0,1]", "momentum_2_.1 fp32 [0,1]", "params_2_.1 weights [0,1]",
    "params_2_.1 fp32 [1,0]", "momentum_2_.1 fp32 [1,0]", "params_2_.1 weights [1,0]",
    "params_1_.1 fp32 [0]",   "momentum_1_.1 fp32 [0]",   "params_1_.1 bias [4,32,16]",
    "params_3_.1 fp32 [0]",   "momentum_3_.1 fp32 [0]",   "params_3_.1 bias [1,32,16]"};

inline constexpr double kLossTolerance = 0.02;
inline double StateTolerance(const std::string& model) {
  if (model == "mlp_adam") return 0.25;
  return model == "cnn_sgd" || model == "pool_cnn_sgd" ? 1.0 / 16 : 1.0 / 32;
}

// The first `steps` batches of epoch 0 (EpochOrder, seed 17), as TrainLoop makes them.
inline std::vector<std::vector<hlo::Literal>> FirstBatches(const CompiledModel& step, std::size_t steps) {
  const Dataset data = LoadDataset(step);
  const auto batch = static_cast<std::size_t>(ReadStepSignature(*step.module, step.source_name).batch_size);
  const std::vector<std::size_t> order = EpochOrder(data.train_rows(), 17, 0);
  std::vector<std::vector<hlo::Literal>> batches(steps);
  for (std::size_t s = 0; s < steps; ++s) {
    for (const hlo::Literal& array : data.train) {
      batches[s].push_back(GatherRows(array, std::span(order).subspan(s * batch, batch)));
    }
  }
  return batches;
}

// The path before resident programs: every step is a plain Execute that loads its programs,
// the state threaded through by hand. Returns the losses; `state` ends as the final state.
inline std::vector<double> LoadEveryStep(const CompiledModel& step, Device& device, std::vector<hlo::Literal>& state,
                                  const std::vector<std::vector<hlo::Literal>>& batches, RunStats& last) {
  const StepSignature signature = ReadStepSignature(*step.module, step.source_name);
  std::vector<double> losses;
  for (const std::vector<hlo::Literal>& batch : batches) {
    std::vector<hlo::Literal> arguments(step.module->entry->Parameters().size());
    for (std::size_t i = 0; i < state.size(); ++i) arguments[signature.state_parameters[i]] = state[i];
    for (std::size_t i = 0; i < batch.size(); ++i) arguments[signature.batch_parameters[i]] = batch[i];
    RunResult run = Execute(step, device, arguments);
    for (std::size_t i = 0; i < state.size(); ++i) state[i] = run.result.elements[signature.state_outputs[i]];
    losses.push_back(run.result.elements[signature.metric_outputs[0]].values.at(0));
    last = run.stats;
  }
  return losses;
}

// The arguments of a training loop (make_fixtures.py's mlp_sgd_loop, cnn_sgd_scan: the state,
// then xs and ys): `state`, then `batches` stacked along a new first dimension.
inline std::vector<hlo::Literal> LoopArguments(const CompiledModel& loop, std::vector<hlo::Literal> state,
                                               const std::vector<std::vector<hlo::Literal>>& batches) {
  const std::vector<hlo::Instruction*> parameters = loop.module->entry->Parameters();
  std::vector<hlo::Literal> arguments = std::move(state);
  for (std::size_t b = 0; arguments.size() < parameters.size(); ++b) {
    hlo::Literal stacked(parameters[arguments.size()]->shape);
    stacked.values.clear();
    for (const std::vector<hlo::Literal>& batch : batches) {
      stacked.values.insert(stacked.values.end(), batch.at(b).values.begin(), batch.at(b).values.end());
    }
    arguments.push_back(std::move(stacked));
  }
  return arguments;
}

struct LinkBytes {
  std::uint64_t written = 0;
  std::uint64_t read = 0;
};

// The golden model's link, every call passed through: what a test wraps around it (counting,
// failing) overrides only the calls it watches.
class RefLinkWrapper : public Link {
 public:
  explicit RefLinkWrapper(const Config& config) : inner_(OpenRefLink(config)) {}
  std::string_view Uri() const override { return inner_->Uri(); }
  std::uint32_t ReadRegister(std::uint32_t offset) override { return inner_->ReadRegister(offset); }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override { inner_->WriteRegister(offset, value); }
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override { inner_->WriteMemory(address, bytes); }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override { inner_->ReadMemory(address, bytes); }
  bool WaitForInterrupt(std::chrono::milliseconds timeout) override { return inner_->WaitForInterrupt(timeout); }
  std::uint64_t Allocate(std::uint64_t bytes, std::uint64_t alignment, std::optional<std::uint64_t> at) override {
    return inner_->Allocate(bytes, alignment, at);
  }
  void Free(std::uint64_t address) override { inner_->Free(address); }

 private:
  std::unique_ptr<Link> inner_;
};

// The golden model's link, counting the device-memory bytes written and read through it.
class CountingLink : public RefLinkWrapper {
 public:
  CountingLink(const Config& config, LinkBytes& bytes) : RefLinkWrapper(config), bytes_(&bytes) {}
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    bytes_->written += bytes.size();
    RefLinkWrapper::WriteMemory(address, bytes);
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    bytes_->read += bytes.size();
    RefLinkWrapper::ReadMemory(address, bytes);
  }

 private:
  LinkBytes* bytes_;
};

// max |a - b| / max |b| (0 when b is all zero and a equals it).
// Trains `model` (its step, eval and fixtures) on `ref` for as many epochs as JAX's reference
// and returns the summary. As `systole train` does, the state stays in device memory where
// the compiler can place its update there (the MLP's and the CNNs' dense weights with SGD).
inline TrainSummary TrainLikeJax(const std::string& model, const std::string& eval) {
  const auto step = CompileFixture(model + "_step.hlo", "small", true);
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
