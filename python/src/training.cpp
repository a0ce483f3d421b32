// systole._systole.Trainer — the training loop `systole train` runs (runtime::TrainLoop over a
// runtime::DeviceTrainer or a runtime::Pod), bound for Python: evaluation after each epoch,
// checkpoints and resume (runtime::SaveCheckpoint / LoadCheckpoint, the same files as the
// command's), the time to a target accuracy, and progress through a Python callback. The
// Python side (systole/training.py) adds paths, defaults and the summary's dataclass.
//
// Threads: the loop runs with the GIL released and every device of the trainer locked; the
// progress callback takes the GIL back for each report and also lets Ctrl-C stop the run.
// The state is only touched with the GIL held: by the loop's own thread between steps (in the
// callback, which may read it), never by another thread while the loop runs.
#include <fmt/core.h>
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "python/src/binding.hpp"
#include "runtime/pod.hpp"
#include "runtime/train_loop.hpp"
#include "toolchain/hlo/io.hpp"

namespace systole::python {
namespace {

using runtime::CompiledModel;

// How Python spells `systole train`'s --pod-* options, for ResolvePodProcesses's errors.
const runtime::PodOptionNames kPodKeywords{"pod_processes=", "pod_index=",   "pod_rendezvous=",
                                           "grad= and apply=", "pod_address=", "pod_interface="};

// A Python array as an .npy array (values as doubles, as the .npz reader gives them); `what`
// names it in errors.
npy::Array ToNpyArray(const py::handle& value, const std::string& what) {
  const py::array given = py::array::ensure(value);
  if (!given) throw py::type_error(fmt::format("{} is not an array", what));
  const auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(given);
  if (!values) throw py::type_error(fmt::format("{} cannot be read as numbers", what));
  npy::Array array;
  array.type = npy::ElementType::kFloat64;
  for (py::ssize_t d = 0; d < values.ndim(); ++d) array.shape.push_back(static_cast<std::uint64_t>(values.shape(d)));
  array.values.assign(values.data(), values.data() + values.size());
  return array;
}

// Arrays from a path to an .npz file (a str) or a sequence of arrays; `what` names them.
std::vector<npy::Array> ToNpyArrays(const py::handle& arrays, const std::string& what) {
  if (py::isinstance<py::str>(arrays) || !py::isinstance<py::sequence>(arrays)) {
    throw py::type_error(fmt::format("{}: a path to an .npz file or a sequence of arrays, not {}", what,
                                     py::repr(arrays).cast<std::string>()));
  }
  std::vector<npy::Array> out;
  const auto sequence = arrays.cast<py::sequence>();
  for (std::size_t i = 0; i < py::len(sequence); ++i) {
    out.push_back(ToNpyArray(sequence[i], fmt::format("{}: array {}", what, i)));
  }
  return out;
}

std::shared_ptr<const CompiledModel> ModelOf(const std::optional<PyProgram>& program) {
  return program ? program->model : nullptr;
}

py::array LiteralArray(const hlo::Literal& literal) {
  const std::vector<npy::Array> arrays = hlo::OutputArrays(literal);
  if (arrays.size() != 1) throw std::logic_error("a state value is one array");
  return ToNumpy(arrays[0]);
}

py::dict ProgressDict(const runtime::TrainProgress& p, std::uint32_t clock_mhz) {
  py::dict d;
  d["epoch_end"] = p.epoch_end;
  d["step"] = p.step;
  d["epoch"] = p.epoch;
  d["metrics"] = p.metrics;
  d["test_accuracy"] = p.test_accuracy ? py::cast(*p.test_accuracy) : py::none();
  d["device_cycles"] = p.device_cycles;
  d["device_seconds"] = runtime::CyclesToSeconds(p.device_cycles, clock_mhz);
  d["wall_seconds"] = p.wall_seconds;
  d["line"] = p.epoch_end ? runtime::EpochLine(p) : std::string();
  return d;
}

// A runtime::Trainer with the programs and devices it uses.
class PyTrainer {
 public:
  // One device: `step` is a training step (donated state), `eval` the accuracy program or none;
  // `state` the initial state, a path to an .npz (INIT.npz) or arrays.
  // `pod`: the pod keywords, which make several processes an error here, as `systole train`
  // refuses a training step under mpirun -n 2 or with --pod-processes 2.
  static std::unique_ptr<PyTrainer> OnDevice(const py::object& device, const PyProgram& step,
                                             const std::optional<PyProgram>& eval, const py::object& state,
                                             const runtime::PodProcessOptions& pod) {
    runtime::ResolvePodProcesses(pod, false, kPodKeywords);
    auto trainer = std::unique_ptr<PyTrainer>(new PyTrainer({DeviceHolderOf(device, "device")}, step.model, nullptr,
                                                            ModelOf(eval)));
    trainer->signature_ = runtime::ReadStepSignature(*step.model->module, step.model->source_name);
    std::vector<hlo::Literal> values = trainer->InitialState(state, *step.model);
    py::gil_scoped_release release;
    const auto locks = trainer->LockDevices();
    trainer->trainer_ = std::make_unique<runtime::DeviceTrainer>(step.model, trainer->eval_,
                                                                 trainer->holders_[0]->device, std::move(values));
    return trainer;
  }

