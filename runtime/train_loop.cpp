#include "runtime/train_loop.hpp"

#include <fmt/core.h>

#include <chrono>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace systole::runtime {

namespace {

// A run of k steps per launch makes whole launches: refuses one from step `first` to `end` that
// would not, saying which limits would.
void CheckWholeLaunches(std::uint64_t first, std::uint64_t end, std::uint64_t steps_per_epoch,
                        std::uint64_t steps_per_launch, const TrainLoopOptions& options) {
  if (end <= first || (end - first) % steps_per_launch == 0) return;
  const std::uint64_t below = first + (end - first) / steps_per_launch * steps_per_launch;
  const std::uint64_t above = below + steps_per_launch;
  const bool by_step_limit = options.max_steps != 0 && options.max_steps < options.epochs * steps_per_epoch;
  std::string limits = below > first ? fmt::format("a step limit of {} or {}", below, above)
                                     : fmt::format("a step limit of {}", above);
  if (first % steps_per_launch == 0) {
    // Whole epochs are whole launches every epochs_multiple epochs.
    const std::uint64_t epochs_multiple = steps_per_launch / std::gcd(steps_per_epoch, steps_per_launch);
    if (epochs_multiple > 1) limits += fmt::format(", or a number of epochs that is a multiple of {}", epochs_multiple);
  }
  throw std::invalid_argument(fmt::format(
      "the program runs {} steps per launch, but this run would make {} steps (steps {} to {}: {}), not a whole "
      "number of launches; ask for {}", steps_per_launch, end - first, first + 1, end,
      by_step_limit ? fmt::format("the step limit is {}", options.max_steps)
                    : fmt::format("{} epoch{} of {} steps", options.epochs, options.epochs == 1 ? "" : "s", steps_per_epoch),
      limits));
}

}  // namespace

double CyclesToSeconds(std::uint64_t cycles, std::uint32_t clock_mhz) {
  return clock_mhz == 0 ? 0.0 : static_cast<double>(cycles) / (static_cast<double>(clock_mhz) * 1e6);
}

LaunchResult Trainer::Launch(const std::vector<std::vector<hlo::Literal>>& steps) {
  if (steps.size() != 1) {
    throw std::invalid_argument(fmt::format("{} batches for one launch of a trainer of one step per launch",
                                            steps.size()));
  }
  StepResult step = Step(steps[0]);
  return {{std::move(step.metrics)}, step.stats};
}

Evaluation DeviceTrainer::Evaluate(const std::vector<hlo::Literal>& test_batch) {
  if (eval_ == nullptr) throw std::logic_error("DeviceTrainer::Evaluate without an evaluation program");
  return runtime::Evaluate(*eval_, *device_, session_.state(), test_batch);
}

