#include "runtime/train_loop.hpp"

#include <fmt/core.h>

#include <chrono>
#include <stdexcept>

namespace systole::runtime {

double CyclesToSeconds(std::uint64_t cycles, std::uint32_t clock_mhz) {
  return clock_mhz == 0 ? 0.0 : static_cast<double>(cycles) / (static_cast<double>(clock_mhz) * 1e6);
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
  TrainSummary summary;
  std::uint64_t step = 0;
  if (options.resume) {
    trainer.set_state(options.resume->state);
    step = options.resume->steps;
    summary.device_cycles = options.resume->device_cycles;
  }
  const auto save = [&] {
    if (!options.checkpoint.empty()) SaveCheckpoint(options.checkpoint, {step, summary.device_cycles, trainer.state()});
  };
  bool stop = false;
  for (std::size_t epoch = step / steps_per_epoch; epoch < options.epochs && !stop; ++epoch) {
    const std::vector<std::size_t> order = EpochOrder(data.train_rows(), options.shuffle_seed, epoch);
    std::vector<double> sums;
    std::size_t counted = 0;
    for (std::size_t b = step % steps_per_epoch; b < steps_per_epoch; ++b) {
      if (options.max_steps != 0 && step >= options.max_steps) {
        stop = true;
        break;
      }
      const std::span<const std::size_t> rows(order.data() + b * batch, batch);
      std::vector<hlo::Literal> inputs;
      for (const hlo::Literal& array : data.train) inputs.push_back(GatherRows(array, rows));
      StepResult result;
      try {
        result = trainer.Step(inputs);
      } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("training step {} (epoch {}): {}", step + 1, epoch + 1, e.what()));
      }
      ++step;
      summary.device_cycles += result.stats.cycles;
      AddLinkBytes(summary.link_bytes, result.stats);
      summary.losses.push_back(result.metrics.at(0));
      sums.resize(result.metrics.size(), 0.0);
      for (std::size_t m = 0; m < result.metrics.size(); ++m) sums[m] += result.metrics[m];
      ++counted;
      if (progress) progress({false, step, epoch + 1, result.metrics, std::nullopt, summary.device_cycles, since()});
    }
    if (counted == 0) break;
    const bool epoch_done = step % steps_per_epoch == 0;
    TrainProgress report{true, step, epoch + 1, {}, std::nullopt, summary.device_cycles, since()};
    for (const double sum : sums) report.metrics.push_back(sum / static_cast<double>(counted));
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
  }
  summary.steps = step;
  summary.wall_seconds = since();
  return summary;
}

}  // namespace systole::runtime