  // A pod (runtime::Pod) of distinct `devices`, their gradients exchanged through Gloo: on
  // loopback in this process, or with the other processes of a pod across processes (`pod`:
  // the keywords, resolved against mpirun's environment as `systole train` resolves its flags).
  static std::unique_ptr<PyTrainer> Pod(const py::sequence& devices, const PyProgram& grad, const PyProgram& apply,
                                        const std::optional<PyProgram>& eval, const py::object& state,
                                        std::size_t shards, double link_gbps, double link_latency_us,
                                        const runtime::PodProcessOptions& pod) {
    const runtime::PodProcesses processes = runtime::ResolvePodProcesses(pod, true, kPodKeywords);
    std::vector<std::shared_ptr<DeviceHolder>> holders;
    for (std::size_t i = 0; i < py::len(devices); ++i) {
      holders.push_back(DeviceHolderOf(devices[i], fmt::format("devices[{}]", i)));
      for (std::size_t j = 0; j < i; ++j) {
        if (holders[j] == holders[i]) {
          throw py::value_error(fmt::format("devices[{}] is devices[{}] again ({}): a pod's devices run at once, so "
                                            "each must be a Device of its own", i, j, holders[i]->device.uri()));
        }
      }
    }
    if (holders.empty()) throw py::value_error("a pod needs at least one device");
    auto trainer = std::unique_ptr<PyTrainer>(new PyTrainer(holders, grad.model, apply.model, ModelOf(eval)));
    trainer->processes_ = processes;
    trainer->signature_ = runtime::PodSignature(*grad.model, *apply.model);
    std::vector<hlo::Literal> values = trainer->InitialState(state, *apply.model);
    std::vector<Device*> pointers;
    std::vector<std::string> names;
    for (const auto& holder : holders) {
      pointers.push_back(&holder->device);
      names.push_back(holder->device.uri());
    }
    const std::uint32_t clock = trainer->clock_mhz();
    py::gil_scoped_release release;
    const auto locks = trainer->LockDevices();
    trainer->trainer_ = std::make_unique<runtime::Pod>(
        runtime::PodPrograms{grad.model, apply.model, trainer->eval_}, pointers, names,
        shards == 0 ? holders.size() * processes.count : shards, std::move(values),
        runtime::PodLink{link_gbps, link_latency_us}, clock, processes);
    return trainer;
  }

  std::int64_t batch_size() const { return trainer_->batch_size(); }
  std::int64_t steps_per_launch() const { return trainer_->steps_per_launch(); }
  std::uint32_t clock_mhz() const { return holders_[0]->device.config().clock_mhz; }
  std::size_t devices() const { return holders_.size(); }
  std::size_t pod_processes() const { return processes_.count; }
  std::size_t pod_index() const { return processes_.index; }

  py::list State() const {
    CheckNotTraining("read the state", true);
    py::list out;
    for (const hlo::Literal& value : trainer_->state()) out.append(LiteralArray(value));
    return out;
  }

  void SetState(const py::object& state) {
    CheckNotTraining("replace the state", false);
    std::vector<hlo::Literal> values = InitialState(state, apply_ ? *apply_ : *step_);
    trainer_->set_state(std::move(values));
  }

