// Pods (runtime/pod.hpp): data-parallel training on several devices through Gloo is
// bit-identical to one device running the same shards, on `ref` and over tcp:// to device
// servers; a server that dies mid-training stops the run naming the device and the step, and
// the last checkpoint resumes.
#include <fmt/core.h>
#include <gmock/gmock.h>

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <unistd.h>

#include "systole/server.hpp"
#include "runtime/pod.hpp"
#include "tests/training/training_test_util.hpp"

namespace systole::runtime {
namespace {

constexpr std::size_t kShards = 8;  // 8 micro-batches of 4 rows: the single-device batch of 32

// A model's SGD pod programs (`model`: "mlp" or "cnn", examples/training), the data and the
// initial state, and the devices at `uris`.
struct PodFixture {
  explicit PodFixture(const std::vector<std::string>& uris, const std::string& model = "mlp")
      : programs{testing::CompileFixture(model + "_grad.hlo"), testing::CompileFixture(model + "_sgd_apply.hlo"),
                 nullptr},
        data(testing::LoadDataset(*testing::CompileFixture(model + "_sgd_step.hlo"))),
        state(testing::LoadState(model + "_sgd")) {
    for (const std::string& uri : uris) devices.push_back(Device::Open(uri, LoadConfig("small")));
    for (Device& device : devices) pointers.push_back(&device);
  }
  PodPrograms programs;
  Dataset data;
  std::vector<hlo::Literal> state;
  std::vector<Device> devices;
  std::vector<Device*> pointers;
};

// Trains `steps` steps of `model` on `uris` and returns the pod's state (checking every replica
// agrees).
std::vector<hlo::Literal> TrainOn(const std::vector<std::string>& uris, std::uint64_t steps,
                                  const std::string& model = "mlp") {
  PodFixture f(uris, model);
  Pod pod(f.programs, f.pointers, uris, kShards, f.state, PodLink{}, LoadConfig("small").clock_mhz);
  TrainLoopOptions options;
  options.max_steps = steps;
  TrainLoop(pod, f.data, options, false);
  for (const auto& replica : pod.replicas()) {
    for (std::size_t i = 0; i < replica.size(); ++i) EXPECT_EQ(replica[i].values, pod.state()[i].values);
  }
  return pod.state();
}

void ExpectBitIdentical(const std::vector<hlo::Literal>& a, const std::vector<hlo::Literal>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].values, b[i].values) << "state value " << i;
}

TEST(Pod, AnyDeviceCountIsBitIdenticalToOneDevice) {
  const auto one = TrainOn({"ref"}, 3);
  ExpectBitIdentical(TrainOn({"ref", "ref"}, 3), one);
  ExpectBitIdentical(TrainOn({"ref", "ref", "ref", "ref"}, 3), one);
  ExpectBitIdentical(TrainOn(std::vector<std::string>(8, "ref"), 3), one);
}

// Every device keeps the gradient and update programs loaded: only the first step loads
// programs; later steps move the same operand and result bytes as the first.
TEST(Pod, LoadsItsProgramsOnceOnEveryDevice) {
  const std::vector<std::string> uris{"ref", "ref"};
  PodFixture f(uris);
  Pod pod(f.programs, f.pointers, uris, kShards, f.state, PodLink{}, LoadConfig("small").clock_mhz);
  const std::vector<std::size_t> order = EpochOrder(f.data.train_rows(), 17, 0);
  std::vector<RunStats> steps;
  for (std::size_t s = 0; s < 3; ++s) {
    std::vector<hlo::Literal> batch;
    const auto rows = std::span(order).subspan(s * static_cast<std::size_t>(pod.batch_size()),
                                               static_cast<std::size_t>(pod.batch_size()));
    for (const hlo::Literal& array : f.data.train) batch.push_back(GatherRows(array, rows));
    steps.push_back(pod.Step(batch).stats);
  }
  EXPECT_GT(steps[0].program_bytes, 0u);
  for (std::size_t s = 1; s < steps.size(); ++s) {
    EXPECT_EQ(steps[s].program_bytes, 0u) << "step " << s + 1;
    EXPECT_EQ(steps[s].operand_bytes, steps[0].operand_bytes) << "step " << s + 1;
    EXPECT_EQ(steps[s].result_bytes, steps[0].result_bytes) << "step " << s + 1;
  }
}

