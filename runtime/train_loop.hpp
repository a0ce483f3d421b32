// runtime/ — the training loop: epochs of shuffled batches through a Trainer (one device, or a
// pod of several), evaluation after each epoch, checkpoints with resume, and the time to a
// target accuracy in device cycles, seconds at the configuration's clock and wall time — the
// MLPerf training metric in miniature (docs/TRAINING.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/training.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::runtime {

// What the loop drives: a single TrainingSession, or a Pod (pod.hpp).
class Trainer {
 public:
  virtual ~Trainer() = default;
  // One step on a global batch (one literal per batch parameter, batch_size() rows each).
  virtual StepResult Step(const std::vector<hlo::Literal>& batch) = 0;
  virtual std::int64_t batch_size() const = 0;
  // Consecutive steps one launch runs (StepSignature::steps_per_launch); TrainLoop hands Launch
  // this many batches at a time.
  virtual std::int64_t steps_per_launch() const { return 1; }
  // One launch of steps_per_launch() steps, one batch each; one Step unless overridden.
  virtual LaunchResult Launch(const std::vector<std::vector<hlo::Literal>>& steps);
  // The state all devices agree on (a pod's replicas are identical).
  virtual const std::vector<hlo::Literal>& state() const = 0;
  virtual void set_state(std::vector<hlo::Literal> state) = 0;
  // Test-set accuracy of the current state (the evaluation program on the first device).
  virtual Evaluation Evaluate(const std::vector<hlo::Literal>& test_batch) = 0;
};

// One device: a TrainingSession and, optionally, an evaluation program run on the same device.
class DeviceTrainer : public Trainer {
 public:
  DeviceTrainer(std::shared_ptr<const CompiledModel> step, std::shared_ptr<const CompiledModel> eval, Device& device,
                std::vector<hlo::Literal> state)
      : session_(std::move(step), device, std::move(state)), eval_(std::move(eval)), device_(&device) {}
  StepResult Step(const std::vector<hlo::Literal>& batch) override { return session_.Step(batch); }
  std::int64_t batch_size() const override { return session_.signature().batch_size; }
  std::int64_t steps_per_launch() const override { return session_.signature().steps_per_launch; }
  LaunchResult Launch(const std::vector<std::vector<hlo::Literal>>& steps) override { return session_.Launch(steps); }
  const std::vector<hlo::Literal>& state() const override { return session_.state(); }
  void set_state(std::vector<hlo::Literal> state) override { session_.set_state(std::move(state)); }
  Evaluation Evaluate(const std::vector<hlo::Literal>& test_batch) override;

 private:
  TrainingSession session_;
  std::shared_ptr<const CompiledModel> eval_;
  Device* device_;
};

// The data set: training and test arrays, rows along dimension 0, one literal per batch
// parameter each (x, y), typed as the step's batch parameters.
struct Dataset {
  std::vector<hlo::Literal> train;
  std::vector<hlo::Literal> test;
  std::size_t train_rows() const { return train.empty() ? 0 : static_cast<std::size_t>(train[0].shape.dims[0]); }
};

// Where arrays came from, for errors: an .npz file (its arrays are arr_0, arr_1, …) or arrays
// in memory that the caller names (the Python front end's: "array 0", "array 1", …).
struct ArraySource {
  std::string name;
  bool npz = false;
  std::string Element(std::size_t index) const;
};

// DATA.npz: arr_0 … arr_{2n-1} = the n training arrays, then the n test arrays of a step with
// n batch parameters, each shaped like its parameter after the row dimension and rounded to its
// element type (train_data.cpp).
Dataset ReadDataset(const std::filesystem::path& file, const CompiledModel& step, const StepSignature& signature);
// The same from arrays in memory, in the same order.
Dataset DatasetFromArrays(const std::vector<npy::Array>& arrays, const ArraySource& source, const CompiledModel& step,
                          const StepSignature& signature);
// INIT.npz: one array per state parameter, in StepSignature::state_parameters order.
std::vector<hlo::Literal> ReadInitialState(const std::filesystem::path& file, const CompiledModel& step,
                                           const StepSignature& signature);
std::vector<hlo::Literal> InitialStateFromArrays(const std::vector<npy::Array>& arrays, const ArraySource& source,
                                                 const CompiledModel& step, const StepSignature& signature);

struct TrainLoopOptions {
  std::size_t epochs = 30;
  double target_accuracy = 0;      // stop when the test accuracy reaches it (0: run all epochs)
  std::uint64_t shuffle_seed = 17;  // EpochOrder's seed
  std::uint64_t max_steps = 0;      // stop after this many steps in total (0: no limit)
  std::filesystem::path checkpoint;  // written after every epoch and at the end ("" = none)
  std::optional<Checkpoint> resume;  // start from here
  std::uint32_t clock_mhz = 0;       // the configuration's clock, for seconds
};

// Progress after every step and every epoch.
struct TrainProgress {
  bool epoch_end = false;
  std::uint64_t step = 0;          // steps done in total (including those before a resume)
  std::size_t epoch = 0;           // 1-based epoch the step belongs to
  std::vector<double> metrics;     // the step's metrics (loss, accuracy, …); epoch end: the epoch's means
  std::optional<double> test_accuracy;  // epoch end, with an evaluation program
  std::uint64_t device_cycles = 0;  // training steps' device cycles so far (including before a resume)
  double wall_seconds = 0;          // since this run started
};

struct TrainSummary {
  std::uint64_t steps = 0;
  std::size_t epochs = 0;
  std::vector<double> losses;           // every step this run made, in order
  std::vector<double> test_accuracies;  // after each epoch this run finished
  std::optional<double> final_test_accuracy;
  std::uint64_t device_cycles = 0;
  RunStats link_bytes;  // the training steps' program, operand and result bytes (this run only)
  double wall_seconds = 0;
  // When the target accuracy was first reached (after an epoch): steps, cycles, wall seconds.
  bool reached_target = false;
  std::uint64_t target_steps = 0, target_cycles = 0;
  double target_wall_seconds = 0;
};

// Runs epochs of EpochOrder-shuffled batches (the last partial batch dropped) from
// options.resume, evaluating the test set after each epoch when `evaluate` is set.
//
// A trainer of k steps per launch takes the same batches in the same order, k at a time, so a
// launch may run the end of one epoch and the start of the next. Every step's loss is reported
// (the step reports of a launch come after it, with the device cycles counted up to its end);
// an epoch that ends inside a launch is reported, evaluated and checkpointed after that launch,
// at the step it ended at. A run makes whole launches only: one whose steps (to the step limit
// or the end of the last epoch) are not a multiple of k is refused before it starts, with the
// limits that would be.
TrainSummary TrainLoop(Trainer& trainer, const Dataset& data, const TrainLoopOptions& options, bool evaluate,
                       const std::function<void(const TrainProgress&)>& progress = {});

// Seconds `cycles` take at `clock_mhz` (0 when the clock is unknown).
double CyclesToSeconds(std::uint64_t cycles, std::uint32_t clock_mhz);

// The reports `systole train` prints and the Python front end shows (train_report.cpp), so
// both read alike. An epoch's line: mean loss and train accuracy of its steps, test accuracy,
// device cycles so far, wall time.
std::string EpochLine(const TrainProgress& progress);
// The summary after the run: steps, final test accuracy, device cycles and seconds at
// `clock_mhz`, wall time, and with a target (> 0) the time to it or that it was not reached.
std::string SummaryText(const TrainSummary& summary, std::uint32_t clock_mhz, double target_accuracy);

}  // namespace systole::runtime