  // Test-set accuracy of the current state: `test` is the test arrays (one per batch parameter).
  double Evaluate(const py::object& test) {
    if (eval_ == nullptr) throw py::value_error("this trainer has no evaluation program (give eval=…)");
    CheckNotTraining("evaluate", false);
    std::vector<npy::Array> arrays = ToNpyArrays(test, "test");
    // The data set's checks and types, with the test arrays twice (as training and test set).
    const std::size_t count = arrays.size();
    for (std::size_t i = 0; i < count; ++i) arrays.push_back(arrays[i]);
    const runtime::Dataset data = runtime::DatasetFromArrays(arrays, {"test", false}, *step_, signature_);
    py::gil_scoped_release release;
    const auto locks = LockDevices();
    return trainer_->Evaluate(data.test).value;
  }

  // Reads the checkpoint at `path` against this model's state and makes it the state; returns
  // the steps and device cycles it records.
  py::dict LoadCheckpoint(const std::string& path) {
    CheckNotTraining("load a checkpoint", false);
    runtime::Checkpoint checkpoint = runtime::LoadCheckpoint(path, trainer_->state());
    py::dict d;
    d["steps"] = checkpoint.steps;
    d["device_cycles"] = checkpoint.device_cycles;
    trainer_->set_state(std::move(checkpoint.state));
    return d;
  }

  void SaveCheckpoint(const std::string& path, std::uint64_t steps, std::uint64_t device_cycles) const {
    CheckNotTraining("save a checkpoint", true);
    runtime::SaveCheckpoint(path, {steps, device_cycles, trainer_->state()});
  }

  // runtime::TrainLoop on `data` (a DATA.npz path or the 2n arrays: training, then test).
  py::dict Train(const py::object& data, std::size_t epochs, double target_accuracy, std::uint64_t seed,
                 std::uint64_t max_steps, const std::string& checkpoint, const std::string& resume,
                 const std::optional<py::function>& on_progress) {
    CheckNotTraining("train", false);
    const runtime::Dataset dataset =
        py::isinstance<py::str>(data)
            ? runtime::ReadDataset(data.cast<std::string>(), *step_, signature_)
            : runtime::DatasetFromArrays(ToNpyArrays(data, "data"), {"data", false}, *step_, signature_);
    runtime::TrainLoopOptions options;
    options.epochs = epochs;
    options.target_accuracy = target_accuracy;
    options.shuffle_seed = seed;
    options.max_steps = max_steps;
    // In a pod of several processes every process holds the same state: the first writes the
    // checkpoint, as `systole train` does.
    if (processes_.index == 0) options.checkpoint = checkpoint;
    options.clock_mhz = clock_mhz();
    if (!resume.empty()) options.resume = runtime::LoadCheckpoint(resume, trainer_->state());
    const std::uint32_t clock = options.clock_mhz;
    // Every report takes the GIL: for the callback, and so that Ctrl-C (a signal Python only
    // sees while it holds the GIL) stops a long run between two steps.
    const auto progress = [&](const runtime::TrainProgress& p) {
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (on_progress) (*on_progress)(ProgressDict(p, clock));
    };
    runtime::TrainSummary summary;
    {
      const TrainingNow now(*this);
      py::gil_scoped_release release;
      const auto locks = LockDevices();
      summary = runtime::TrainLoop(*trainer_, dataset, options, eval_ != nullptr, progress);
    }
    return SummaryDict(summary, target_accuracy);
  }

 private:
  PyTrainer(std::vector<std::shared_ptr<DeviceHolder>> holders, std::shared_ptr<const CompiledModel> step,
            std::shared_ptr<const CompiledModel> apply, std::shared_ptr<const CompiledModel> eval)
      : holders_(std::move(holders)), step_(std::move(step)), apply_(std::move(apply)), eval_(std::move(eval)) {
    for (const auto& holder : holders_) {
      for (const CompiledModel* model : {step_.get(), apply_.get(), eval_.get()}) {
        if (model != nullptr) CheckProgramConfig(*model, holder->device);
      }
    }
  }

