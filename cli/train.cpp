// systole train STEP.hlo --data DATA.npz --init INIT.npz: a JAX training step compiled once and
// run epoch after epoch on a device, the state kept by the runtime between steps, with progress,
// checkpoints, resume and the time to a target accuracy (docs/TRAINING.md). STEP.hlo may also
// run k steps per launch (a lax.fori_loop or lax.scan over stacked batches): TrainLoop feeds it
// k batches at a time and reports every step.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "arch/config/config.hpp"
#include "cli/commands.hpp"
#include "cli/run_model.hpp"
#include "runtime/pod.hpp"
#include "systole/device_names.hpp"
#include "runtime/train_loop.hpp"
#include "toolchain/hlo/io.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::cli {
namespace {

struct TrainOptions {
  std::string step;
  std::string grad;   // a pod: the gradient and update programs instead of the step
  std::string apply;
  std::size_t shards = 0;
  double link_gbps = 100;
  double link_latency_us = 1;
  // A pod across processes: --pod-processes, --pod-index (unset: the launcher's, or none), …
  runtime::PodProcessOptions processes;
  std::size_t pod_processes = 1;  // as parsed; copied into `processes` when given
  std::size_t pod_index = 0;
  std::string eval;
  std::string data;
  std::string init;
  std::string device;  // a URI, a list or a name (systole/device_names.hpp); empty: SYSTOLE_DEVICE or ref
  std::string config{kDefaultConfig};
  std::size_t epochs = 30;
  double target_accuracy = 0;
  std::uint64_t seed = 17;
  std::uint64_t max_steps = 0;
  std::string checkpoint;
  std::string resume;
  std::string losses;
  bool json = false;
  bool quiet = false;
  bool host_state = false;  // update the state on the host instead of keeping it in device memory
};

std::shared_ptr<const compiler::CompiledModel> CompileFile(const std::string& path, const Config& config,
                                                           bool device_state = false) {
  const std::string source = std::filesystem::path(path).filename().string();
  compiler::CompileOptions options;
  options.device_state = device_state;
  return std::make_shared<const compiler::CompiledModel>(
      compiler::Compile(ReadHloText(path, source, ""), source, config, options));
}

void Train(const TrainOptions& options) {
  const Config config = LoadConfigNameOrFile(options.config);
  const bool pod = !options.grad.empty();
  if (pod == !options.step.empty() || options.grad.empty() != options.apply.empty()) {
    throw std::runtime_error("give either a training step (STEP.hlo) or, for a pod, --grad and --apply");
  }
  // The options against mpirun's environment, when it launched this process.
  const runtime::PodProcesses processes = runtime::ResolvePodProcesses(options.processes, pod);
  // The program whose batch parameters and state define the data and initial-state files.
  // One device keeps the state in its memory where the compiler can place the update there; a
  // pod's gradients are all-reduced on the host, so its update runs there.
  const auto step = CompileFile(pod ? options.grad : options.step, config, !pod && !options.host_state);
  const auto apply = pod ? CompileFile(options.apply, config) : nullptr;
  const auto eval = options.eval.empty() ? nullptr : CompileFile(options.eval, config);
  const runtime::StepSignature signature = pod ? runtime::PodSignature(*step, *apply)
                                               : runtime::ReadStepSignature(*step->module, step->source_name);
  const runtime::Dataset data = runtime::ReadDataset(options.data, *step, signature);
  std::vector<hlo::Literal> state =
      runtime::ReadInitialState(options.init, pod ? *apply : *step, signature);

  runtime::TrainLoopOptions loop;
  loop.epochs = options.epochs;
  loop.target_accuracy = options.target_accuracy;
  loop.shuffle_seed = options.seed;
  loop.max_steps = options.max_steps;
  // In a pod of several processes every process holds the same state; the first writes the
  // checkpoint and the losses, and shows the progress.
  const bool first_process = processes.index == 0;
  if (first_process) loop.checkpoint = options.checkpoint;
  loop.clock_mhz = config.clock_mhz;
  if (!options.resume.empty()) loop.resume = runtime::LoadCheckpoint(options.resume, state);

  const DeviceResolution resolution = ResolveDevice(options.device);
  const std::vector<std::string>& uris = resolution.uris;
  std::vector<Device> devices;
  for (const std::string& uri : uris) devices.push_back(Device::Open(uri, config));
  std::unique_ptr<runtime::Trainer> trainer;
  if (pod) {
    std::vector<Device*> pointers;
    for (Device& device : devices) pointers.push_back(&device);
    const std::size_t shards = options.shards == 0 ? devices.size() * processes.count : options.shards;
    trainer = std::make_unique<runtime::Pod>(runtime::PodPrograms{step, apply, eval}, pointers, uris, shards,
                                             std::move(state), runtime::PodLink{options.link_gbps, options.link_latency_us},
                                             config.clock_mhz, processes);
  } else {
    if (devices.size() != 1) throw std::runtime_error("several devices train a pod: give --grad and --apply");
    trainer = std::make_unique<runtime::DeviceTrainer>(step, eval, devices[0], std::move(state));
  }
  const bool quiet = options.quiet || !first_process;
  if (!quiet && !options.json) {
    const std::size_t device_steps = step->DeviceStepCount();
    const std::size_t state_tensors = step->state_tensors.size();
    fmt::print(stderr, "{} on {} ({}): {} device step(s), {} host step(s){}; batch {}, {} steps per epoch{}{}\n",
               pod ? options.grad : options.step, fmt::join(uris, ","), config.name, device_steps,
               step->steps.size() - device_steps,
               state_tensors == 0 ? "" : fmt::format("; {} state tensor(s) in device memory", state_tensors),
               trainer->batch_size(),
               data.train_rows() / static_cast<std::size_t>(trainer->batch_size()),
               trainer->steps_per_launch() == 1 ? ""
                                                : fmt::format(", {} steps per launch", trainer->steps_per_launch()),
               loop.resume ? fmt::format("; resuming after step {}", loop.resume->steps) : "");
  }
  const auto progress = [&](const runtime::TrainProgress& p) {
    if (quiet || options.json) return;
    if (!p.epoch_end) {
      if (isatty(STDERR_FILENO)) fmt::print(stderr, "\r\033[Kstep {} loss {:.4f}", p.step, p.metrics.at(0));
      return;
    }
    if (isatty(STDERR_FILENO)) fmt::print(stderr, "\r\033[K");
    fmt::print("{}\n", runtime::EpochLine(p));
  };
  const runtime::TrainSummary summary = runtime::TrainLoop(*trainer, data, loop, eval != nullptr, progress);
  if (!options.losses.empty() && first_process) {
    npy::Array losses{npy::ElementType::kFloat32, {summary.losses.size()}, summary.losses};
    npy::WriteNpz(options.losses, {losses});
  }
  const double device_seconds = runtime::CyclesToSeconds(summary.device_cycles, config.clock_mhz);
  if (options.json) {
    nlohmann::ordered_json json = {
        {"step", pod ? options.grad : options.step}, {"device", resolution.requested}, {"uris", uris}, {"config", config.name}, {"clock_mhz", config.clock_mhz},
        {"steps", summary.steps}, {"epochs", summary.epochs}, {"device_cycles", summary.device_cycles},
        {"device_seconds", device_seconds}, {"wall_seconds", summary.wall_seconds},
        {"test_accuracies", summary.test_accuracies}, {"last_loss", summary.losses.empty() ? 0.0 : summary.losses.back()}};
    if (summary.final_test_accuracy) json["final_test_accuracy"] = *summary.final_test_accuracy;
    // Device memory the training steps wrote and read through the link(s), all devices together.
    json["link_bytes"] = {{"programs", summary.link_bytes.program_bytes},
                          {"operands", summary.link_bytes.operand_bytes},
                          {"results", summary.link_bytes.result_bytes}};
    if (const auto* pod_trainer = dynamic_cast<const runtime::Pod*>(trainer.get())) {
      // The last step's cost (every step of a model costs the same on the cycle estimate).
      const runtime::PodStepTiming& t = pod_trainer->last_timing();
      json["pod"] = {{"devices", pod_trainer->world()}, {"processes", processes.count},
                     {"shards", options.shards == 0 ? pod_trainer->world() : options.shards},
                     {"link_gbps", options.link_gbps}, {"link_latency_us", options.link_latency_us},
                     {"device_cycles_per_step", t.device_cycles}, {"exchange_cycles_per_step", t.exchange_cycles}};
    }
    if (options.target_accuracy > 0) {
      json["target_accuracy"] = options.target_accuracy;
      json["reached_target"] = summary.reached_target;
      if (summary.reached_target) {
        json["time_to_accuracy"] = {
            {"steps", summary.target_steps}, {"device_cycles", summary.target_cycles},
            {"device_seconds", runtime::CyclesToSeconds(summary.target_cycles, config.clock_mhz)},
            {"wall_seconds", summary.target_wall_seconds}};
      }
    }
    fmt::print("{}\n", json.dump(2));
    return;
  }
  fmt::print("\n{}", runtime::SummaryText(summary, config.clock_mhz, options.target_accuracy));
  if (!options.checkpoint.empty()) fmt::print("checkpoint: {}\n", options.checkpoint);
}

}  // namespace

