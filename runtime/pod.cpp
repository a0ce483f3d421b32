#include "runtime/pod.hpp"

#include <fmt/core.h>
#include <gloo/allgather.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace systole::runtime {

namespace {

constexpr std::chrono::seconds kGlooTimeout{120};

std::runtime_error ProgramError(const CompiledModel& model, const std::string& message) {
  return std::runtime_error(fmt::format("{}: {}", model.source_name, message));
}

}  // namespace

Pod::Pod(PodPrograms programs, std::vector<Device*> devices, std::vector<std::string> names, std::size_t shards,
         std::vector<hlo::Literal> state, PodLink link, std::uint32_t clock_mhz)
    : programs_(std::move(programs)), devices_(std::move(devices)), names_(std::move(names)), shards_(shards),
      link_(link), clock_mhz_(clock_mhz) {
  if (devices_.empty()) throw std::invalid_argument("a pod needs at least one device");
  if (names_.size() != devices_.size()) throw std::invalid_argument("a pod needs one name per device");
  if (shards_ == 0 || shards_ % devices_.size() != 0) {
    throw std::invalid_argument(fmt::format("{} shards do not divide among {} devices (a multiple of the device "
                                            "count is needed)", shards_, devices_.size()));
  }
  const CompiledModel& grad = *programs_.grad;
  const CompiledModel& apply = *programs_.apply;
  const auto apply_parameters = apply.module->entry->Parameters();
  gradient_count_ = apply_parameters.size() - apply.module->input_output_aliases.size();
  const auto grad_parameters = grad.module->entry->Parameters();
  const hlo::Shape& grad_root = grad.module->entry->root->shape;
  if (!grad_root.IsTuple() || grad_root.tuple.size() <= gradient_count_ || grad_parameters.size() <= gradient_count_) {
    throw ProgramError(grad, fmt::format("a gradient program takes the {} parameters and a batch and returns their "
                                         "gradients, then the loss", gradient_count_));
  }
  for (std::size_t i = 0; i < gradient_count_; ++i) {
    if (!grad_root.tuple[i].SameAs(grad_parameters[i]->shape) ||
        !apply_parameters[apply_parameters.size() - gradient_count_ + i]->shape.SameAs(grad_root.tuple[i])) {
      throw ProgramError(grad, fmt::format("gradient {} is {}; the parameter is {} and {} takes {}", i,
                                           grad_root.tuple[i].ToString(), grad_parameters[i]->shape.ToString(),
                                           apply.source_name,
                                           apply_parameters[apply_parameters.size() - gradient_count_ + i]->shape.ToString()));
    }
    gradient_elements_ += static_cast<std::size_t>(grad_root.tuple[i].Elements());
  }
  metric_count_ = grad_root.tuple.size() - gradient_count_;
  shard_rows_ = grad_parameters[gradient_count_]->shape.dims.at(0);
  set_state(std::move(state));
  for (Device* device : devices_) {
    resident_grad_.push_back(std::make_unique<ResidentPrograms>(grad, *device));
    resident_apply_.push_back(std::make_unique<ResidentPrograms>(apply, *device));
  }

  // One Gloo rank per device, all in this process, over the TCP transport on loopback.
  auto store = std::make_shared<gloo::rendezvous::HashStore>();
  contexts_.resize(devices_.size());
  OnEveryDevice("connecting the pod (Gloo)", [&](std::size_t rank) {
    gloo::transport::tcp::attr attr("127.0.0.1");
    auto transport = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(static_cast<int>(rank),
                                                               static_cast<int>(devices_.size()));
    context->setTimeout(kGlooTimeout);
    context->connectFullMesh(*store, transport);
    contexts_[rank] = std::move(context);
  });
}

Pod::~Pod() = default;

void Pod::set_state(std::vector<hlo::Literal> state) {
  const auto parameters = programs_.apply->module->entry->Parameters();
  const std::size_t state_count = parameters.size() - gradient_count_;
  if (state.size() != state_count) {
    throw std::invalid_argument(fmt::format("{}: {} state values given, it takes {}", programs_.apply->source_name,
                                            state.size(), state_count));
  }
  for (std::size_t i = 0; i < state.size(); ++i) {
    if (!state[i].shape.SameAs(parameters[i]->shape)) {
      throw std::invalid_argument(fmt::format("state value {} is {}, parameter {} ('{}') of {} is {}", i,
                                              state[i].shape.ToString(), i, parameters[i]->name,
                                              programs_.apply->source_name, parameters[i]->shape.ToString()));
    }
  }
  replicas_.assign(devices_.size(), state);
}