// And close to the fused step on the same global batch (one dot over all 32 rows instead of
// 8 sums of 4: a different fp32 accumulation order).
void ExpectFollowsTheFusedStep(const std::string& model, double tolerance) {
  const auto pod = TrainOn({"ref", "ref"}, 3, model);
  const auto step = testing::CompileFixture(model + "_sgd_step.hlo");
  Device device = Device::Open("ref", LoadConfig("small"));
  DeviceTrainer fused(step, nullptr, device, testing::LoadState(model + "_sgd"));
  TrainLoopOptions options;
  options.max_steps = 3;
  TrainLoop(fused, testing::LoadDataset(*step), options, false);
  for (std::size_t i = 0; i < pod.size(); ++i) {
    EXPECT_LE(testing::RelativeError(pod[i].values, fused.state()[i].values), tolerance) << "state value " << i;
  }
}

TEST(Pod, FollowsTheFusedStepOnTheSameBatches) { ExpectFollowsTheFusedStep("mlp", 1e-5); }

// The CNN cut in two (cnn_grad.hlo, cnn_sgd_apply.hlo: the pod scaling table's larger model) is
// the CNN's training step: 2 and 4 devices give one device's state bit for bit, and it follows
// the fused cnn_sgd_step.hlo.
TEST(Pod, ACnnPodIsBitIdenticalToOneDeviceAndFollowsTheFusedStep) {
  const auto one = TrainOn({"ref"}, 2, "cnn");
  ExpectBitIdentical(TrainOn({"ref", "ref"}, 2, "cnn"), one);
  ExpectBitIdentical(TrainOn({"ref", "ref", "ref", "ref"}, 2, "cnn"), one);
  ExpectFollowsTheFusedStep("cnn", 1e-5);
}

// `query`: URI options, e.g. a short reply timeout where a server is to die (a stopped server
// leaves its connections open, so the client notices when its reply timeout passes).
std::vector<std::unique_ptr<DeviceServer>> StartServers(std::size_t count, std::vector<std::string>& uris,
                                                        const std::string& query = "") {
  std::vector<std::unique_ptr<DeviceServer>> servers;
  uris.clear();
  for (std::size_t i = 0; i < count; ++i) {
    ServerOptions options;
    options.port = 0;
    servers.push_back(std::make_unique<DeviceServer>(OpenRefLink(LoadConfig("small")), options));
    uris.push_back("tcp://" + servers.back()->endpoint() + query);
  }
  return servers;
}

TEST(Pod, FourDeviceServersOverTcpAreBitIdenticalToOneDevice) {
  std::vector<std::string> uris;
  const auto servers = StartServers(4, uris);
  ExpectBitIdentical(TrainOn(uris, 3), TrainOn({"ref"}, 3));
}

TEST(Pod, AServerKilledMidTrainingStopsTheRunNamingDeviceAndStepAndTheCheckpointResumes) {
  const auto checkpoint = std::filesystem::path(::testing::TempDir()) / ("pod_fault_" + std::to_string(::getpid()) + ".npz");
  std::vector<std::string> uris;
  auto servers = StartServers(4, uris, "?timeout_ms=2000");
  PodFixture f(uris);
  Pod pod(f.programs, f.pointers, uris, kShards, f.state, PodLink{}, LoadConfig("small").clock_mhz);
  TrainLoopOptions options;
  options.max_steps = 2;
  options.checkpoint = checkpoint;
  TrainLoop(pod, f.data, options, false);  // steps 1-2, checkpoint after step 2

  options.max_steps = 5;
  options.checkpoint.clear();
  options.resume = LoadCheckpoint(checkpoint, pod.state());
  const auto kill_after_step_3 = [&](const TrainProgress& p) {
    if (!p.epoch_end && p.step == 3) servers[2]->Stop();
  };
  EXPECT_THAT([&] { TrainLoop(pod, f.data, options, false, kill_after_step_3); },
              ::testing::ThrowsMessage<std::runtime_error>(::testing::AllOf(
                  ::testing::HasSubstr("training step 4 (epoch 1)"),
                  ::testing::HasSubstr("device 2 (" + uris[2] + ")"))));

  // Resuming from the checkpoint on the single ref device gives the run that never failed.
  PodFixture g({"ref"});
  Pod resumed(g.programs, g.pointers, {"ref"}, kShards, g.state, PodLink{}, LoadConfig("small").clock_mhz);
  options.max_steps = 5;
  TrainLoop(resumed, g.data, options, false);
  ExpectBitIdentical(resumed.state(), TrainOn({"ref"}, 5));
}

