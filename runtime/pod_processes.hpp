// runtime/ — where this process stands in a pod that spans several processes
// (docs/TRAINING.md, "Pods across processes"): the options a front end was given, the
// environment of the launcher that started it (Open MPI, MPICH, PMIx, Slurm), and the address
// its ranks listen on. pod.hpp's Pod takes the result.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace systole::runtime {

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

}  // namespace systole::runtime
