#include "runtime/training.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include "runtime/steps_per_launch.hpp"
#include "toolchain/hlo/io.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::runtime {

namespace {

std::size_t RowElements(const hlo::Shape& shape) {
  std::size_t elements = 1;
  for (std::size_t d = 1; d < shape.dims.size(); ++d) elements *= static_cast<std::size_t>(shape.dims[d]);
  return elements;
}

void CheckRows(const hlo::Literal& data, std::size_t end) {
  if (!data.shape.IsArray() || data.shape.dims.empty()) {
    throw std::invalid_argument(fmt::format("rows of {}: not an array with a row dimension", data.shape.ToString()));
  }
  if (end > static_cast<std::size_t>(data.shape.dims[0])) {
    throw std::out_of_range(fmt::format("row {} of {}: out of range", end - 1, data.shape.ToString()));
  }
}

std::uint64_t SplitMix64(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// `literal` must be shaped like `parameter`; `what` names it in the error.
void CheckShapedLike(const hlo::Literal& literal, const hlo::Instruction& parameter, const std::string& what) {
  if (!literal.shape.SameAs(parameter.shape)) {
    throw std::invalid_argument(fmt::format("{} is {} but parameter {} ('{}') is {}", what, literal.shape.ToString(),
                                            parameter.parameter_number, parameter.name, parameter.shape.ToString()));
  }
}

}  // namespace

StepSignature ReadStepSignature(const hlo::Module& module, const std::string& source) {
  if (module.input_output_aliases.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: not a training step: its header has no input_output_alias (lower it with jax.jit(step, "
        "donate_argnums=…) so that the parameters and optimizer state it returns replace its inputs)",
        source));
  }
  const hlo::Shape& root = module.entry->root->shape;
  if (!root.IsTuple() || std::any_of(root.tuple.begin(), root.tuple.end(), [](const hlo::Shape& s) { return s.IsTuple(); })) {
    throw std::runtime_error(fmt::format("{}: a training step returns a flat tuple of arrays, not {}", source,
                                         root.ToString()));
  }
  StepSignature signature;
  std::vector<bool> is_state_output(root.tuple.size(), false);
  std::vector<bool> is_state_parameter;
  const auto parameters = module.entry->Parameters();
  is_state_parameter.resize(parameters.size(), false);
  for (const hlo::InputOutputAlias& alias : module.input_output_aliases) {
    if (alias.output_index.size() != 1 || !alias.parameter_index.empty()) {
      throw std::runtime_error(fmt::format("{}: input_output_alias {{{}}}: a training step aliases whole parameters "
                                           "to top-level outputs", source, fmt::join(alias.output_index, ", ")));
    }
    const auto output = static_cast<std::size_t>(alias.output_index[0]);
    signature.state_parameters.push_back(static_cast<std::size_t>(alias.parameter));
    signature.state_outputs.push_back(output);
    is_state_output[output] = true;
    is_state_parameter[static_cast<std::size_t>(alias.parameter)] = true;
  }
  for (std::size_t o = 0; o < root.tuple.size(); ++o) {
    if (!is_state_output[o]) signature.metric_outputs.push_back(o);
  }
  if (signature.metric_outputs.empty()) {
    throw std::runtime_error(fmt::format("{}: a training step returns at least the loss besides its state", source));
  }
  // The metrics' shapes say how many steps one launch runs; the batch parameters must agree.
  ReadStepsPerLaunch(root, source, signature);
  ReadBatchParameters(parameters, is_state_parameter, root, source, signature);
  return signature;
}

hlo::Literal GatherRows(const hlo::Literal& data, std::span<const std::size_t> rows) {
  hlo::Shape shape = data.shape;
  const std::size_t row_elements = RowElements(shape);
  for (const std::size_t row : rows) CheckRows(data, row + 1);
  shape.dims[0] = static_cast<std::int64_t>(rows.size());
  hlo::Literal out(shape);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::copy_n(data.values.begin() + static_cast<std::ptrdiff_t>(rows[r] * row_elements), row_elements,
                out.values.begin() + static_cast<std::ptrdiff_t>(r * row_elements));
  }
  return out;
}

hlo::Literal SliceRows(const hlo::Literal& data, std::size_t first, std::size_t count) {
  std::vector<std::size_t> rows(count);
  std::iota(rows.begin(), rows.end(), first);
  return GatherRows(data, rows);
}