void Pod::OnEveryDevice(const std::string& what, const std::function<void(std::size_t)>& work) {
  std::vector<std::exception_ptr> errors(devices_.size());
  std::vector<std::thread> threads;
  for (std::size_t rank = 0; rank < devices_.size(); ++rank) {
    threads.emplace_back([&, rank] {
      try {
        work(rank);
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (std::size_t rank = 0; rank < devices_.size(); ++rank) {
    if (!errors[rank]) continue;
    try {
      std::rethrow_exception(errors[rank]);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("device {} ({}): {}: {}", rank, names_[rank], what, e.what()));
    }
  }
}

StepResult Pod::Step(const std::vector<hlo::Literal>& batch) {
  const std::size_t ranks = devices_.size();
  const std::size_t per_rank = shards_ / ranks;
  const std::size_t slot = gradient_elements_ + metric_count_;  // one shard's floats
  std::vector<std::vector<float>> sent(ranks, std::vector<float>(per_rank * slot));
  std::vector<std::vector<float>> gathered(ranks, std::vector<float>(ranks * per_rank * slot));
  timing_.device_cycles.assign(ranks, 0);
  std::vector<RunStats> stats(ranks);

  // 1. Each device: the gradients of its shards k = rank, rank + N, …
  OnEveryDevice("gradients", [&](std::size_t rank) {
    for (std::size_t j = 0; j < per_rank; ++j) {
      const std::size_t shard = rank + j * ranks;
      std::vector<hlo::Literal> arguments(replicas_[rank].begin(),
                                          replicas_[rank].begin() + static_cast<std::ptrdiff_t>(gradient_count_));
      for (const hlo::Literal& array : batch) {
        arguments.push_back(SliceRows(array, shard * static_cast<std::size_t>(shard_rows_),
                                      static_cast<std::size_t>(shard_rows_)));
      }
      const RunResult run = Execute(*programs_.grad, *devices_[rank], arguments, {}, resident_grad_[rank].get());
      float* out = sent[rank].data() + j * slot;
      for (const hlo::Literal& element : run.result.elements) {
        for (const double v : element.values) *out++ = static_cast<float>(v);
      }
      stats[rank].cycles += run.stats.cycles;
      stats[rank].macs += run.stats.macs;
      stats[rank].mxu_busy += run.stats.mxu_busy;
      AddLinkBytes(stats[rank], run.stats);
    }
  });

  // 2. Gloo allgather; every rank sums the shards in shard order and averages.
  std::vector<std::vector<float>> sums(ranks, std::vector<float>(slot, 0.0f));
  OnEveryDevice("gradient exchange (Gloo allgather)", [&](std::size_t rank) {
    gloo::AllgatherOptions options(contexts_[rank]);
    options.setInput(sent[rank].data(), sent[rank].size());
    options.setOutput(gathered[rank].data(), gathered[rank].size());
    gloo::allgather(options);
    std::vector<float>& sum = sums[rank];
    for (std::size_t shard = 0; shard < shards_; ++shard) {
      const float* values = gathered[rank].data() + ((shard % ranks) * per_rank + shard / ranks) * slot;
      for (std::size_t i = 0; i < slot; ++i) sum[i] += values[i];
    }
    const float scale = 1.0f / static_cast<float>(shards_);
    for (float& v : sum) v *= scale;
  });

  // 3. Each device: the update of its replica.
  const CompiledModel& apply = *programs_.apply;
  const hlo::Shape& grad_root = programs_.grad->module->entry->root->shape;
  OnEveryDevice("update", [&](std::size_t rank) {
    std::vector<hlo::Literal> arguments = replicas_[rank];
    const float* values = sums[rank].data();
    for (std::size_t i = 0; i < gradient_count_; ++i) {
      hlo::Literal gradient(grad_root.tuple[i]);
      for (double& v : gradient.values) v = static_cast<double>(*values++);
      arguments.push_back(std::move(gradient));
    }
    const RunResult run = Execute(apply, *devices_[rank], arguments, {}, resident_apply_[rank].get());
    for (const hlo::InputOutputAlias& alias : apply.module->input_output_aliases) {
      replicas_[rank][static_cast<std::size_t>(alias.parameter)] =
          run.result.elements.at(static_cast<std::size_t>(alias.output_index.at(0)));
    }
    stats[rank].cycles += run.stats.cycles;
    stats[rank].macs += run.stats.macs;
    stats[rank].mxu_busy += run.stats.mxu_busy;
    AddLinkBytes(stats[rank], run.stats);
  });

  // Ring allgather over the modelled link: N - 1 rounds, each passing one rank's shards on.
  const double bytes_per_rank = static_cast<double>(per_rank * slot * sizeof(float));
  const double seconds = static_cast<double>(ranks - 1) * (link_.latency_us * 1e-6 + bytes_per_rank * 8 / (link_.gbps * 1e9));
  timing_.exchange_cycles = static_cast<std::uint64_t>(seconds * static_cast<double>(clock_mhz_) * 1e6 + 0.5);
  StepResult result;
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    timing_.device_cycles[rank] = stats[rank].cycles;
    result.stats.macs += stats[rank].macs;
    result.stats.mxu_busy += stats[rank].mxu_busy;
    AddLinkBytes(result.stats, stats[rank]);
  }
  result.stats.cycles = *std::max_element(timing_.device_cycles.begin(), timing_.device_cycles.end()) +
                        timing_.exchange_cycles;
  for (std::size_t m = 0; m < metric_count_; ++m) result.metrics.push_back(sums[0][gradient_elements_ + m]);
  return result;
}

Evaluation Pod::Evaluate(const std::vector<hlo::Literal>& test_batch) {
  if (programs_.eval == nullptr) throw std::logic_error("Pod::Evaluate without an evaluation program");
  return runtime::Evaluate(*programs_.eval, *devices_[0], replicas_[0], test_batch);
}

}  // namespace systole::runtime