  // Marks the loop as running on this thread for as long as it lives (with the GIL held, as
  // every access to the state is).
  struct TrainingNow {
    explicit TrainingNow(PyTrainer& trainer) : trainer_(trainer) { trainer_.loop_thread_ = std::this_thread::get_id(); }
    ~TrainingNow() { trainer_.loop_thread_ = std::thread::id(); }
    TrainingNow(const TrainingNow&) = delete;
    TrainingNow& operator=(const TrainingNow&) = delete;
    PyTrainer& trainer_;
  };

  // While the loop runs, its own thread's callback may read the state (between two steps);
  // anything else would race with the loop or wait for the devices it holds.
  void CheckNotTraining(const std::string& what, bool read_only) const {
    if (loop_thread_ == std::thread::id()) return;
    if (read_only && loop_thread_ == std::this_thread::get_id()) return;
    throw py::value_error(fmt::format("cannot {} while the trainer is training{}", what,
                                      loop_thread_ == std::this_thread::get_id() ? " (from its progress callback)"
                                                                                : " in another thread"));
  }

  // The initial state from an INIT.npz path or arrays, read against `program`'s donated
  // parameters (the step's, or a pod's update program's).
  std::vector<hlo::Literal> InitialState(const py::object& state, const CompiledModel& program) const {
    if (py::isinstance<py::str>(state)) {
      return runtime::ReadInitialState(state.cast<std::string>(), program, signature_);
    }
    return runtime::InitialStateFromArrays(ToNpyArrays(state, "state"), {"state", false}, program, signature_);
  }

  // Every device of the trainer, locked in address order (so two trainers sharing devices
  // cannot deadlock), for as long as the result lives. Call without the GIL.
  std::vector<std::unique_lock<std::mutex>> LockDevices() const {
    std::vector<DeviceHolder*> order;
    for (const auto& holder : holders_) order.push_back(holder.get());
    std::sort(order.begin(), order.end());
    std::vector<std::unique_lock<std::mutex>> locks;
    for (DeviceHolder* holder : order) locks.emplace_back(holder->mutex);
    return locks;
  }

  py::dict SummaryDict(const runtime::TrainSummary& s, double target_accuracy) const {
    const std::uint32_t clock = clock_mhz();
    py::dict d;
    d["steps"] = s.steps;
    d["epochs"] = s.epochs;
    d["losses"] = s.losses;
    d["test_accuracies"] = s.test_accuracies;
    d["final_test_accuracy"] = s.final_test_accuracy ? py::cast(*s.final_test_accuracy) : py::none();
    d["device_cycles"] = s.device_cycles;
    d["device_seconds"] = runtime::CyclesToSeconds(s.device_cycles, clock);
    d["wall_seconds"] = s.wall_seconds;
    d["clock_mhz"] = clock;
    py::dict link;
    link["programs"] = s.link_bytes.program_bytes;
    link["operands"] = s.link_bytes.operand_bytes;
    link["results"] = s.link_bytes.result_bytes;
    d["link_bytes"] = link;
    d["target_accuracy"] = target_accuracy;
    d["reached_target"] = s.reached_target;
    if (s.reached_target) {
      py::dict t;
      t["steps"] = s.target_steps;
      t["device_cycles"] = s.target_cycles;
      t["device_seconds"] = runtime::CyclesToSeconds(s.target_cycles, clock);
      t["wall_seconds"] = s.target_wall_seconds;
      d["time_to_accuracy"] = t;
    } else {
      d["time_to_accuracy"] = py::none();
    }
    if (const auto* pod = dynamic_cast<const runtime::Pod*>(trainer_.get())) {
      // The last step's cost (every step of a model costs the same on the cycle estimate).
      py::dict p;
      p["devices"] = pod->world();
      p["processes"] = processes_.count;
      p["device_cycles_per_step"] = pod->last_timing().device_cycles;
      p["exchange_cycles_per_step"] = pod->last_timing().exchange_cycles;
      d["pod"] = p;
    } else {
      d["pod"] = py::none();
    }
    d["text"] = runtime::SummaryText(s, clock, target_accuracy);
    return d;
  }

