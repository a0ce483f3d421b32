// runtime/pod_processes.hpp: a pod's processes from the options, the launcher's environment and
// the network interface named.
#include "runtime/pod_processes.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace systole::runtime {

namespace {

// A process number from a launcher's environment variable: `what` says what it counts, for the
// messages ("started this process as index 2 (OMPI_COMM_WORLD_RANK=2)").
struct LauncherValue {
  std::size_t value = 0;
  std::string said;  // "mpirun started 4 processes (OMPI_COMM_WORLD_SIZE=4)"
};

std::optional<LauncherValue> ReadLauncherValue(const Environment& environment, const char* variable,
                                               const char* launcher, const char* what) {
  const char* text = environment(variable);
  if (text == nullptr) return std::nullopt;
  const char* end = text + std::strlen(text);
  std::size_t value = 0;
  const auto [stop, error] = std::from_chars(text, end, value);
  if (text == end || error != std::errc() || stop != end) {
    throw std::invalid_argument(fmt::format("{}='{}' (set by {}) is not a process number", variable, text, launcher));
  }
  return LauncherValue{value, fmt::format("{} {} ({}={})", launcher, fmt::format(fmt::runtime(what), value), variable,
                                          value)};
}

// The launchers whose environment says where this process stands in its pod, nearest first.
struct Launcher {
  const char* name;            // for the messages: "mpirun started …"
  const char* index_variable;  // this process's index
  const char* count_variable;  // the number of processes; null: this launcher says none
  const char* sets_both;       // who sets the pair, when one of it is missing
};
constexpr Launcher kOpenMpi{"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun"};
constexpr Launcher kPmix{"a PMIx launcher", "PMIX_RANK", nullptr, nullptr};
constexpr Launcher kPmi{"a PMI launcher", "PMI_RANK", "PMI_SIZE", "MPICH's mpiexec (Hydra)"};
constexpr Launcher kSlurm{"srun", "SLURM_PROCID", "SLURM_NTASKS", "Slurm's srun"};

// What one launcher's variables say.
struct Launched {
  std::optional<LauncherValue> index;
  std::optional<LauncherValue> count;
};

Launched ReadLauncher(const Environment& environment, const Launcher& launcher) {
  Launched launched{ReadLauncherValue(environment, launcher.index_variable, launcher.name,
                                      "started this process as index {}"),
                    launcher.count_variable == nullptr
                        ? std::nullopt
                        : ReadLauncherValue(environment, launcher.count_variable, launcher.name, "started {} processes")};
  if (launcher.count_variable != nullptr && launched.index.has_value() != launched.count.has_value()) {
    const char* set = launched.index ? launcher.index_variable : launcher.count_variable;
    const char* unset = launched.index ? launcher.count_variable : launcher.index_variable;
    throw std::invalid_argument(fmt::format("{} is set but {} is not: {} sets both", set, unset, launcher.sets_both));
  }
  return launched;
}

// Every launcher whose variables are set. An MPI launcher started inside a Slurm allocation
// (`mpirun` or `mpiexec` in an sbatch script) passes on the allocation's SLURM_PROCID and
// SLURM_NTASKS — those of the batch step, or of the proxy srun started on each node — which
// say nothing about this process: Slurm's are read only when no MPI launcher counted the
// processes. (srun with PMIx sets PMIX_RANK beside its own, and the two must agree.)
std::vector<Launched> ReadLaunchers(const Environment& environment) {
  std::vector<Launched> launched;
  for (const Launcher* launcher : {&kOpenMpi, &kPmix, &kPmi}) launched.push_back(ReadLauncher(environment, *launcher));
  const bool mpi_counted = launched[0].count || launched[2].count;
  if (!mpi_counted) launched.push_back(ReadLauncher(environment, kSlurm));
  return launched;
}

// The value the launchers agree on (the nearest's message), if any says one; launchers that
// disagree are an error naming both.
std::optional<LauncherValue> Agreed(const std::vector<Launched>& launched,
                                    std::optional<LauncherValue> Launched::*what) {
  std::optional<LauncherValue> agreed;
  for (const Launched& l : launched) {
    const std::optional<LauncherValue>& value = l.*what;
    if (!value) continue;
    if (agreed && agreed->value != value->value) {
      throw std::invalid_argument(fmt::format("the launcher's environment disagrees with itself: {}, but {}",
                                              agreed->said, value->said));
    }
    if (!agreed) agreed = value;
  }
  return agreed;
}

// An option's name without what joins it to its value ("--pod-index", "pod_index").
std::string Bare(std::string name) {
  while (!name.empty() && (name.back() == ' ' || name.back() == '=')) name.pop_back();
  return name;
}

// The IPv4 address of this host's network interface `name` (getifaddrs), for `said` (the option
// that named it) in errors: no such interface (listing those there are), or none of its
// addresses IPv4.
std::string InterfaceAddress(const std::string& name, const std::string& said) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    throw std::invalid_argument(fmt::format("{}{}: cannot list this host's network interfaces ({})", said, name,
                                            std::strerror(errno)));
  }
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owned(list, ::freeifaddrs);
  std::vector<std::string> names;
  bool found = false;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (std::find(names.begin(), names.end(), i->ifa_name) == names.end()) names.emplace_back(i->ifa_name);
    if (name != i->ifa_name) continue;
    found = true;
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (::inet_ntop(AF_INET, &ipv4->sin_addr, text, sizeof text) != nullptr) return text;
  }
  if (!found) {
    std::string all;
    for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
    throw std::invalid_argument(fmt::format("{}{}: this host has no network interface of that name (it has: {})",
                                            said, name, all));
  }
  throw std::invalid_argument(fmt::format("{}{}: the interface has no IPv4 address", said, name));
}

}  // namespace