std::vector<std::size_t> EpochOrder(std::size_t rows, std::uint64_t seed, std::uint64_t epoch) {
  std::vector<std::size_t> order(rows);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::uint64_t state = seed + epoch;
  for (std::size_t i = rows; i-- > 1;) {
    const std::size_t j = static_cast<std::size_t>(SplitMix64(state) % (i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

TrainingSession::TrainingSession(std::shared_ptr<const CompiledModel> step, Device& device,
                                 std::vector<hlo::Literal> state)
    : step_(std::move(step)), device_(&device),
      device_state_(step_->state_tensors.empty() ? nullptr : std::make_unique<ResidentState>(*step_, device)),
      programs_(std::make_unique<ResidentPrograms>(*step_, device, device_state_.get())),
      signature_(ReadStepSignature(*step_->module, step_->source_name)) {
  set_state(std::move(state));
}

std::size_t TrainingSession::device_state_values() const {
  if (device_state_ == nullptr) return 0;
  const auto parameters = step_->module->entry->Parameters();
  return static_cast<std::size_t>(std::count_if(signature_.state_parameters.begin(), signature_.state_parameters.end(),
                                                [&](std::size_t p) { return device_state_->Holds(parameters[p]->name); }));
}

const std::vector<hlo::Literal>& TrainingSession::state() const {
  const auto parameters = step_->module->entry->Parameters();
  for (std::size_t i = 0; i < state_.size(); ++i) {
    if (!stale_[i]) continue;
    if (!lost_.empty()) throw std::runtime_error(lost_);
    state_[i] = device_state_->Read(parameters[signature_.state_parameters[i]]->name, pending_read_);
    stale_[i] = false;
  }
  return state_;
}

void TrainingSession::set_state(std::vector<hlo::Literal> state) {
  if (state.size() != signature_.state_parameters.size()) {
    throw std::invalid_argument(fmt::format("{}: {} state values given, the step has {}", step_->source_name,
                                            state.size(), signature_.state_parameters.size()));
  }
  const auto parameters = step_->module->entry->Parameters();
  for (std::size_t i = 0; i < state.size(); ++i) {
    CheckShapedLike(state[i], *parameters[signature_.state_parameters[i]], fmt::format("state value {}", i));
  }
  state_ = std::move(state);
  stale_.assign(state_.size(), false);
  if (device_state_ == nullptr) return;
  // Until every value is written, the device holds some of the new state and some of the old.
  lost_ = fmt::format("{}: setting the state on {} failed, so the state in device memory may be partly updated; "
                      "set a state (from a checkpoint) again",
                      step_->source_name, device_->uri());
  for (std::size_t i = 0; i < state_.size(); ++i) {
    const std::string& name = parameters[signature_.state_parameters[i]]->name;
    if (device_state_->Holds(name)) pending_written_ += device_state_->Write(name, state_[i]);
  }
  lost_.clear();
}

RunResult TrainingSession::Run(const std::vector<hlo::Literal>& batch) {
  if (!lost_.empty()) throw std::runtime_error(lost_);
  if (batch.size() != signature_.batch_parameters.size()) {
    throw std::invalid_argument(fmt::format("{}: {} batch arrays given, the step takes {}", step_->source_name,
                                            batch.size(), signature_.batch_parameters.size()));
  }
  const auto parameters = step_->module->entry->Parameters();
  std::vector<hlo::Literal> arguments(parameters.size());
  for (std::size_t i = 0; i < state_.size(); ++i) arguments[signature_.state_parameters[i]] = std::move(state_[i]);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    CheckShapedLike(batch[i], *parameters[signature_.batch_parameters[i]], fmt::format("batch array {}", i));
    arguments[signature_.batch_parameters[i]] = batch[i];
  }
  RunResult run;
  try {
    run = Execute(*step_, *device_, arguments, {}, programs_.get(), nullptr,
                  hlo::Interpreter::kDefaultWhileIterationLimit, device_state_.get());
  } catch (...) {
    // Keep the state the step started from: the caller may save it or retry elsewhere. State in
    // device memory may be partly updated by then (some update steps ran, others not): the
    // values read back already stay readable, the rest only after a new state.
    for (std::size_t i = 0; i < state_.size(); ++i) state_[i] = std::move(arguments[signature_.state_parameters[i]]);
    if (device_state_ != nullptr) {
      std::string cause = "an unknown error";
      try {
        throw;
      } catch (const std::exception& e) {
        cause = e.what();
      } catch (...) {
      }
      lost_ = fmt::format("{}: a step failed on {} ({}), so the state in device memory may be partly updated; "
                          "set a state (from a checkpoint) before training on or reading it",
                          step_->source_name, device_->uri(), cause);
    }
    throw;
  }
  for (std::size_t i = 0; i < state_.size(); ++i) {
    const std::string& name = parameters[signature_.state_parameters[i]]->name;
    if (device_state_ != nullptr && device_state_->Holds(name)) {
      state_[i] = std::move(arguments[signature_.state_parameters[i]]);  // the shape; the value is on the device
      stale_[i] = true;
    } else {
      state_[i] = std::move(run.result.elements[signature_.state_outputs[i]]);
    }
  }
  run.stats.operand_bytes += pending_written_;
  run.stats.result_bytes += pending_read_;
  pending_written_ = pending_read_ = 0;
  return run;
}

StepResult TrainingSession::Step(const std::vector<hlo::Literal>& batch) {
  if (signature_.stacked) {
    if (signature_.steps_per_launch != 1) {
      throw std::invalid_argument(fmt::format("{}: runs {} steps per launch: give it {} batches at once (Launch)",
                                              step_->source_name, signature_.steps_per_launch,
                                              signature_.steps_per_launch));
    }
    LaunchResult launch = Launch({batch});
    return {std::move(launch.step_metrics.at(0)), launch.stats};
  }
  RunResult run = Run(batch);
  StepResult result;
  result.stats = run.stats;
  for (const std::size_t o : signature_.metric_outputs) result.metrics.push_back(run.result.elements[o].values.at(0));
  return result;
}

Evaluation Evaluate(const CompiledModel& eval, Device& device, std::span<const hlo::Literal> state,
                    const std::vector<hlo::Literal>& batch) {
  const auto parameters = eval.module->entry->Parameters();
  if (parameters.size() < batch.size() || parameters.size() - batch.size() > state.size()) {
    throw std::invalid_argument(fmt::format("{}: takes {} parameters; {} batch arrays and at most {} state values "
                                            "were given", eval.source_name, parameters.size(), batch.size(),
                                            state.size()));
  }
  const std::size_t state_count = parameters.size() - batch.size();
  std::vector<hlo::Literal> arguments;
  for (std::size_t i = 0; i < state_count; ++i) {
    CheckShapedLike(state[i], *parameters[i], fmt::format("{}: state value {}", eval.source_name, i));
    arguments.push_back(state[i]);
  }
  for (std::size_t i = 0; i < batch.size(); ++i) {
    CheckShapedLike(batch[i], *parameters[state_count + i], fmt::format("{}: batch array {}", eval.source_name, i));
    arguments.push_back(batch[i]);
  }
  RunResult run = Execute(eval, device, arguments);
  const hlo::Literal& value = run.result.shape.IsTuple() ? run.result.elements.at(0) : run.result;
  if (!value.shape.IsArray() || value.values.size() != 1) {
    throw std::runtime_error(fmt::format("{}: an evaluation returns one scalar, not {}", eval.source_name,
                                         run.result.shape.ToString()));
  }
  return {value.values[0], run.stats};
}

void SaveCheckpoint(const std::filesystem::path& path, const Checkpoint& checkpoint) {
  std::vector<npy::Array> arrays;
  npy::Array header;
  header.type = npy::ElementType::kInt64;
  header.shape = {2};
  header.values = {static_cast<double>(checkpoint.steps), static_cast<double>(checkpoint.device_cycles)};
  arrays.push_back(std::move(header));
  for (const hlo::Literal& value : checkpoint.state) {
    for (npy::Array& array : hlo::OutputArrays(value)) arrays.push_back(std::move(array));
  }
  npy::WriteNpz(path, arrays);
}

Checkpoint LoadCheckpoint(const std::filesystem::path& path, std::span<const hlo::Literal> like) {
  const std::vector<npy::Array> arrays = npy::ReadNpz(path);
  const std::string file = path.string();
  if (arrays.size() != like.size() + 1) {
    throw std::runtime_error(fmt::format("{}: {} arrays, but a checkpoint of this model has {} (arr_0 = steps and "
                                         "cycles, then {} state values)", file, arrays.size(), like.size() + 1,
                                         like.size()));
  }
  if (arrays[0].type != npy::ElementType::kInt64 || arrays[0].shape != std::vector<std::uint64_t>{2}) {
    throw std::runtime_error(fmt::format("{}: arr_0 is not int64 [2] (steps, device cycles)", file));
  }
  Checkpoint checkpoint;
  checkpoint.steps = static_cast<std::uint64_t>(arrays[0].values[0]);
  checkpoint.device_cycles = static_cast<std::uint64_t>(arrays[0].values[1]);
  for (std::size_t i = 0; i < like.size(); ++i) {
    const npy::Array& array = arrays[i + 1];
    const hlo::Shape& shape = like[i].shape;
    std::vector<std::uint64_t> dims(shape.dims.begin(), shape.dims.end());
    if (array.shape != dims) {
      throw std::runtime_error(fmt::format("{}: arr_{} has shape [{}], the state value is {}", file, i + 1,
                                           fmt::join(array.shape, ", "), shape.ToString()));
    }
    hlo::Literal value(shape);
    value.values = array.values;
    hlo::RoundAll(shape.type, value.values);
    checkpoint.state.push_back(std::move(value));
  }
  return checkpoint;
}

}  // namespace systole::runtime