// ResolvePodProcesses on a launcher's environment given as a table (mpirun's variables are read,
// never set, here: tests/training/pod_mpirun_test.sh runs the real launcher).
struct Launched {
  std::map<std::string, std::string> variables;
  PodProcesses Resolve(const PodProcessOptions& options, bool pod = true) const {
    return ResolvePodProcesses(options, pod, {}, [this](const char* name) -> const char* {
      const auto it = variables.find(name);
      return it == variables.end() ? nullptr : it->second.c_str();
    });
  }
};

const Launched kNoLauncher{};
const Launched kMpirunRank2Of4{{{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"PMIX_RANK", "2"}}};

PodProcessOptions Given(std::optional<std::size_t> count, std::optional<std::size_t> index,
                        std::string rendezvous = "/shared/rv") {
  return {count, index, std::move(rendezvous), "", ""};
}

void ExpectRefused(const Launched& launched, const PodProcessOptions& options, const std::string& message,
                   bool pod = true) {
  EXPECT_THAT([&] { launched.Resolve(options, pod); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr(message)));
}

TEST(PodProcesses, ComeFromTheOptionsWithoutALauncher) {
  const PodProcesses alone = kNoLauncher.Resolve(Given(std::nullopt, std::nullopt, ""));
  EXPECT_EQ(alone.count, 1U);
  EXPECT_EQ(alone.index, 0U);
  const PodProcesses given = kNoLauncher.Resolve(Given(4, 3));
  EXPECT_EQ(given.count, 4U);
  EXPECT_EQ(given.index, 3U);
  EXPECT_EQ(given.rendezvous, "/shared/rv");
  ExpectRefused(kNoLauncher, Given(2, 2), "--pod-index 2, but --pod-processes 2: the index is 0 … 1");
  ExpectRefused(kNoLauncher, Given(std::nullopt, 1), "--pod-index 1, but nothing says how many processes");
  ExpectRefused(kNoLauncher, Given(2, 0, ""), "--pod-processes 2: a pod across processes needs --pod-rendezvous DIR");
  ExpectRefused(kNoLauncher, Given(2, 0), "--pod-processes 2: a pod across processes trains with --grad and --apply",
                false);
}

TEST(PodProcesses, ComeFromMpirunWhenItLaunchedTheProcess) {
  const PodProcesses launched = kMpirunRank2Of4.Resolve(Given(std::nullopt, std::nullopt));
  EXPECT_EQ(launched.count, 4U);
  EXPECT_EQ(launched.index, 2U);
  // Options that agree are taken; options that disagree are an error naming both values.
  EXPECT_EQ(kMpirunRank2Of4.Resolve(Given(4, 2)).index, 2U);
  ExpectRefused(kMpirunRank2Of4, Given(std::nullopt, 1),
                "--pod-index 1, but mpirun started this process as index 2 (OMPI_COMM_WORLD_RANK=2): under a launcher "
                "leave --pod-index out, or give the same value");
  ExpectRefused(kMpirunRank2Of4, Given(8, std::nullopt),
                "--pod-processes 8, but mpirun started 4 processes (OMPI_COMM_WORLD_SIZE=4)");
  ExpectRefused(kMpirunRank2Of4, Given(std::nullopt, std::nullopt, ""),
                "mpirun started 4 processes (OMPI_COMM_WORLD_SIZE=4): a pod across processes needs --pod-rendezvous "
                "DIR, a new, empty directory all of them reach");
  ExpectRefused(kMpirunRank2Of4, Given(std::nullopt, std::nullopt),
                "mpirun started 4 processes (OMPI_COMM_WORLD_SIZE=4): a pod across processes trains with --grad and "
                "--apply", false);
  // mpirun -n 1: a pod of this process alone, no rendezvous needed.
  const Launched one{{{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}}};
  EXPECT_EQ(one.Resolve(Given(std::nullopt, std::nullopt, ""), false).count, 1U);
}

