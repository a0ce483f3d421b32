#include "runtime/pod.hpp"

#include <fmt/core.h>
#include <gloo/allgather.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/transport/tcp/device.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace systole::runtime {

namespace {

constexpr std::chrono::seconds kGlooTimeout{120};

std::runtime_error ProgramError(const CompiledModel& model, const std::string& message) {
  return std::runtime_error(fmt::format("{}: {}", model.source_name, message));
}

}  // namespace

StepSignature PodSignature(const CompiledModel& grad, const CompiledModel& apply) {
  StepSignature signature;
  const std::size_t gradients =
      apply.module->entry->Parameters().size() - apply.module->input_output_aliases.size();
  for (std::size_t p = gradients; p < grad.module->entry->Parameters().size(); ++p) {
    signature.batch_parameters.push_back(p);
  }
  for (const hlo::InputOutputAlias& alias : apply.module->input_output_aliases) {
    signature.state_parameters.push_back(static_cast<std::size_t>(alias.parameter));
  }
  return signature;
}

Pod::Pod(PodPrograms programs, std::vector<Device*> devices, std::vector<std::string> names, std::size_t shards,
         std::vector<hlo::Literal> state, PodLink link, std::uint32_t clock_mhz, PodProcesses processes)
    : programs_(std::move(programs)), devices_(std::move(devices)), names_(std::move(names)), shards_(shards),
      link_(link), clock_mhz_(clock_mhz) {
  if (devices_.empty()) throw std::invalid_argument("a pod needs at least one device");
  if (names_.size() != devices_.size()) throw std::invalid_argument("a pod needs one name per device");
  if (processes.count == 0 || processes.index >= processes.count) {
    throw std::invalid_argument(fmt::format("process {} of a pod of {} processes: the index must be 0 … {}",
                                            processes.index, processes.count, processes.count - 1));
  }
  if (processes.count > 1 && processes.rendezvous.empty()) {
    throw std::invalid_argument("a pod of several processes needs a rendezvous directory they all reach");
  }
  world_ = devices_.size() * processes.count;
  first_rank_ = devices_.size() * processes.index;
  if (shards_ == 0 || shards_ % world_ != 0) {
    throw std::invalid_argument(fmt::format("{} shards do not divide among {} devices (a multiple of the device "
                                            "count is needed)", shards_, world_));
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

  // One Gloo rank per device over the TCP transport; the ranks find each other in a store held
  // in this process, or, across processes, in the rendezvous directory, where connectFullMesh
  // writes each rank's address (a FileStore is not safe to share between threads: each local
  // rank opens its own on the one directory).
  std::shared_ptr<gloo::rendezvous::HashStore> shared_store;
  if (processes.count == 1) {
    shared_store = std::make_shared<gloo::rendezvous::HashStore>();
  } else {
    const std::filesystem::path directory(processes.rendezvous);
    std::filesystem::create_directories(directory);
    // Gloo names its entries by a hash of the key, so each process leaves a marker of its own:
    // finding it already there means the directory is an earlier pod's, whose addresses are
    // stale (connecting to them would wait out the timeout).
    const std::filesystem::path marker = directory / fmt::format("systole-process-{}", processes.index);
    const int fd = ::open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) {
      throw std::runtime_error(fmt::format("rendezvous directory {}: {} ({}): give each pod a new, empty directory",
                                           directory.string(), marker.filename().string(),
                                           errno == EEXIST ? "left by an earlier pod" : std::strerror(errno)));
    }
    ::close(fd);
    // Gloo writes to its peers' sockets without MSG_NOSIGNAL: when another process of the pod
    // dies, the write would raise SIGPIPE and end this process without a word. Ignored, the
    // write fails and the exchange throws, naming the device (and the training loop the step).
    std::signal(SIGPIPE, SIG_IGN);
  }
  contexts_.resize(devices_.size());
  peers_.resize(devices_.size());
  OnEveryDevice("connecting the pod (Gloo)", [&](std::size_t local) {
    gloo::transport::tcp::attr attr(processes.address.c_str());
    auto transport = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(static_cast<int>(first_rank_ + local),
                                                               static_cast<int>(world_));
    context->setTimeout(kGlooTimeout);
    if (shared_store != nullptr) {
      context->connectFullMesh(*shared_store, transport);
    } else {
      gloo::rendezvous::FileStore store(processes.rendezvous);
      context->connectFullMesh(store, transport);
    }
    contexts_[local] = std::move(context);
    ShareWhoIsWho(local);
  });
}

