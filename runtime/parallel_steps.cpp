#include "runtime/parallel_steps.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

namespace systole::runtime {
namespace {

using Clock = std::chrono::steady_clock;
double ElapsedSeconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

std::string StepName(const compiler::DeviceStep& step) {
  return fmt::format("'{}' ({})", step.covers.back(), step.kernel);
}

// What one job's device gave for one step.
struct StepOutcome {
  Counters counters;
  std::unique_ptr<trace::Timeline> timeline;  // this step alone, when recording
};

// The first difference between what the device gave and what the golden model gave, or nothing.
std::optional<std::string> Difference(const std::vector<std::uint8_t>& got, const Counters& got_counters,
                                      const DeviceStepRecord& expected) {
  if (got.size() != expected.output.size()) {
    return fmt::format("its output is {} bytes, the golden model's {}", got.size(), expected.output.size());
  }
  const auto [at, expected_at] = std::mismatch(got.begin(), got.end(), expected.output.begin());
  if (at != got.end()) {
    return fmt::format("output byte {} of {} is 0x{:02x}, the golden model's 0x{:02x}", at - got.begin(), got.size(),
                       *at, *expected_at);
  }
  for (std::string_view name : kFunctionalCounters) {
    if (got_counters[name] != expected.counters[name]) {
      return fmt::format("counter {} is {}, the golden model's {}", name, got_counters[name], expected.counters[name]);
    }
  }
  return std::nullopt;
}

class ParallelRun {
 public:
  ParallelRun(const CompiledModel& model, const Config& config, const ParallelOptions& options,
              const std::vector<DeviceStepRecord>& reference)
      : model_(model), config_(config), options_(options), reference_(reference), steps_(model.DeviceSteps()) {
    if (steps_.size() != reference.size()) {
      throw std::logic_error(fmt::format("{}: the golden model ran {} device steps of {}", model.source_name,
                                         reference.size(), steps_.size()));
    }
    outcomes_.resize(steps_.size());
    // Longest first (by the golden model's estimate), so that no job is left with a long step
    // at the end while the others wait.
    order_.resize(steps_.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
      return reference[a].counters["CYCLES"] > reference[b].counters["CYCLES"];
    });
  }

  void Run() {
    if (steps_.empty()) return;  // a model that runs on the host alone opens no device
    const unsigned jobs = std::max(1u, std::min<unsigned>(options_.jobs, static_cast<unsigned>(steps_.size())));
    std::vector<std::thread> threads;
    for (unsigned j = 0; j < jobs; ++j) threads.emplace_back([this] { Job(); });
    std::size_t reported = 0;
    std::unique_lock lock(mutex_);
    while (finished_ + failed_ < threads.size()) {
      changed_.wait(lock);
      for (; options_.progress && reported < done_.size(); ++reported) {
        const std::size_t index = done_[reported];
        options_.progress(fmt::format("{} step {}/{} done ({} of {}): {}, {} cycles", options_.uri, index + 1,
                                      steps_.size(), reported + 1, steps_.size(), StepName(*steps_[index]),
                                      outcomes_[index].counters["CYCLES"]));
      }
    }
    lock.unlock();
    for (std::thread& thread : threads) thread.join();
    if (error_) std::rethrow_exception(error_);
  }

  const std::vector<StepOutcome>& outcomes() const { return outcomes_; }

 private:
  // One job: steps taken from the shared order until none is left or a job failed, each on a
  // device opened for it. Which job takes which step depends on how fast the others go; a
  // device of its own makes each step's cycles independent of that (and of the number of
  // jobs): every run counts the same.
  void Job() {
    try {
      for (;;) {
        const std::size_t next = next_.fetch_add(1);
        if (next >= order_.size() || stop_.load()) break;
        const std::size_t index = order_[next];
        Device device = Device::Open(options_.uri, config_);
        outcomes_[index] = RunStep(device, index);
        const std::lock_guard guard(mutex_);
        done_.push_back(index);
        changed_.notify_all();
      }
      const std::lock_guard guard(mutex_);
      ++finished_;
      changed_.notify_all();
    } catch (...) {
      stop_ = true;
      const std::lock_guard guard(mutex_);
      if (!error_) error_ = std::current_exception();
      ++failed_;
      changed_.notify_all();
    }
  }

