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

// A pod that spans several processes (docs/TRAINING.md, "Pods across processes"): each process
// drives its own devices, the same number in every process, and the processes meet through a
// directory they all reach (Gloo's FileStore), then exchange gradients over Gloo's TCP
// transport. Process p's K devices are ranks p·K … p·K + K − 1 of the pod. The default is a
// pod of this process's devices alone.
struct PodProcesses {
  std::size_t count = 1;  // processes in the pod
  std::size_t index = 0;  // this one, 0 … count − 1
  // A new, empty directory for this pod's rendezvous (needed when count > 1): each rank writes
  // its address there, each process a marker; a directory that already holds this process's
  // marker is an earlier pod's, and is refused (its addresses are stale).
  std::string rendezvous;
  std::string address = "127.0.0.1";  // the address this process's ranks listen on
  // With count > 1 the pod ignores SIGPIPE for the whole process (pod.cpp says why).
};

// What a front end was given for a pod across processes (`systole train --pod-processes …`,
// `systole.Trainer(pod_processes=…)`); unset: not given.
struct PodProcessOptions {
  std::optional<std::size_t> count;
  std::optional<std::size_t> index;
  std::string rendezvous;
  std::string address;    // the address its ranks listen on; empty: not given
  std::string interface;  // or the network interface whose IPv4 address they listen on
};

// How a front end spells those options in errors, each with what joins it to its value:
// "--pod-index " + "2" for the command, "pod_index=" + "2" for Python.
struct PodOptionNames {
  std::string count = "--pod-processes ";
  std::string index = "--pod-index ";
  std::string rendezvous = "--pod-rendezvous ";
  std::string programs = "--grad and --apply";  // what makes a pod instead of one training step
  std::string address = "--pod-address ";
  std::string interface = "--pod-interface ";
};

// Reads one environment variable (null: unset); empty: std::getenv. Tests pass a table.
using Environment = std::function<const char*(const char*)>;

// The processes of a pod from a front end's options and the environment of the launcher that
// started this process, if any — the one rule `systole train` and Python both follow
// (docs/TRAINING.md, "Pods across processes"):
//   - mpirun (Open MPI) gives the index and the count: OMPI_COMM_WORLD_RANK and
//     OMPI_COMM_WORLD_SIZE; MPICH's mpiexec (Hydra, or another PMI launcher) PMI_RANK and
//     PMI_SIZE; Slurm's srun SLURM_PROCID and SLURM_NTASKS; a PMIx launcher the index alone as
//     PMIX_RANK (Open MPI and srun with PMIx set it too). Every launcher's variables that are
//     set must agree with the others', or the error names both — except Slurm's under an MPI
//     launcher that counts the processes (Open MPI's or a PMI one), which are the enclosing
//     allocation's and are not read. A variable that is not a process number is an error
//     naming it and its value. The options may then be left out; given, they must agree with
//     the launcher, or the error names both values.
//   - A launcher that names the index but not the count (PMIx alone) needs the count option
//     for any index but 0.
//   - Without a launcher the options say it all; by default a pod of this process alone.
//   - Several processes need a rendezvous directory, and the index must be below the count.
//   - `pod` false (one training step, not a pod's programs): several processes are refused.
//   - The ranks listen on the address given, or on the IPv4 address this host's interface of
//     the name given has (the same option on every host reads each host's own address, as
//     mpirun across hosts needs), else on 127.0.0.1; not both.
// Throws std::invalid_argument naming the options (by `names`) and the variables.
PodProcesses ResolvePodProcesses(const PodProcessOptions& options, bool pod, const PodOptionNames& names = {},
                                 const Environment& environment = {});

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