// Gloo's TCP pairs (Debian's 2022 Gloo) each have an address of their own, which a peer that
// connected to it names in its errors ("Connection closed by peer [127.0.0.1]:36025"). Every
// rank sends the others its device's name and its pairs' addresses, so that an exchange that
// fails can say which device, in which process, it lost. Only where this end connected: where
// it accepted, Gloo names the peer's ephemeral port, which nothing here knows, and the error is
// Gloo's alone (mpirun then names the process it lost).
void Pod::ShareWhoIsWho(std::size_t local) {
  constexpr std::size_t kSlot = 256;  // characters per name or address, longer ones cut
  const std::size_t record = (1 + world_) * kSlot;
  std::vector<char> mine(record, '\0'), all(world_ * record);
  const auto put = [&](std::size_t slot, const std::string& text) {
    text.copy(mine.data() + slot * kSlot, kSlot - 1);
  };
  put(0, names_[local]);
  const int rank = static_cast<int>(first_rank_ + local);
  for (std::size_t peer = 0; peer < world_; ++peer) {
    if (static_cast<int>(peer) != rank) put(1 + peer, contexts_[local]->getPair(static_cast<int>(peer))->address().str());
  }
  gloo::AllgatherOptions options(contexts_[local]);
  options.setInput(mine.data(), mine.size());
  options.setOutput(all.data(), all.size());
  gloo::allgather(options);
  std::vector<Peer>& peers = peers_[local];
  for (std::size_t peer = 0; peer < world_; ++peer) {
    const char* from = all.data() + peer * record;
    peers.push_back({std::string(from), std::string(from + (1 + static_cast<std::size_t>(rank)) * kSlot)});
  }
}

void Pod::Exchange(std::size_t local, gloo::AllgatherOptions& options) const {
  try {
    gloo::allgather(options);
  } catch (const std::exception& e) {
    const std::string error = e.what();
    for (std::size_t rank = 0; rank < world_; ++rank) {
      const Peer& peer = peers_[local][rank];
      if (rank == first_rank_ + local || peer.address.empty() || error.find(peer.address) == std::string::npos) continue;
      throw std::runtime_error(fmt::format("lost device {} ({}) in process {}: {}", rank, peer.name,
                                           rank / devices_.size(), error));
    }
    throw;
  }
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
  for (std::size_t local = 0; local < devices_.size(); ++local) {
    if (!errors[local]) continue;
    try {
      std::rethrow_exception(errors[local]);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("device {} ({}): {}: {}", first_rank_ + local, names_[local], what,
                                           e.what()));
    }
  }
}