  StepOutcome RunStep(Device& device, std::size_t index) {
    const compiler::DeviceStep& step = *steps_[index];
    const DeviceStepRecord& expected = reference_[index];
    StepOutcome outcome;
    if (options_.timeline != nullptr) {
      outcome.timeline = std::make_unique<trace::Timeline>(config_, options_.uri);
      device.Record(outcome.timeline.get());
    }
    systole::Program program = device.Load(step.program);
    DeviceStepResult ran = RunLoadedStep(device, program, step, expected.inputs, model_.source_name, options_.uri, &stop_);
    if (outcome.timeline) device.Record(nullptr);
    outcome.counters = std::move(ran.counters);
    if (const std::optional<std::string> difference = Difference(ran.output, outcome.counters, expected)) {
      throw std::runtime_error(fmt::format("{}: device step {} (step {} of {}) differs on {} from the golden model: {}",
                                           model_.source_name, StepName(step), index + 1, steps_.size(),
                                           options_.uri, *difference));
    }
    return outcome;
  }

  const CompiledModel& model_;
  const Config& config_;
  const ParallelOptions& options_;
  const std::vector<DeviceStepRecord>& reference_;
  std::vector<const compiler::DeviceStep*> steps_;
  std::vector<std::size_t> order_;
  std::vector<StepOutcome> outcomes_;  // by step index; each written by the one job that ran it

  std::atomic<std::size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;  // guards what follows
  std::condition_variable changed_;
  std::vector<std::size_t> done_;  // steps finished, in the order they finished
  std::size_t finished_ = 0, failed_ = 0;
  std::exception_ptr error_;
};

// A loop's device steps run once per iteration, so a run's records are not one per device step
// and cannot be replayed side by side as they are.
void RefuseControlSteps(const CompiledModel& model) {
  if (!model.state_tensors.empty()) {
    // A replayed step would find its bound state tensors empty on the other device.
    throw std::runtime_error(fmt::format("{}: keeps training state in device memory; side-by-side jobs replay each "
                                         "device step alone and do not take such a model: run it without --jobs",
                                         model.source_name));
  }
  if (!model.HasControlSteps()) return;
  throw std::runtime_error(fmt::format("{}: its loops or conditionals run device steps (systole compile lists them); "
                                       "side-by-side jobs replay each device step once and do not take such a model "
                                       "yet: run it without --jobs",
                                       model.source_name));
}

}  // namespace

std::vector<Counters> ReplayDeviceSteps(const CompiledModel& model, const Config& config,
                                        const std::vector<DeviceStepRecord>& reference,
                                        const ParallelOptions& options) {
  RefuseControlSteps(model);
  if (options.jobs == 0) throw std::invalid_argument("the number of parallel jobs must be at least 1");
  if (options.timeline != nullptr && options.timeline->config().name != config.name) {
    throw std::invalid_argument(fmt::format("the timeline is for configuration '{}', the model runs on '{}'",
                                            options.timeline->config().name, config.name));
  }
  ParallelRun run(model, config, options, reference);
  run.Run();
  std::vector<Counters> counters;
  for (const StepOutcome& outcome : run.outcomes()) {
    counters.push_back(outcome.counters);
    if (options.timeline != nullptr) options.timeline->Append(*outcome.timeline);
  }
  return counters;
}

RunResult ExecuteParallel(const CompiledModel& model, const Config& config,
                          const std::vector<hlo::Literal>& arguments, const ParallelOptions& options) {
  RefuseControlSteps(model);
  std::vector<DeviceStepRecord> reference;
  RunResult result;
  {
    Device golden = Device::Open("ref", config);
    const auto progress = options.progress ? [&options](const std::string& message) {
      options.progress("golden model: " + message);
    } : std::function<void(const std::string&)>();
    result = Execute(model, golden, arguments, progress, nullptr, &reference);
  }
  const auto start = Clock::now();
  const std::vector<Counters> counters = ReplayDeviceSteps(model, config, reference, options);

  // The device's timing in place of the golden model's estimate. What crossed the link is the
  // same as on the golden model: each step loads its own program, writes the same inputs and
  // reads the same output (as in Execute).
  RunStats& stats = result.stats;
  stats.cycles = stats.mxu_busy = stats.macs = 0;
  for (const Counters& step : counters) {
    stats.cycles += step["CYCLES"];
    stats.mxu_busy += step["MXU_BUSY"];
    stats.macs += step["MACS"];
  }
  stats.device_seconds = ElapsedSeconds(start);
  return result;
}

}  // namespace systole::runtime
