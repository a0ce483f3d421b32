// Several training steps per launch: a JAX step in a lax.fori_loop or lax.scan over k stacked
// batches, the losses an array of k (examples/training/mlp_sgd_loop.hlo), which TPU users run
// to pay one dispatch per k steps. Recognising such a program, stacking k batches into its
// parameters and reading every step's metrics back (docs/TRAINING.md).
#include "runtime/steps_per_launch.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

namespace systole::runtime {

namespace {

// "output 8 is f32[8]": the metric that made the program one of k steps per launch, for errors.
std::string StepsWitness(const hlo::Shape& root, const StepSignature& signature) {
  for (const std::size_t o : signature.metric_outputs) {
    if (!root.tuple[o].dims.empty()) return fmt::format("output {} is {}", o, root.tuple[o].ToString());
  }
  return "no metric is an array";
}

}  // namespace

void ReadStepsPerLaunch(const hlo::Shape& root, const std::string& source, StepSignature& signature) {
  const auto is_scalar = [&](std::size_t o) { return root.tuple[o].dims.empty(); };
  if (std::all_of(signature.metric_outputs.begin(), signature.metric_outputs.end(), is_scalar)) return;
  // The first metric that is an array sets k; every metric must then be [k].
  const std::size_t first =
      *std::find_if_not(signature.metric_outputs.begin(), signature.metric_outputs.end(), is_scalar);
  const hlo::Shape& leader = root.tuple[first];
  const std::int64_t steps = leader.dims[0];
  for (const std::size_t o : signature.metric_outputs) {
    const hlo::Shape& shape = root.tuple[o];
    if (shape.dims.size() == 1 && shape.dims[0] == steps && steps > 0) continue;
    const std::string rule = "the outputs that are not state are the metrics: all scalars (one step per launch) "
                             "or all [k] (k steps per launch, one value per step)";
    if (o == first) {
      throw std::runtime_error(fmt::format("{}: output {} is {}, but {}", source, o, shape.ToString(), rule));
    }
    throw std::runtime_error(fmt::format("{}: output {} is {}, but output {} is {}: {}", source, o,
                                         shape.ToString(), first, leader.ToString(), rule));
  }
  signature.stacked = true;
  signature.steps_per_launch = steps;
}

void ReadBatchParameters(const std::vector<hlo::Instruction*>& parameters, const std::vector<bool>& is_state_parameter,
                         const hlo::Shape& root, const std::string& source, StepSignature& signature) {
  const std::size_t rows_dim = signature.leading_dims() - 1;
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    if (is_state_parameter[p]) continue;
    const hlo::Shape& shape = parameters[p]->shape;
    const std::string parameter = fmt::format("batch parameter {} ('{}') is {}", p, parameters[p]->name,
                                              shape.ToString());
    if (signature.stacked &&
        (!shape.IsArray() || shape.dims.size() < 2 || shape.dims[0] != signature.steps_per_launch)) {
      throw std::runtime_error(fmt::format("{}: {}, but {}, so the program runs {} steps per launch and takes every "
                                           "batch stacked, [{}, batch, …]", source, parameter,
                                           StepsWitness(root, signature), signature.steps_per_launch,
                                           signature.steps_per_launch));
    }
    if (!shape.IsArray() || shape.dims.empty()) {
      throw std::runtime_error(fmt::format("{}: {}: a batch needs a row dimension", source, parameter));
    }
    if (signature.batch_size == 0) signature.batch_size = shape.dims[rows_dim];
    if (shape.dims[rows_dim] != signature.batch_size) {
      // A single step's per-example metric ([batch]) also reads as k steps; say so, as that is the
      // likelier mistake when the stacked reading's rows disagree.
      const std::string reading =
          signature.stacked ? fmt::format(" (read as {} steps per launch because {}; if that output holds one value "
                                          "per example of a single step, not one per step, reduce it to a scalar in "
                                          "the program, e.g. its mean)",
                                          signature.steps_per_launch, StepsWitness(root, signature))
                            : "";
      throw std::runtime_error(fmt::format("{}: {} with {} rows a step, the first batch parameter {}{}", source,
                                           parameter, shape.dims[rows_dim], signature.batch_size, reading));
    }
    signature.batch_parameters.push_back(p);
  }
}

std::vector<hlo::Literal> StackBatches(const CompiledModel& program, const StepSignature& signature,
                                       const std::vector<std::vector<hlo::Literal>>& steps) {
  if (!signature.stacked || steps.size() != static_cast<std::size_t>(signature.steps_per_launch)) {
    throw std::invalid_argument(fmt::format("{}: {} batches given, but it runs {} steps per launch{}",
                                            program.source_name, steps.size(), signature.steps_per_launch,
                                            signature.stacked ? "" : " (batches unstacked)"));
  }
  const auto parameters = program.module->entry->Parameters();
  std::vector<hlo::Literal> stacked;
  for (std::size_t b = 0; b < signature.batch_parameters.size(); ++b) {
    const hlo::Instruction& parameter = *parameters[signature.batch_parameters[b]];
    const hlo::Shape one_step(parameter.shape.type,
                              std::vector<std::int64_t>(parameter.shape.dims.begin() + 1, parameter.shape.dims.end()));
    hlo::Literal values(parameter.shape);
    values.values.clear();
    for (std::size_t s = 0; s < steps.size(); ++s) {
      if (steps[s].size() != signature.batch_parameters.size() || !steps[s][b].shape.SameAs(one_step)) {
        throw std::invalid_argument(fmt::format(
            "{}: step {} of the launch: batch array {} is {}, but one step of parameter {} ('{}') is {}",
            program.source_name, s, b, b < steps[s].size() ? steps[s][b].shape.ToString() : "missing",
            signature.batch_parameters[b], parameter.name, one_step.ToString()));
      }
      values.values.insert(values.values.end(), steps[s][b].values.begin(), steps[s][b].values.end());
    }
    stacked.push_back(std::move(values));
  }
  return stacked;
}

LaunchResult TrainingSession::Launch(const std::vector<std::vector<hlo::Literal>>& steps) {
  if (!signature_.stacked) {
    if (steps.size() != 1) {
      throw std::invalid_argument(fmt::format("{}: {} batches given, but it runs one step per launch",
                                              step_->source_name, steps.size()));
    }
    StepResult step = Step(steps[0]);
    return {{std::move(step.metrics)}, step.stats};
  }
  const RunResult run = Run(StackBatches(*step_, signature_, steps));
  LaunchResult result;
  result.stats = run.stats;
  result.step_metrics.resize(steps.size());
  for (std::size_t s = 0; s < steps.size(); ++s) {
    for (const std::size_t o : signature_.metric_outputs) result.step_metrics[s].push_back(run.result.elements[o].values.at(s));
  }
  return result;
}

}  // namespace systole::runtime