void AddTrainCommand(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a model: run a JAX training step (HLO with donated state) epoch "
                                              "after epoch on a device");
  cmd->add_option("step", options->step, "the training step (HLO text with input_output_alias), or k steps per "
                                        "launch: batches [k, batch, …], metrics [k]")
      ->check(CLI::ExistingFile);
  cmd->add_option("--grad", options->grad, "a pod: GRAD.hlo, (params…, micro-batch…) -> (gradients…, loss, …)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--apply", options->apply, "a pod: APPLY.hlo, (state…, gradients…) -> state, the state donated")
      ->check(CLI::ExistingFile);
  cmd->add_option("--shards", options->shards, "a pod: micro-batches per step (default: one per device)");
  cmd->add_option("--link-gbps", options->link_gbps, "a pod: the modelled link's bandwidth (default 100 Gb/s)");
  cmd->add_option("--link-latency-us", options->link_latency_us, "a pod: the modelled link's latency (default 1 us)");
  // Unset unless given: under mpirun the launcher's environment gives them (ResolvePodProcesses).
  CLI::Option* pod_processes =
      cmd->add_option("--pod-processes", options->pod_processes, "a pod across processes: how many (each with as "
                                                                "many --device as this one; default: mpirun's, else 1)")
          ->check(CLI::Range(1, 4096));
  CLI::Option* pod_index =
      cmd->add_option("--pod-index", options->pod_index, "a pod across processes: this one's index, 0 … N-1 "
                                                        "(default: mpirun's, else 0)")
          ->check(CLI::Range(0, 4095));
  cmd->add_option("--pod-rendezvous", options->processes.rendezvous, "a pod across processes: a new, empty directory "
                                                                   "all of them reach");
  cmd->add_option("--pod-address", options->processes.address, "a pod across processes: the address this one's "
                                                             "ranks listen on (default 127.0.0.1)");
  cmd->add_option("--pod-interface", options->processes.interface, "a pod across processes: listen on this "
                                                                 "host's IPv4 address on the network interface NAME "
                                                                 "instead (the same option on every host, as "
                                                                 "mpirun gives it)");
  cmd->add_option("--data", options->data, "DATA.npz: the training arrays, then the test arrays (arr_0, arr_1, …)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--init", options->init, "INIT.npz: the initial state, one array per donated parameter (of the "
                                          "step, or of --apply)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--eval", options->eval, "EVAL.hlo: test accuracy from (first state values…, test arrays…)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--device", options->device, "device URI, name (devices.toml) or comma-separated list for a pod "
                                              "(default: SYSTOLE_DEVICE, else ref)")->check(NoTokenInUri());
  cmd->add_option("--config", options->config, "configuration name or file (default small)");
  cmd->add_option("--epochs", options->epochs, "epochs to run at most (default 30)");
  cmd->add_option("--target-accuracy", options->target_accuracy, "stop when the test accuracy reaches it (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", options->seed, "the batch shuffle's seed (default 17)");
  cmd->add_option("--steps", options->max_steps, "stop after this many steps in total (a whole number of "
                                               "launches for a program of several steps per launch)");
  cmd->add_option("--checkpoint", options->checkpoint, "CKPT.npz written after every epoch and at the end");
  cmd->add_option("--resume", options->resume, "CKPT.npz to start from")->check(CLI::ExistingFile);
  cmd->add_option("--losses", options->losses, "OUT.npz: every step's loss (arr_0)");
  cmd->add_flag("--json", options->json, "print the summary as JSON");
  cmd->add_flag("--host-state", options->host_state, "update the parameters and optimizer state on the host every step "
                "instead of keeping them in device memory (docs/TRAINING.md)");
  cmd->add_flag("-q,--quiet", options->quiet, "no progress");
  cmd->callback([options, pod_processes, pod_index] {
    if (*pod_processes) options->processes.count = options->pod_processes;
    if (*pod_index) options->processes.index = options->pod_index;
    Train(*options);
  });
}

}  // namespace systole::cli