  std::vector<std::shared_ptr<DeviceHolder>> holders_;
  std::shared_ptr<const CompiledModel> step_;   // the step, or a pod's gradient program
  std::shared_ptr<const CompiledModel> apply_;  // a pod's update program
  std::shared_ptr<const CompiledModel> eval_;   // may be null
  runtime::StepSignature signature_;
  std::unique_ptr<runtime::Trainer> trainer_;
  std::thread::id loop_thread_;  // the thread running TrainLoop, or none
  runtime::PodProcesses processes_;  // a pod across processes; by default this process alone
};

}  // namespace

void BindTraining(py::module_& m) {
  py::class_<PyTrainer>(m, "Trainer",
                        "runtime::TrainLoop (what `systole train` runs) over one device or a pod: evaluation after "
                        "each epoch, checkpoints, resume, time to a target accuracy (docs/TRAINING.md).")
      .def_static(
          "on_device",
          [](const py::object& device, const PyProgram& step, const std::optional<PyProgram>& eval,
             const py::object& state, std::optional<std::size_t> pod_processes, std::optional<std::size_t> pod_index) {
            return PyTrainer::OnDevice(device, step, eval, state, {pod_processes, pod_index, "", "", ""});
          },
          py::arg("device"), py::arg("step"), py::arg("eval"), py::arg("state"), py::arg("pod_processes") = py::none(),
          py::arg("pod_index") = py::none(),
          "One device: a training step with donated state, and optionally an evaluation (several processes, "
          "given or mpirun's, are refused: they train a pod).")
      .def_static(
          "pod",
          [](const py::sequence& devices, const PyProgram& grad, const PyProgram& apply,
             const std::optional<PyProgram>& eval, const py::object& state, std::size_t shards, double link_gbps,
             double link_latency_us, std::optional<std::size_t> pod_processes, std::optional<std::size_t> pod_index,
             const std::string& pod_rendezvous, const std::string& pod_address, const std::string& pod_interface) {
            return PyTrainer::Pod(devices, grad, apply, eval, state, shards, link_gbps, link_latency_us,
                                  {pod_processes, pod_index, pod_rendezvous, pod_address, pod_interface});
          },
          py::arg("devices"), py::arg("grad"), py::arg("apply"), py::arg("eval"), py::arg("state"), py::arg("shards"),
          py::arg("link_gbps"), py::arg("link_latency_us"), py::arg("pod_processes"), py::arg("pod_index"),
          py::arg("pod_rendezvous"), py::arg("pod_address") = "", py::arg("pod_interface") = "",
          "A pod of distinct devices: gradient and update programs, gradients exchanged through Gloo; across "
          "processes with pod_processes, pod_index (None: mpirun's, else this process alone), pod_rendezvous, "
          "pod_address or pod_interface (empty: 127.0.0.1).")
      .def_property_readonly("batch_size", &PyTrainer::batch_size)
      .def_property_readonly("steps_per_launch", &PyTrainer::steps_per_launch)
      .def_property_readonly("clock_mhz", &PyTrainer::clock_mhz)
      .def_property_readonly("devices", &PyTrainer::devices)
      .def_property_readonly("pod_processes", &PyTrainer::pod_processes, "Processes in the pod (1: this one alone).")
      .def_property_readonly("pod_index", &PyTrainer::pod_index, "This process's index in the pod.")
      .def_property("state", &PyTrainer::State, &PyTrainer::SetState, "The state arrays, in the donated order.")
      .def("evaluate", &PyTrainer::Evaluate, py::arg("test"), "Test-set accuracy of the current state.")
      .def("load_checkpoint", &PyTrainer::LoadCheckpoint, py::arg("path"),
           "Makes a checkpoint's state the current one; returns its steps and device cycles.")
      .def("save_checkpoint", &PyTrainer::SaveCheckpoint, py::arg("path"), py::arg("steps"), py::arg("device_cycles"),
           "Writes the current state as a checkpoint recording `steps` and `device_cycles`.")
      .def("train", &PyTrainer::Train, py::arg("data"), py::arg("epochs"), py::arg("target_accuracy"),
           py::arg("seed"), py::arg("max_steps"), py::arg("checkpoint"), py::arg("resume"), py::arg("on_progress"),
           "runtime::TrainLoop: epochs of shuffled batches from the start or a checkpoint; returns the summary.");
}

}  // namespace systole::python
