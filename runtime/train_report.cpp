// The training loop's reports in words: one line per epoch and the summary, shared by
// `systole train` and the Python front end (systole.Trainer) so that both print the same.
#include <fmt/core.h>

#include "runtime/train_loop.hpp"

namespace systole::runtime {

namespace {

std::string Percent(std::optional<double> value) {
  return value ? fmt::format("{:.2f}%", 100.0 * *value) : std::string("-");
}

}  // namespace

std::string EpochLine(const TrainProgress& p) {
  return fmt::format("epoch {:>3}  step {:>6}  loss {:.4f}  train accuracy {}  test accuracy {}  device cycles {}  "
                     "wall {:.1f} s", p.epoch, p.step, p.metrics.empty() ? 0.0 : p.metrics[0],
                     Percent(p.metrics.size() > 1 ? std::optional(p.metrics[1]) : std::nullopt),
                     Percent(p.test_accuracy), p.device_cycles, p.wall_seconds);
}

std::string SummaryText(const TrainSummary& summary, std::uint32_t clock_mhz, double target_accuracy) {
  std::string text = fmt::format("{} steps, final test accuracy {}; device {} cycles = {:.4f} s at {} MHz; wall "
                                 "{:.1f} s\n", summary.steps, Percent(summary.final_test_accuracy),
                                 summary.device_cycles, CyclesToSeconds(summary.device_cycles, clock_mhz), clock_mhz,
                                 summary.wall_seconds);
  if (target_accuracy > 0) {
    if (summary.reached_target) {
      text += fmt::format("time to {:.1f}% test accuracy: {} steps, {} device cycles = {:.4f} s at {} MHz, wall "
                          "{:.1f} s\n", 100.0 * target_accuracy, summary.target_steps, summary.target_cycles,
                          CyclesToSeconds(summary.target_cycles, clock_mhz), clock_mhz, summary.target_wall_seconds);
    } else {
      text += fmt::format("the target of {:.1f}% test accuracy was not reached\n", 100.0 * target_accuracy);
    }
  }
  return text;
}

}  // namespace systole::runtime