TrainSummary TrainLoop(Trainer& trainer, const Dataset& data, const TrainLoopOptions& options, bool evaluate,
                       const std::function<void(const TrainProgress&)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  const auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const auto batch = static_cast<std::size_t>(trainer.batch_size());
  const std::size_t steps_per_epoch = data.train_rows() / batch;
  if (steps_per_epoch == 0) {
    throw std::invalid_argument(fmt::format("the training set has {} rows, fewer than one batch of {}",
                                            data.train_rows(), batch));
  }
  const auto steps_per_launch = static_cast<std::size_t>(trainer.steps_per_launch());
  TrainSummary summary;
  std::uint64_t step = 0;
  if (options.resume) {
    trainer.set_state(options.resume->state);
    step = options.resume->steps;
    summary.device_cycles = options.resume->device_cycles;
  }
  std::uint64_t end = options.epochs * steps_per_epoch;
  if (options.max_steps != 0) end = std::min<std::uint64_t>(end, options.max_steps);
  CheckWholeLaunches(step, end, steps_per_epoch, steps_per_launch, options);
  const auto save = [&] {
    if (!options.checkpoint.empty()) SaveCheckpoint(options.checkpoint, {step, summary.device_cycles, trainer.state()});
  };
  // One epoch's row order at a time: a launch may reach into the next epoch.
  std::vector<std::size_t> order;
  std::size_t order_epoch = std::numeric_limits<std::size_t>::max();
  const auto rows_of = [&](std::uint64_t s) {
    const std::size_t epoch = s / steps_per_epoch;
    if (epoch != order_epoch) {
      order = EpochOrder(data.train_rows(), options.shuffle_seed, epoch);
      order_epoch = epoch;
    }
    return std::span<const std::size_t>(order.data() + (s % steps_per_epoch) * batch, batch);
  };
  // The metrics' sums over the steps of the current epoch that this run made.
  std::vector<double> sums;
  std::size_t counted = 0;
  const auto epoch_report = [&](std::size_t epoch) {
    TrainProgress report{true, step, epoch + 1, {}, std::nullopt, summary.device_cycles, since()};
    for (const double sum : sums) report.metrics.push_back(sum / static_cast<double>(counted));
    sums.clear();
    counted = 0;
    return report;
  };
  bool stop = false;
  // After a launch: evaluates, checks the target, checkpoints and reports an epoch's end (or the
  // run's, mid-epoch).
  const auto close_epoch = [&](TrainProgress& report, bool epoch_done) {
    if (evaluate) {
      report.test_accuracy = trainer.Evaluate(data.test).value;
      summary.final_test_accuracy = report.test_accuracy;
      if (epoch_done) summary.test_accuracies.push_back(*report.test_accuracy);
      if (!summary.reached_target && options.target_accuracy > 0 && *report.test_accuracy >= options.target_accuracy) {
        summary.reached_target = true;
        summary.target_steps = step;
        summary.target_cycles = summary.device_cycles;
        summary.target_wall_seconds = since();
        stop = true;
      }
    }
    if (epoch_done) ++summary.epochs;
    save();
    if (progress) progress(report);
  };
  while (!stop && step < end) {
    std::vector<std::vector<hlo::Literal>> launch(steps_per_launch);
    for (std::size_t i = 0; i < steps_per_launch; ++i) {
      const std::span<const std::size_t> rows = rows_of(step + i);
      for (const hlo::Literal& array : data.train) launch[i].push_back(GatherRows(array, rows));
    }
    LaunchResult result;
    try {
      result = trainer.Launch(launch);
    } catch (const std::exception& e) {
      const std::string steps = steps_per_launch == 1 ? fmt::format("step {}", step + 1)
                                                      : fmt::format("steps {}-{}", step + 1, step + steps_per_launch);
      throw std::runtime_error(fmt::format("training {} (epoch {}): {}", steps, step / steps_per_epoch + 1, e.what()));
    }
    summary.device_cycles += result.stats.cycles;
    AddLinkBytes(summary.link_bytes, result.stats);
    std::vector<TrainProgress> ended;  // epochs that ended in this launch, reported after it
    for (const std::vector<double>& metrics : result.step_metrics) {
      ++step;
      summary.losses.push_back(metrics.at(0));
      sums.resize(metrics.size(), 0.0);
      for (std::size_t m = 0; m < metrics.size(); ++m) sums[m] += metrics[m];
      ++counted;
      const std::size_t epoch = (step - 1) / steps_per_epoch;
      if (progress) progress({false, step, epoch + 1, metrics, std::nullopt, summary.device_cycles, since()});
      if (step % steps_per_epoch == 0) ended.push_back(epoch_report(epoch));
    }
    for (TrainProgress& report : ended) {
      report.step = step;  // the state it evaluates and saves is the launch's
      close_epoch(report, true);
    }
  }
  // Stopped by the step limit inside an epoch: report the part of it this run made.
  if (!stop && counted > 0) {
    TrainProgress report = epoch_report((step - 1) / steps_per_epoch);
    close_epoch(report, false);
  }
  summary.steps = step;
  summary.wall_seconds = since();
  return summary;
}

}  // namespace systole::runtime
