// runtime/ — a pod: N devices training one model data-parallel (docs/TRAINING.md "Pods").
//
// Each step's global batch is cut into `shards` micro-batches of the gradient program's batch
// size; shard k runs on device k mod N. The shards' gradients are exchanged through Gloo (an
// allgather over its TCP transport, one rank per device) and every rank sums them in shard
// order 0, 1, …, shards−1 and divides by `shards`, so the sum is the same on every device and
// for every N: a pod of N devices is bit-identical to one device running the same shards one
// after the other. (Gloo's own allreduce would sum in an order that depends on N and on the
// chunk, which is why the ranks sum themselves after gathering.) Every device then runs the
// update program on its replica of the state. Each device keeps the gradient and update
// programs loaded between steps; the replicas live on the host, as the exchange needs the
// gradients there and the f32 update runs there.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/pod_processes.hpp"
#include "runtime/train_loop.hpp"

namespace gloo {
class AllgatherOptions;
namespace rendezvous {
class Context;
}
}  // namespace gloo

namespace systole::runtime {

// The link the pod's exchange is modelled over (the simulation has no real network between
// devices): `gbps` per direction, `latency_us` per message.
struct PodLink {
  double gbps = 100;
  double latency_us = 1;
};

struct PodPrograms {
  // grad(params…, batch…) -> (gradients…, loss, metrics…): parameters the first P state values,
  // outputs P gradients shaped like them, then scalars.
  std::shared_ptr<const CompiledModel> grad;
  // apply(state…, gradients…) -> state…, the state donated (input_output_alias).
  std::shared_ptr<const CompiledModel> apply;
  std::shared_ptr<const CompiledModel> eval;  // may be null
};

// What the last step cost.
struct PodStepTiming {
  std::vector<std::uint64_t> device_cycles;  // per device of the pod (by rank): its shards and the update
  std::uint64_t exchange_cycles = 0;         // the modelled allgather, at the configuration's clock
};

// How a pod's data and initial state are laid out, as ReadDataset and ReadInitialState take
// them: the batch parameters are the gradient program's after the parameters (as many as the
// gradients the update takes), the state parameters the update program's donated ones (the
// initial state is then read against the update program).
StepSignature PodSignature(const CompiledModel& grad, const CompiledModel& apply);

class Pod : public Trainer {
 public:
  // `devices` (at least one; `names` says what each is, for errors) must outlive the pod;
  // `shards` must be a multiple of the pod's device count (all processes together). Connects
  // the Gloo ranks: on loopback in this process, or with the other processes of `processes`
  // (waiting for them up to the Gloo timeout, 120 s).
  Pod(PodPrograms programs, std::vector<Device*> devices, std::vector<std::string> names, std::size_t shards,
      std::vector<hlo::Literal> state, PodLink link, std::uint32_t clock_mhz, PodProcesses processes = {});
  ~Pod() override;

  StepResult Step(const std::vector<hlo::Literal>& batch) override;
  std::int64_t batch_size() const override { return shard_rows_ * static_cast<std::int64_t>(shards_); }
  const std::vector<hlo::Literal>& state() const override { return replicas_.at(0); }
  void set_state(std::vector<hlo::Literal> state) override;
  Evaluation Evaluate(const std::vector<hlo::Literal>& test_batch) override;

  // The state each of this process's devices holds (identical after every step; tests compare
  // them).
  const std::vector<std::vector<hlo::Literal>>& replicas() const { return replicas_; }
  // Devices in the pod, all processes together.
  std::size_t world() const { return world_; }
  const PodStepTiming& last_timing() const { return timing_; }

 private:
  // Runs `work(local)` on one thread per device of this process; the first failure is rethrown
  // naming the device and its rank.
  void OnEveryDevice(const std::string& what, const std::function<void(std::size_t)>& work);

  // Sends every rank this device's name and its Gloo addresses (pod.cpp says why).
  void ShareWhoIsWho(std::size_t local);
  // gloo::allgather for local device `local`; an error that names a peer's address is rethrown
  // naming that peer's device and process.
  void Exchange(std::size_t local, gloo::AllgatherOptions& options) const;

  // Another rank as one local device sees it: its device's name, and the address of its end of
  // their connection.
  struct Peer {
    std::string name;
    std::string address;
  };

  PodPrograms programs_;
  std::vector<Device*> devices_;  // this process's: local device i is rank first_rank_ + i
  std::vector<std::string> names_;
  std::size_t world_ = 0;
  std::size_t first_rank_ = 0;
  std::size_t shards_;
  std::int64_t shard_rows_ = 0;
  std::size_t gradient_count_ = 0;      // P
  std::size_t gradient_elements_ = 0;   // all gradients' elements together
  std::size_t metric_count_ = 0;
  std::vector<std::vector<hlo::Literal>> replicas_;
  // Per device: the gradient and update programs, loaded once (ResidentPrograms).
  std::vector<std::unique_ptr<ResidentPrograms>> resident_grad_, resident_apply_;
  PodLink link_;
  std::uint32_t clock_mhz_;
  PodStepTiming timing_;
  std::vector<std::shared_ptr<gloo::rendezvous::Context>> contexts_;
  std::vector<std::vector<Peer>> peers_;  // per local device, by rank
};

}  // namespace systole::runtime
