// runtime/ — training: a compiled JAX training step run again and again on one device, its
// state (parameters and optimizer state) carried from step to step by the runtime, so the
// caller hands in only batches and gets back only the loss and metrics (docs/TRAINING.md).
//
// A training step is an HLO module whose header says which outputs reuse which parameters'
// buffers (`input_output_alias`, what `jax.jit(step, donate_argnums=…)` writes): the aliased
// parameters are the state, the other parameters the batch (each with the batch as its first
// dimension), the outputs that are not aliased the metrics (scalars: loss first, then e.g.
// accuracy). A program of k steps per launch — JAX's step in a lax.fori_loop or lax.scan over
// stacked batches, as TPU users run "steps per loop" to save dispatches — takes every batch
// parameter as [k, batch, …] and returns every metric as [k], one value per step.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/execute.hpp"
#include "runtime/resident_state.hpp"

namespace systole::runtime {

// How a training step's parameters and outputs divide into state, batch and metrics.
struct StepSignature {
  // state_parameters[i] is the parameter that output state_outputs[i] replaces.
  std::vector<std::size_t> state_parameters;
  std::vector<std::size_t> state_outputs;
  std::vector<std::size_t> batch_parameters;  // the rest, in parameter order
  std::vector<std::size_t> metric_outputs;    // outputs that are not state, in order
  std::int64_t batch_size = 0;                // one step's rows: the batch parameters' common row dimension
  // Stacked: the batch parameters are [steps_per_launch, batch, …] and the metrics
  // [steps_per_launch] (a loop of steps in one program). Not stacked: one step per launch, the
  // batch parameters [batch, …] and the metrics scalars.
  bool stacked = false;
  std::int64_t steps_per_launch = 1;
  // The dimensions before a batch parameter's row shape: (batch), or (steps, batch) when stacked.
  std::size_t leading_dims() const { return stacked ? 2 : 1; }
};

// Reads the signature from the module's input_output_alias. Throws std::runtime_error naming
// the module when it has no aliases (not a training step: lower it with donate_argnums), when
// its root is not a flat tuple of arrays, when the metrics are neither all scalars nor all [k]
// for one k, when a batch parameter of a k-step program is not [k, batch, …] or when the batch
// parameters disagree on their batch dimension (naming the parameter or output and its shape).
StepSignature ReadStepSignature(const hlo::Module& module, const std::string& source);

// The rows of `data` (an array, rows along dimension 0) at `rows`, in that order.
hlo::Literal GatherRows(const hlo::Literal& data, std::span<const std::size_t> rows);
// Rows [first, first + count) of `data`.
hlo::Literal SliceRows(const hlo::Literal& data, std::size_t first, std::size_t count);

// The order in which an epoch visits `rows` examples: a Fisher-Yates shuffle from the last
// element down (j = next() % (i + 1)) driven by SplitMix64 seeded with seed + epoch, exactly as
// examples/training/make_fixtures.py's batch_order, so JAX on the CPU sees the same batches.
std::vector<std::size_t> EpochOrder(std::size_t rows, std::uint64_t seed, std::uint64_t epoch);

// One step's outcome.
struct StepResult {
  std::vector<double> metrics;  // the metric outputs, in order
  RunStats stats;
};

// One launch's outcome: every step's metrics (StepSignature::steps_per_launch of them, in step
// order) and the launch's device work, which the device counts per launch, not per step.
struct LaunchResult {
  std::vector<std::vector<double>> step_metrics;
  RunStats stats;
};

// `steps` (one batch per step, one literal per batch parameter, each shaped as one step's
// slice of the parameter) stacked into the program's batch parameters [k, batch, …], as
// lax.fori_loop's xs[i] and lax.scan read them back (steps_per_launch.cpp).
std::vector<hlo::Literal> StackBatches(const CompiledModel& program, const StepSignature& signature,
                                       const std::vector<std::vector<hlo::Literal>>& steps);

// Runs a compiled training step on one device, keeping the state between steps. The step's
// device programs stay loaded on the device (ResidentPrograms): after the first step only the
// device steps' operands go down and their results come up (docs/TRAINING.md, "Where the
// state lives"). A step compiled with device state (CompiledModel::state_tensors) keeps those
// parameters and momenta in device memory (ResidentState): written by set_state, updated by the
// step's update programs, read back only by state().
class TrainingSession {
 public:
  // `state` holds one literal per state parameter, in StepSignature::state_parameters order,
  // shaped as the parameters are (checked, naming the parameter).
  TrainingSession(std::shared_ptr<const CompiledModel> step, Device& device, std::vector<hlo::Literal> state);

  // Runs one step on `batch` (one literal per batch parameter, in order) and replaces the state
  // with the step's outputs. Throws std::runtime_error naming the device on a device failure.
  // A program of k > 1 steps per launch takes Launch instead.
  StepResult Step(const std::vector<hlo::Literal>& batch);
  // Runs one launch: steps_per_launch batches (one step of a single-step program, stacked into
  // one run of a k-step program), the state carried through them all.
  LaunchResult Launch(const std::vector<std::vector<hlo::Literal>>& steps);

  const StepSignature& signature() const { return signature_; }
  // The state now; the values kept in device memory are read back first (counted in the next
  // step's result_bytes). After a step failed, state in device memory may be partly updated:
  // reading it then, and any further step, throws std::runtime_error until set_state.
  const std::vector<hlo::Literal>& state() const;
  void set_state(std::vector<hlo::Literal> state);
  // How many state values live in device memory between steps (0 without device state).
  std::size_t device_state_values() const;

 private:
  // Runs the program on the state and `batch` (its batch parameters' values) and takes its state
  // outputs; on a failure the state stays what it was.
  RunResult Run(const std::vector<hlo::Literal>& batch);

  std::shared_ptr<const CompiledModel> step_;
  Device* device_;
  std::unique_ptr<ResidentState> device_state_;  // null when the step keeps no state on the device
  std::unique_ptr<ResidentPrograms> programs_;   // of step_ on device_
  StepSignature signature_;
  // state_[i] is stale while stale_[i]: its value is in device_state_ (read back by state()).
  mutable std::vector<hlo::Literal> state_;
  mutable std::vector<bool> stale_;
  // Why the state in device memory cannot be trusted (a step failed, or set_state did), or
  // empty: its values may be those of neither the step's start nor its end.
  std::string lost_;
  // Link bytes of state written (set_state) and read back (state()) since the last step.
  std::uint64_t pending_written_ = 0;
  mutable std::uint64_t pending_read_ = 0;
};

// Runs an evaluation program — parameters: the first K state values, then the batch
// parameters; root: one scalar metric (accuracy) — on `device` and returns that scalar.
struct Evaluation {
  double value = 0;
  RunStats stats;
};
Evaluation Evaluate(const CompiledModel& eval, Device& device, std::span<const hlo::Literal> state,
                    const std::vector<hlo::Literal>& batch);

// Checkpoints: an .npz with arr_0 = int64 [2] {steps done, device cycles so far} and arr_1 … the
// state in order (bf16 as float32, as every Systole .npz).
struct Checkpoint {
  std::uint64_t steps = 0;
  std::uint64_t device_cycles = 0;
  std::vector<hlo::Literal> state;
};
void SaveCheckpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);
// `like` gives the state's shapes and types; a checkpoint of another model (a different count or
// shape) is refused naming the file and the array.
Checkpoint LoadCheckpoint(const std::filesystem::path& path, std::span<const hlo::Literal> like);

}  // namespace systole::runtime