StepResult Pod::Step(const std::vector<hlo::Literal>& batch) {
  const std::size_t locals = devices_.size();
  const std::size_t per_rank = shards_ / world_;
  const std::size_t slot = gradient_elements_ + metric_count_;  // one shard's floats
  std::vector<std::vector<float>> sent(locals, std::vector<float>(per_rank * slot));
  std::vector<std::vector<float>> gathered(locals, std::vector<float>(world_ * per_rank * slot));
  std::vector<RunStats> stats(locals);

  // 1. Each device: the gradients of its shards k = rank, rank + N, … (N: the pod's devices).
  OnEveryDevice("gradients", [&](std::size_t local) {
    for (std::size_t j = 0; j < per_rank; ++j) {
      const std::size_t shard = first_rank_ + local + j * world_;
      std::vector<hlo::Literal> arguments(replicas_[local].begin(),
                                          replicas_[local].begin() + static_cast<std::ptrdiff_t>(gradient_count_));
      for (const hlo::Literal& array : batch) {
        arguments.push_back(SliceRows(array, shard * static_cast<std::size_t>(shard_rows_),
                                      static_cast<std::size_t>(shard_rows_)));
      }
      const RunResult run = Execute(*programs_.grad, *devices_[local], arguments, {}, resident_grad_[local].get());
      float* out = sent[local].data() + j * slot;
      for (const hlo::Literal& element : run.result.elements) {
        for (const double v : element.values) *out++ = static_cast<float>(v);
      }
      stats[local].cycles += run.stats.cycles;
      stats[local].macs += run.stats.macs;
      stats[local].mxu_busy += run.stats.mxu_busy;
      AddLinkBytes(stats[local], run.stats);
    }
  });

  // 2. Gloo allgather; every rank sums the shards in shard order and averages.
  std::vector<std::vector<float>> sums(locals, std::vector<float>(slot, 0.0f));
  OnEveryDevice("gradient exchange (Gloo allgather)", [&](std::size_t local) {
    gloo::AllgatherOptions options(contexts_[local]);
    options.setInput(sent[local].data(), sent[local].size());
    options.setOutput(gathered[local].data(), gathered[local].size());
    Exchange(local, options);
    std::vector<float>& sum = sums[local];
    for (std::size_t shard = 0; shard < shards_; ++shard) {
      const float* values = gathered[local].data() + ((shard % world_) * per_rank + shard / world_) * slot;
      for (std::size_t i = 0; i < slot; ++i) sum[i] += values[i];
    }
    const float scale = 1.0f / static_cast<float>(shards_);
    for (float& v : sum) v *= scale;
  });

  // 3. Each device: the update of its replica.
  const CompiledModel& apply = *programs_.apply;
  const hlo::Shape& grad_root = programs_.grad->module->entry->root->shape;
  OnEveryDevice("update", [&](std::size_t local) {
    std::vector<hlo::Literal> arguments = replicas_[local];
    const float* values = sums[local].data();
    for (std::size_t i = 0; i < gradient_count_; ++i) {
      hlo::Literal gradient(grad_root.tuple[i]);
      for (double& v : gradient.values) v = static_cast<double>(*values++);
      arguments.push_back(std::move(gradient));
    }
    const RunResult run = Execute(apply, *devices_[local], arguments, {}, resident_apply_[local].get());
    for (const hlo::InputOutputAlias& alias : apply.module->input_output_aliases) {
      replicas_[local][static_cast<std::size_t>(alias.parameter)] =
          run.result.elements.at(static_cast<std::size_t>(alias.output_index.at(0)));
    }
    stats[local].cycles += run.stats.cycles;
    stats[local].macs += run.stats.macs;
    stats[local].mxu_busy += run.stats.mxu_busy;
    AddLinkBytes(stats[local], run.stats);
  });

  // 4. Every rank's counters, gathered like the gradients, so that each process reports the
  // whole pod's cost.
  constexpr std::size_t kCounters = 6;
  std::vector<std::vector<std::uint64_t>> counters(locals), all_counters(locals);
  for (std::size_t local = 0; local < locals; ++local) {
    const RunStats& s = stats[local];
    counters[local] = {s.cycles, s.macs, s.mxu_busy, s.program_bytes, s.operand_bytes, s.result_bytes};
    all_counters[local].resize(world_ * kCounters);
  }
  OnEveryDevice("exchanging the step's counters (Gloo allgather)", [&](std::size_t local) {
    gloo::AllgatherOptions options(contexts_[local]);
    options.setInput(counters[local].data(), counters[local].size());
    options.setOutput(all_counters[local].data(), all_counters[local].size());
    Exchange(local, options);
  });

  // Ring allgather over the modelled link: N - 1 rounds, each passing one rank's shards on.
  const double bytes_per_rank = static_cast<double>(per_rank * slot * sizeof(float));
  const double seconds = static_cast<double>(world_ - 1) * (link_.latency_us * 1e-6 + bytes_per_rank * 8 / (link_.gbps * 1e9));
  timing_.exchange_cycles = static_cast<std::uint64_t>(seconds * static_cast<double>(clock_mhz_) * 1e6 + 0.5);
  timing_.device_cycles.assign(world_, 0);
  StepResult result;
  for (std::size_t rank = 0; rank < world_; ++rank) {
    const std::uint64_t* c = all_counters[0].data() + rank * kCounters;
    timing_.device_cycles[rank] = c[0];
    result.stats.macs += c[1];
    result.stats.mxu_busy += c[2];
    result.stats.program_bytes += c[3];
    result.stats.operand_bytes += c[4];
    result.stats.result_bytes += c[5];
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