PodProcesses ResolvePodProcesses(const PodProcessOptions& options, bool pod, const PodOptionNames& names,
                                 const Environment& environment) {
  Environment get = environment;
  if (!get) get = [](const char* name) -> const char* { return std::getenv(name); };
  const std::vector<Launched> launched = ReadLaunchers(get);
  const std::optional<LauncherValue> launched_index = Agreed(launched, &Launched::index);
  const std::optional<LauncherValue> launched_count = Agreed(launched, &Launched::count);
  if (launched_count && launched_count->value == 0) {
    throw std::invalid_argument(fmt::format("{}: no process count", launched_count->said));
  }
  if (launched_index && launched_count && launched_index->value >= launched_count->value) {
    throw std::invalid_argument(fmt::format("{}, but {}", launched_index->said, launched_count->said));
  }
  const auto agree = [](const std::optional<std::size_t>& given, const std::string& name,
                        const std::optional<LauncherValue>& launched) {
    if (given && launched && *given != launched->value) {
      throw std::invalid_argument(fmt::format("{}{}, but {}: under a launcher leave {} out, or give the same value",
                                              name, *given, launched->said, Bare(name)));
    }
  };
  agree(options.count, names.count, launched_count);
  agree(options.index, names.index, launched_index);

  PodProcesses processes;
  processes.rendezvous = options.rendezvous;
  if (!options.address.empty() && !options.interface.empty()) {
    throw std::invalid_argument(fmt::format("{}{} and {}{}: give one of them", names.address, options.address,
                                            names.interface, options.interface));
  }
  processes.address = !options.interface.empty() ? InterfaceAddress(options.interface, names.interface)
                       : !options.address.empty() ? options.address
                                                  : "127.0.0.1";
  processes.count = options.count ? *options.count : launched_count ? launched_count->value : 1;
  processes.index = options.index ? *options.index : launched_index ? launched_index->value : 0;
  // What set each value, for the messages below.
  const std::string count_said = options.count    ? fmt::format("{}{}", names.count, *options.count)
                                 : launched_count ? launched_count->said
                                                  : std::string();
  const std::string index_said = options.index    ? fmt::format("{}{}", names.index, *options.index)
                                 : launched_index ? launched_index->said
                                                  : std::string();
  if (processes.count == 0) throw std::invalid_argument(fmt::format("{}: a pod needs a process at least", count_said));
  if (processes.index >= processes.count) {
    if (count_said.empty()) {
      throw std::invalid_argument(fmt::format("{}, but nothing says how many processes the pod has: give {}N",
                                              index_said, names.count));
    }
    throw std::invalid_argument(fmt::format("{}, but {}: the index is 0 … {}", index_said, count_said,
                                            processes.count - 1));
  }
  if (processes.count > 1 && !pod) {
    throw std::invalid_argument(fmt::format("{}: a pod across processes trains with {}, not one training step",
                                            count_said, names.programs));
  }
  if (processes.count > 1 && processes.rendezvous.empty()) {
    throw std::invalid_argument(fmt::format("{}: a pod across processes needs {}DIR, a new, empty directory all "
                                            "of them reach", count_said, names.rendezvous));
  }
  return processes;
}

}  // namespace systole::runtime