TEST(PodProcesses, APmixRankAloneNeedsTheCount) {
  const Launched pmix{{{"PMIX_RANK", "3"}}};
  const PodProcesses given = pmix.Resolve(Given(4, std::nullopt));
  EXPECT_EQ(given.index, 3U);
  ExpectRefused(pmix, Given(std::nullopt, std::nullopt),
                "a PMIx launcher started this process as index 3 (PMIX_RANK=3), but nothing says how many processes "
                "the pod has: give --pod-processes N");
  ExpectRefused(pmix, Given(4, 1), "--pod-index 1, but a PMIx launcher started this process as index 3 (PMIX_RANK=3)");
}

TEST(PodProcesses, ALauncherEnvironmentThatMakesNoSenseIsRefused) {
  ExpectRefused({{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMIX_RANK", "0"}}}, Given({}, {}),
                "the launcher's environment disagrees with itself: mpirun started this process as index 1 "
                "(OMPI_COMM_WORLD_RANK=1), but a PMIx launcher started this process as index 0 (PMIX_RANK=0)");
  ExpectRefused({{{"OMPI_COMM_WORLD_RANK", "x1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}}, Given({}, {}),
                "OMPI_COMM_WORLD_RANK='x1' (set by mpirun) is not a process number");
  ExpectRefused({{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "-2"}}}, Given({}, {}),
                "OMPI_COMM_WORLD_SIZE='-2' (set by mpirun) is not a process number");
  ExpectRefused({{{"OMPI_COMM_WORLD_RANK", "1"}}}, Given({}, {}),
                "OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is not");
  ExpectRefused({{{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}}}, Given({}, {}),
                "mpirun started this process as index 2 (OMPI_COMM_WORLD_RANK=2), but mpirun started 2 processes");
}

// A launcher that sets an index and a count variable, as MPICH's mpiexec and Slurm's srun do.
struct PairedLauncher {
  std::string index_variable, count_variable;
  std::string said;       // how the messages name it
  std::string sets_both;  // who the message says sets both
};

TEST(PodProcesses, ComeFromMpichsHydraOrSlurmsSrunWhenOneLaunchedTheProcess) {
  for (const PairedLauncher& l : {PairedLauncher{"PMI_RANK", "PMI_SIZE", "a PMI launcher", "MPICH's mpiexec (Hydra)"},
                                  PairedLauncher{"SLURM_PROCID", "SLURM_NTASKS", "srun", "Slurm's srun"}}) {
    SCOPED_TRACE(l.index_variable);
    const Launched launcher{{{l.index_variable, "1"}, {l.count_variable, "3"}}};
    const PodProcesses launched = launcher.Resolve(Given(std::nullopt, std::nullopt));
    EXPECT_EQ(launched.count, 3U);
    EXPECT_EQ(launched.index, 1U);
    EXPECT_EQ(launcher.Resolve(Given(3, 1)).index, 1U);
    ExpectRefused(launcher, Given(std::nullopt, 0),
                  fmt::format("--pod-index 0, but {} started this process as index 1 ({}=1): under a launcher leave "
                              "--pod-index out, or give the same value", l.said, l.index_variable));
    ExpectRefused(launcher, Given(4, std::nullopt),
                  fmt::format("--pod-processes 4, but {} started 3 processes ({}=3)", l.said, l.count_variable));
    ExpectRefused({{{l.index_variable, "1"}}}, Given({}, {}),
                  fmt::format("{} is set but {} is not: {} sets both", l.index_variable, l.count_variable, l.sets_both));
    ExpectRefused({{{l.index_variable, "-1"}, {l.count_variable, "3"}}}, Given({}, {}),
                  fmt::format("{}='-1' (set by {}) is not a process number", l.index_variable, l.said));
    ExpectRefused({{{l.index_variable, "1"}, {l.count_variable, "three"}}}, Given({}, {}),
                  fmt::format("{}='three' (set by {}) is not a process number", l.count_variable, l.said));
    ExpectRefused({{{l.index_variable, "3"}, {l.count_variable, "3"}}}, Given({}, {}),
                  fmt::format("{0} started this process as index 3 ({1}=3), but {0} started 3 processes", l.said,
                              l.index_variable));
  }
}

TEST(PodProcesses, SrunWithPmixSetsTheSameIndexTwice) {
  // srun with PMIx sets PMIX_RANK too: the same index is taken, another is an error naming both.
  EXPECT_EQ(Launched({{{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"PMIX_RANK", "2"}}})
                .Resolve(Given(std::nullopt, std::nullopt))
                .index,
            2U);
  ExpectRefused({{{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"PMIX_RANK", "1"}}}, Given({}, {}),
                "the launcher's environment disagrees with itself: a PMIx launcher started this process as index 1 "
                "(PMIX_RANK=1), but srun started this process as index 2 (SLURM_PROCID=2)");
}

TEST(PodProcesses, LaunchersThatDisagreeAreRefusedNamingBoth) {
  ExpectRefused({{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMI_RANK", "1"}, {"PMI_SIZE", "3"}}},
                Given({}, {}),
                "the launcher's environment disagrees with itself: mpirun started 2 processes (OMPI_COMM_WORLD_SIZE=2), "
                "but a PMI launcher started 3 processes (PMI_SIZE=3)");
  ExpectRefused({{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}},
                Given({}, {}),
                "mpirun started this process as index 1 (OMPI_COMM_WORLD_RANK=1), but a PMI launcher started this "
                "process as index 0 (PMI_RANK=0)");
}

TEST(PodProcesses, AnMpiLauncherInsideASlurmAllocationIsTheOneThatCounts) {
  // mpirun or mpiexec in an sbatch script: every process inherits the batch step's (or its
  // node's proxy's) SLURM_PROCID, which is not its own index.
  for (const auto& [rank, size] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                   std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    const Launched nested{{{rank, "3"}, {size, "4"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "16"}}};
    const PodProcesses launched = nested.Resolve(Given(std::nullopt, std::nullopt));
    EXPECT_EQ(launched.index, 3U) << rank;
    EXPECT_EQ(launched.count, 4U) << rank;
  }
}

// Across hosts every process gets the same command line (mpirun), so a fixed --pod-address
// cannot be each host's own; --pod-interface names an interface whose address each process
// reads on its own host.
TEST(PodProcesses, ListenOnTheAddressGivenOrThatOfTheInterfaceNamed) {
  PodProcessOptions options = Given(2, 0);
  EXPECT_EQ(kNoLauncher.Resolve(options).address, "127.0.0.1");  // neither: loopback
  options.address = "10.1.2.3";
  EXPECT_EQ(kNoLauncher.Resolve(options).address, "10.1.2.3");
  options.interface = "lo";
  ExpectRefused(kNoLauncher, options, "--pod-address 10.1.2.3 and --pod-interface lo: give one of them");
  options.address.clear();
  EXPECT_EQ(kNoLauncher.Resolve(options).address, "127.0.0.1");
  options.interface = "nosuch0";
  ExpectRefused(kNoLauncher, options,
                "--pod-interface nosuch0: this host has no network interface of that name (it has: lo");
}

TEST(PodProcesses, PythonsKeywordsNameThemselves) {
  const PodOptionNames keywords{"pod_processes=", "pod_index=", "pod_rendezvous=", "grad= and apply="};
  EXPECT_THAT(
      [&] {
        ResolvePodProcesses(Given(std::nullopt, 0), true, keywords, [](const char* name) -> const char* {
          return std::string_view(name) == "OMPI_COMM_WORLD_RANK" ? "1"
                 : std::string_view(name) == "OMPI_COMM_WORLD_SIZE" ? "2"
                                                                    : nullptr;
        });
      },
      ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr(
          "pod_index=0, but mpirun started this process as index 1 (OMPI_COMM_WORLD_RANK=1): under a launcher leave "
          "pod_index out, or give the same value")));
}

}  // namespace
}  // namespace systole::runtime
