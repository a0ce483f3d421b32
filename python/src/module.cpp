// systole._systole — the pybind11 extension under the `systole` Python package: a thin layer
// over the driver (Device, Buffer, counters), the compiler (compiler::Compile, model files) and
// the runtime (runtime::Execute), the same library calls the `systole` command makes. The
// Python side (python/systole/__init__.py) adds what is easier there: reading HLO from a path,
// bf16 arrays (ml_dtypes), the JAX front door (systole.jax).
//
// Threads: every long call (opening an in-process RTL device, compiling, running) releases the
// GIL. The driver's rule is one thread at a time per Device, so each Python Device holds a
// mutex that every call through it (its buffers included) takes after releasing the GIL.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "arch/config/config.hpp"
#include "python/src/binding.hpp"
#include "runtime/execute.hpp"
#include "runtime/parallel_steps.hpp"
#include "runtime/training.hpp"
#include "systole/device.hpp"
#include "systole/device_names.hpp"
#include "toolchain/compiler/model.hpp"
#include "toolchain/compiler/model_file.hpp"
#include "toolchain/hlo/error.hpp"
#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/io.hpp"
#include "toolchain/hlo/ir.hpp"
#include "toolchain/hlo/parser.hpp"

namespace systole::python {
namespace {

class PyBuffer {
 public:
  PyBuffer(std::shared_ptr<DeviceHolder> holder, Buffer buffer)
      : holder_(std::move(holder)), buffer_(std::move(buffer)) {}

  std::uint64_t address() const { return buffer_.address(); }
  std::uint64_t size() const { return buffer_.size(); }

  // Any C-contiguous object with the buffer protocol (NumPy arrays, bytes): its memory goes to
  // the link as it is, no intermediate copy.
  void Write(const py::buffer& data, std::uint64_t offset) {
    const py::buffer_info info = data.request();
    if (!IsCContiguous(info)) throw py::value_error("write: the array must be C-contiguous (numpy.ascontiguousarray)");
    const auto bytes = std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(info.ptr),
                                                     static_cast<std::size_t>(info.size * info.itemsize));
    py::gil_scoped_release release;
    std::lock_guard lock(holder_->mutex);
    buffer_.Write(bytes, offset);
  }

  // Reads into a new array of `dtype` and `shape` (default: as many elements as fit from
  // `offset` to the end); the link writes straight into the array's memory. The array is made
  // by numpy.empty and filled through the buffer protocol: Debian 12's pybind11 (2.10) reads
  // dtype fields in NumPy 1's layout, which NumPy 2 changed, so nothing here asks it for them.
  py::object Read(const py::object& dtype_like, const std::optional<std::vector<py::ssize_t>>& shape,
                  std::uint64_t offset) const {
    const py::module_ numpy = py::module_::import("numpy");
    const py::object dtype = numpy.attr("dtype")(dtype_like);
    const auto itemsize = dtype.attr("itemsize").cast<std::uint64_t>();
    if (itemsize == 0) throw py::value_error("read: dtype has no size");
    if (offset > buffer_.size()) {
      throw py::value_error("read: offset " + std::to_string(offset) + " is past the buffer's end (" +
                            std::to_string(buffer_.size()) + " bytes)");
    }
    std::vector<py::ssize_t> dims;
    if (shape) {
      dims = *shape;
    } else {
      dims = {static_cast<py::ssize_t>((buffer_.size() - offset) / itemsize)};
    }
    py::object out = numpy.attr("empty")(py::tuple(py::cast(dims)), dtype);
    const py::buffer_info info = py::buffer(out).request(/*writable=*/true);
    const auto bytes = static_cast<std::size_t>(info.size * info.itemsize);
    auto* data = static_cast<std::uint8_t*>(info.ptr);
    {
      py::gil_scoped_release release;
      std::lock_guard lock(holder_->mutex);
      buffer_.Read(std::span<std::uint8_t>(data, bytes), offset);
    }
    return out;
  }

 private:
  static bool IsCContiguous(const py::buffer_info& info) {
    py::ssize_t expected = info.itemsize;
    for (std::size_t d = info.shape.size(); d-- > 0;) {
      if (info.shape[d] != 1 && info.strides[d] != expected) return false;
      expected *= info.shape[d];
    }
    return true;
  }

  std::shared_ptr<DeviceHolder> holder_;
  Buffer buffer_;
};

py::dict ConfigDict(const Config& c) {
  py::dict d;
  d["config"] = c.name;
  d["description"] = c.description;
  d["rows"] = c.rows;
  d["cols"] = c.cols;
  d["dtype"] = std::string(DTypeName(c.dtype));
  d["peak_macs_per_cycle"] = c.PeakMacsPerCycle();
  d["unified_buffer_bytes"] = c.unified_buffer_bytes;
  d["accumulator_bytes"] = c.accumulator_bytes;
  d["weight_fifo_tiles"] = c.weight_fifo_tiles;
  d["memory_bytes"] = c.memory_bytes;
  d["memory_channels"] = c.memory_channels;
  d["clock_mhz"] = c.clock_mhz;
  return d;
}

py::dict CountersDict(const Counters& counters) {
  py::dict d;
  for (const auto& [name, value] : counters.values) d[py::str(name)] = value;
  return d;
}

std::vector<const hlo::Instruction*> EntryParameters(const hlo::Module& module) {
  std::vector<const hlo::Instruction*> parameters;
  for (const hlo::Instruction* p : module.entry->Parameters()) parameters.push_back(p);
  std::sort(parameters.begin(), parameters.end(),
            [](const hlo::Instruction* a, const hlo::Instruction* b) {
              return a->parameter_number < b->parameter_number;
            });
  return parameters;
}

py::dict ShapeDict(const std::string& name, const hlo::Shape& shape) {
  py::dict d;
  d["name"] = name;
  d["shape"] = py::tuple(py::cast(shape.dims));
  d["dtype"] = std::string(hlo::ElementTypeName(shape.type));
  return d;
}

// Arrays of the result, tuples flattened depth-first (hlo::OutputArrays' order), with the HLO
// element type of each (bf16 travels as float32; the Python side makes it bfloat16 again).
void FlattenShapes(const hlo::Shape& shape, std::vector<hlo::Shape>& out) {
  if (shape.IsTuple()) {
    for (const hlo::Shape& element : shape.tuple) FlattenShapes(element, out);
  } else {
    out.push_back(shape);
  }
}

py::list OutputDescriptions(const hlo::Module& module) {
  std::vector<hlo::Shape> shapes;
  FlattenShapes(module.entry->root->shape, shapes);
  py::list out;
  for (std::size_t i = 0; i < shapes.size(); ++i) out.append(ShapeDict("arr_" + std::to_string(i), shapes[i]));
  return out;
}

// One placement entry per step, in execution order (what `systole compile` prints).
py::list Placement(const compiler::CompiledModel& model) {
  const hlo::Module& module = *model.module;
  py::list steps;
  for (const hlo::Instruction* parameter : EntryParameters(module)) {
    py::dict d;
    d["kind"] = "input";
    d["instruction"] = parameter->name;
    d["opcode"] = "parameter";
    d["shape"] = parameter->shape.ToString();
    d["source"] = module.SourceOf(*parameter);
    steps.append(d);
  }
  // A loop's or conditional's steps follow it, with "depth" 1 (2 in a nested loop, …) and the
  // region they belong to ("body region_0.18").
  std::vector<std::string> region_at;  // by depth: the region being listed
  for (const compiler::PlacementRow& row : model.PlacementRows()) {
    if (row.step == nullptr) {
      region_at.resize(row.depth + 1);
      region_at[row.depth] = row.region->role + " " + row.region->computation;
      continue;
    }
    const compiler::Step& step = *row.step;
    const hlo::Computation& computation = *row.computation;
    py::dict d;
    if (step.kind == compiler::Step::Kind::kDevice) {
      const compiler::DeviceStep& device = *step.device;
      const hlo::Instruction* result = computation.Find(device.covers.back());
      d["kind"] = "device";
      d["instruction"] = device.covers.back();
      d["opcode"] = result ? std::string(hlo::OpcodeName(result->opcode)) : std::string();
      d["kernel"] = device.kernel;
      d["covers"] = device.covers;
      d["cycles"] = device.estimate.cycles;
      d["mxu_busy"] = device.estimate.mxu_busy;
      d["macs"] = device.estimate.macs;
      // The first covered instruction with a known Python line: the dot or convolution.
      std::string source;
      for (const std::string& name : device.covers) {
        if (const hlo::Instruction* i = computation.Find(name); i && source.empty()) source = module.SourceOf(*i);
      }
      d["source"] = source;
    } else {
      const hlo::Instruction* i = computation.Find(step.instruction);
      const bool host = step.kind == compiler::Step::Kind::kHost;
      d["kind"] = host ? "host" : "control";
      d["instruction"] = step.instruction;
      d["opcode"] = i ? std::string(hlo::OpcodeName(i->opcode)) : std::string();
      d["reason"] = host ? step.reason : i ? compiler::ControlStepNote(step, *i) : std::string();
      if (host) d["work"] = std::string(compiler::HostWorkName(step.work));
      d["source"] = i ? module.SourceOf(*i) : std::string();
    }
    if (row.depth > 0) {
      d["depth"] = row.depth;
      d["region"] = region_at.at(row.depth);
    }
    steps.append(d);
  }
  return steps;
}

py::dict EstimateDict(const compiler::CompiledModel& model) {
  const compiler::StepEstimate total = model.TotalEstimate();
  const Config config = LoadConfig(model.config);
  const double peak = double(config.PeakMacsPerCycle());
  py::dict d;
  d["cycles"] = total.cycles;
  d["mxu_busy"] = total.mxu_busy;
  d["macs"] = total.macs;
  d["mxu_utilization"] = total.cycles ? double(total.macs) / (double(total.cycles) * peak) : 0.0;
  d["mxu_busy_fraction"] = total.cycles ? double(total.mxu_busy) / double(total.cycles) : 0.0;
  return d;
}

// NumPy arrays -> entry arguments. Float parameters take float arrays, integer ones integer
// (or bool) arrays: a silent float -> int truncation would hide a wrong call.
std::vector<hlo::Literal> Arguments(const compiler::CompiledModel& model, const py::sequence& inputs) {
  const std::vector<const hlo::Instruction*> parameters = EntryParameters(*model.module);
  if (py::len(inputs) != parameters.size()) {
    throw py::value_error(model.source_name + " takes " + std::to_string(parameters.size()) + " input(s), " +
                          std::to_string(py::len(inputs)) + " given");
  }
  std::vector<npy::Array> arrays;
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    const py::array given = py::array::ensure(inputs[k]);
    if (!given) throw py::type_error("input " + std::to_string(k) + " is not an array");
    const hlo::ElementType type = parameters[k]->shape.type;
    const char kind = given.dtype().attr("kind").cast<std::string>().at(0);  // not .kind(): see Read
    const bool ok = hlo::IsFloating(type) ? (kind == 'f') : (kind == 'i' || kind == 'u' || kind == 'b');
    if (!ok) {
      throw py::type_error("input " + std::to_string(k) + " ('" + parameters[k]->name + "', " +
                           parameters[k]->shape.ToString() + ") cannot take an array of dtype " +
                           py::str(given.dtype()).cast<std::string>());
    }
    const auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(given);
    npy::Array a;
    a.type = npy::ElementType::kFloat64;
    for (py::ssize_t d = 0; d < values.ndim(); ++d) a.shape.push_back(static_cast<std::uint64_t>(values.shape(d)));
    a.values.assign(values.data(), values.data() + values.size());
    arrays.push_back(std::move(a));
  }
  return hlo::InputsFromArrays(*model.module, arrays);
}

}  // namespace

py::array ToNumpy(const npy::Array& a) {
  std::vector<py::ssize_t> shape(a.shape.begin(), a.shape.end());
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    py::array_t<T> out(shape);
    T* data = out.mutable_data();
    for (std::size_t i = 0; i < a.values.size(); ++i) data[i] = static_cast<T>(a.values[i]);
    return py::array(out);
  };
  switch (a.type) {
    case npy::ElementType::kInt8: return fill(std::int8_t{});
    case npy::ElementType::kUInt8: return fill(std::uint8_t{});
    case npy::ElementType::kInt32: return fill(std::int32_t{});
    case npy::ElementType::kInt64: return fill(std::int64_t{});
    case npy::ElementType::kFloat32: return fill(float{});
    case npy::ElementType::kFloat64: return fill(double{});
  }
  throw std::logic_error("unknown npy element type");
}

namespace {

class PyDevice {
 public:
  PyDevice(const std::string& uri, const std::string& config) {
    const Config loaded = LoadConfigNameOrFile(config);
    py::gil_scoped_release release;
    holder_ = std::make_shared<DeviceHolder>(Device::Open(uri, loaded));
  }

  std::string uri() const { return holder_->device.uri(); }
  const std::shared_ptr<DeviceHolder>& holder() const { return holder_; }
  std::string config() const { return holder_->device.config().name; }

  py::dict Info() const {
    py::dict d = ConfigDict(holder_->device.config());
    d["uri"] = holder_->device.uri();
    return d;
  }

  PyBuffer Allocate(std::uint64_t bytes, std::uint64_t alignment) {
    Buffer buffer;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(holder_->mutex);
      buffer = holder_->device.Allocate(bytes, alignment);
    }
    return PyBuffer(holder_, std::move(buffer));
  }

  py::dict ReadCounters() {
    Counters counters;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(holder_->mutex);
      counters = holder_->device.ReadCounters();
    }
    return CountersDict(counters);
  }

  void ClearCounters() {
    py::gil_scoped_release release;
    std::lock_guard lock(holder_->mutex);
    holder_->device.ClearCounters();
  }

  // jobs > 1: the device steps on that many devices opened like this one, side by side, each
  // checked against the golden model (runtime/parallel_steps.hpp); this device is not used.
  py::dict Run(const PyProgram& program, const py::sequence& inputs, unsigned jobs) {
    const compiler::CompiledModel& model = *program.model;
    CheckConfig(model);
    if (jobs == 0) throw py::value_error("jobs must be at least 1");
    const std::vector<hlo::Literal> arguments = Arguments(model, inputs);
    runtime::RunResult run;
    {
      py::gil_scoped_release release;
      if (jobs > 1) {
        runtime::ParallelOptions options;
        options.uri = holder_->device.uri();
        options.jobs = jobs;
        run = runtime::ExecuteParallel(model, holder_->device.config(), arguments, options);
      } else {
        std::lock_guard lock(holder_->mutex);
        run = runtime::Execute(model, holder_->device, arguments);
      }
    }
    std::vector<hlo::Shape> shapes;
    FlattenShapes(run.result.shape, shapes);
    const std::vector<npy::Array> arrays = hlo::OutputArrays(run.result);
    py::list outputs, dtypes;
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      outputs.append(ToNumpy(arrays[i]));
      dtypes.append(i < shapes.size() ? std::string(hlo::ElementTypeName(shapes[i].type)) : std::string());
    }
    const runtime::RunStats& s = run.stats;
    const double peak = double(holder_->device.config().PeakMacsPerCycle());
    py::dict stats;
    stats["cycles"] = s.cycles;
    stats["mxu_busy"] = s.mxu_busy;
    stats["macs"] = s.macs;
    stats["mxu_utilization"] = s.cycles ? double(s.macs) / (double(s.cycles) * peak) : 0.0;
    stats["mxu_busy_fraction"] = s.cycles ? double(s.mxu_busy) / double(s.cycles) : 0.0;
    stats["device_steps"] = s.device_steps;
    stats["host_steps"] = s.host_steps;
    stats["device_seconds"] = s.device_seconds;
    stats["host_seconds"] = s.host_seconds;
    py::dict result;
    result["outputs"] = outputs;
    result["dtypes"] = dtypes;
    result["stats"] = stats;
    return result;
  }

  // The benchmark's baseline (bench/python_bench.py): what Run does, through the C++ API alone —
  // the arguments converted once, as a C++ caller holds them, then `iterations` calls of
  // runtime::Execute timed without Python in the loop. Seconds per call.
  std::vector<double> NativeRunSeconds(const PyProgram& program, const py::sequence& inputs, int iterations) {
    const compiler::CompiledModel& model = *program.model;
    CheckConfig(model);
    const std::vector<hlo::Literal> arguments = Arguments(model, inputs);
    std::vector<double> seconds;
    py::gil_scoped_release release;
    std::lock_guard lock(holder_->mutex);
    for (int k = 0; k < iterations; ++k) {
      const auto start = std::chrono::steady_clock::now();
      const runtime::RunResult run = runtime::Execute(model, holder_->device, arguments);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return seconds;
  }

 private:
  void CheckConfig(const compiler::CompiledModel& model) const { CheckProgramConfig(model, holder_->device); }

  std::shared_ptr<DeviceHolder> holder_;
};

}  // namespace

void CheckProgramConfig(const compiler::CompiledModel& model, const Device& device) {
  if (model.config != device.config().name) {
    throw py::value_error("the program " + model.source_name + " is compiled for configuration '" + model.config +
                          "' but device " + device.uri() + " is '" + device.config().name + "'");
  }
}

std::shared_ptr<DeviceHolder> DeviceHolderOf(const py::handle& device, const std::string& what) {
  if (!py::isinstance<PyDevice>(device)) {
    throw py::type_error(what + " is not a device: " + py::repr(device).cast<std::string>());
  }
  return device.cast<const PyDevice&>().holder();
}

namespace {

PyProgram CompileText(const std::string& text, const std::string& source_name, const std::string& config, bool fuse,
                      bool device_state) {
  const Config loaded = LoadConfigNameOrFile(config);
  compiler::CompileOptions options;
  options.fuse = fuse;
  options.device_state = device_state;
  py::gil_scoped_release release;
  return PyProgram{
      std::make_shared<const compiler::CompiledModel>(compiler::Compile(text, source_name, loaded, options))};
}

PyProgram LoadProgram(const std::string& path) {
  py::gil_scoped_release release;
  return PyProgram{std::make_shared<const compiler::CompiledModel>(compiler::LoadModel(path))};
}

// A training step on one device with its donated state kept between steps by the runtime
// (runtime/training.hpp): step() takes the batch and returns the metrics.
class PyTrainingSession {
 public:
  PyTrainingSession(const PyDevice& device, const PyProgram& program, const py::sequence& state)
      : holder_(device.holder()), model_(program.model) {
    const runtime::StepSignature signature = runtime::ReadStepSignature(*model_->module, model_->source_name);
    std::vector<hlo::Literal> values = Literals(signature.state_parameters, state, "state");
    py::gil_scoped_release release;
    session_ = std::make_unique<runtime::TrainingSession>(model_, holder_->device, std::move(values));
  }

  py::dict Step(const py::sequence& batch) {
    std::vector<hlo::Literal> values = Literals(session_->signature().batch_parameters, batch, "batch");
    runtime::StepResult result;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(holder_->mutex);
      result = session_->Step(values);
    }
    py::dict d;
    d["metrics"] = result.metrics;
    d["cycles"] = result.stats.cycles;
    d["macs"] = result.stats.macs;
    // Device memory this step wrote and read through the link (programs only on the first step).
    d["program_bytes"] = result.stats.program_bytes;
    d["operand_bytes"] = result.stats.operand_bytes;
    d["result_bytes"] = result.stats.result_bytes;
    return d;
  }

  py::list State() const {
    py::list out;
    for (const hlo::Literal& value : session_->state()) {
      for (const npy::Array& array : hlo::OutputArrays(value)) out.append(ToNumpy(array));
    }
    return out;
  }

  void SetState(const py::sequence& state) {
    session_->set_state(Literals(session_->signature().state_parameters, state, "state"));
  }

  std::int64_t batch_size() const { return session_->signature().batch_size; }

 private:
  // Arrays for the parameters `indices`, each shaped as its parameter and rounded to its type.
  std::vector<hlo::Literal> Literals(const std::vector<std::size_t>& indices, const py::sequence& arrays,
                                     const std::string& what) const {
    const auto parameters = model_->module->entry->Parameters();
    if (py::len(arrays) != indices.size()) {
      throw py::value_error(fmt::format("{}: the {} has {} arrays, {} given", model_->source_name, what,
                                        indices.size(), py::len(arrays)));
    }
    std::vector<hlo::Literal> out;
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const hlo::Instruction& parameter = *parameters[indices[k]];
      const auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(arrays[k]);
      if (!values) throw py::type_error(fmt::format("{} array {} is not an array", what, k));
      hlo::Literal literal(parameter.shape);
      std::vector<std::int64_t> dims;
      for (py::ssize_t d = 0; d < values.ndim(); ++d) dims.push_back(values.shape(d));
      if (dims != parameter.shape.dims) {
        throw py::value_error(fmt::format("{} array {} has shape ({}) but parameter {} ('{}') is {}", what, k,
                                          fmt::join(dims, ", "), indices[k], parameter.name,
                                          parameter.shape.ToString()));
      }
      literal.values.assign(values.data(), values.data() + values.size());
      hlo::RoundAll(parameter.shape.type, literal.values);
      out.push_back(std::move(literal));
    }
    return out;
  }

  std::shared_ptr<DeviceHolder> holder_;
  std::shared_ptr<const compiler::CompiledModel> model_;
  std::unique_ptr<runtime::TrainingSession> session_;
};

}  // namespace
}  // namespace systole::python

PYBIND11_MODULE(_systole, m) {
  using namespace systole;
  using namespace systole::python;
  m.doc() = "Systole's driver, compiler and runtime (C++), under the `systole` package: use `systole`, "
            "not this module.";

  // Exceptions: the C++ message is the Python message.
  static py::exception<std::runtime_error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<DeviceError> device_error(m, "DeviceError", error.ptr());
  static py::exception<RunError> run_error(m, "RunError", device_error.ptr());
  static py::exception<hlo::HloError> hlo_error(m, "HloError", error.ptr());
  static py::exception<ConfigError> config_error(m, "ConfigError", error.ptr());
  // Translators run last-registered first: the most derived C++ types are registered last.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const RunError& e) {
      PyErr_SetString(run_error.ptr(), e.what());
    } catch (const DeviceError& e) {
      PyErr_SetString(device_error.ptr(), e.what());
    } catch (const hlo::HloError& e) {
      PyErr_SetString(hlo_error.ptr(), e.what());
    } catch (const ConfigError& e) {
      PyErr_SetString(config_error.ptr(), e.what());
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's value_error, type_error, …: the next translator maps them
    } catch (const std::runtime_error& e) {
      PyErr_SetString(error.ptr(), e.what());  // compile errors, runtime step failures, npy errors
    }
  });

  py::class_<PyBuffer>(m, "Buffer", "An allocation in device memory (freed when the last reference goes).")
      .def_property_readonly("address", &PyBuffer::address, "Device address of the first byte.")
      .def_property_readonly("size", &PyBuffer::size, "Size in bytes, as requested.")
      .def("write", &PyBuffer::Write, py::arg("data"), py::arg("offset") = 0,
           "Copies a C-contiguous array (or any bytes-like object) into the buffer at `offset`.")
      .def("read", &PyBuffer::Read, py::arg("dtype") = py::str("uint8"), py::arg("shape") = py::none(),
           py::arg("offset") = 0,
           "Reads an array of `dtype` and `shape` from `offset` (default: every whole element to the end).")
      .def("__repr__", [](const PyBuffer& b) {
        return fmt::format("<systole.Buffer address={:#x} size={}>", b.address(), b.size());
      });

  py::class_<PyProgram>(m, "Program", "A compiled model: device steps (Systole programs) and host steps.")
      .def_property_readonly("config", [](const PyProgram& p) { return p.model->config; })
      .def_property_readonly("source_name", [](const PyProgram& p) { return p.model->source_name; })
      .def_property_readonly("hlo_text", [](const PyProgram& p) { return p.model->hlo_text; })
      .def_property_readonly("placement", [](const PyProgram& p) { return Placement(*p.model); })
      .def_property_readonly("estimate", [](const PyProgram& p) { return EstimateDict(*p.model); })
      .def_property_readonly("inputs", [](const PyProgram& p) {
        py::list out;
        for (const hlo::Instruction* i : EntryParameters(*p.model->module)) out.append(ShapeDict(i->name, i->shape));
        return out;
      })
      .def_property_readonly("outputs", [](const PyProgram& p) { return OutputDescriptions(*p.model->module); })
      .def("save", [](const PyProgram& p, const std::string& path) { compiler::SaveModel(*p.model, path); },
           py::arg("path"));

  m.def("compile_text", &CompileText, py::arg("text"), py::arg("source_name"), py::arg("config"),
        py::arg("fuse") = true, py::arg("device_state") = false,
        "Compiles HLO text for a configuration (name or .toml path); device_state: a training step's state in "
        "device memory where the compiler can place its update there.");
  m.def("load", &LoadProgram, py::arg("path"), "Loads a model file written by Program.save or `systole compile`.");
  m.def(
      "select_module",
      [](const std::string& text, const std::string& source_name, const std::string& selector) {
        return hlo::SelectModuleText(text, source_name, selector);
      },
      py::arg("text"), py::arg("source_name"), py::arg("selector"),
      "The text of one module of a '// -----' separated file, by index or name (line numbers kept).");

  py::class_<PyDevice>(m, "Device", "A Systole device opened by URI.")
      .def(py::init<const std::string&, const std::string&>(), py::arg("uri"), py::arg("config"))
      .def_property_readonly("uri", &PyDevice::uri)
      .def_property_readonly("config", &PyDevice::config)
      .def_property_readonly("info", &PyDevice::Info)
      .def("allocate", &PyDevice::Allocate, py::arg("nbytes"), py::arg("alignment") = kAllocationAlignment)
      .def("counters", &PyDevice::ReadCounters)
      .def("clear_counters", &PyDevice::ClearCounters)
      .def("run", &PyDevice::Run, py::arg("program"), py::arg("inputs"), py::arg("jobs") = 1u)
      .def("_native_run_seconds", &PyDevice::NativeRunSeconds, py::arg("program"), py::arg("inputs"),
           py::arg("iterations"),
           "Benchmark baseline: seconds per call of the same run through the C++ API alone (no Python in the loop).");

  py::class_<PyTrainingSession>(m, "TrainingSession",
                                "A training step (HLO with donated state) on a device; the runtime keeps the state "
                                "between steps (docs/TRAINING.md).")
      .def(py::init<const PyDevice&, const PyProgram&, const py::sequence&>(), py::arg("device"), py::arg("program"),
           py::arg("state"))
      .def("step", &PyTrainingSession::Step, py::arg("batch"),
           "Runs one step on the batch arrays; returns {'metrics': [loss, …], 'cycles', 'macs'}.")
      .def_property("state", &PyTrainingSession::State, &PyTrainingSession::SetState,
                    "The state arrays, in the donated parameters' order.")
      .def_property_readonly("batch_size", &PyTrainingSession::batch_size);

  m.def(
      "random_inputs",
      [](const PyProgram& p, std::uint64_t seed) {
        py::list out;
        for (const hlo::Literal& literal : hlo::RandomInputs(*p.model->module, seed)) {
          for (const npy::Array& a : hlo::OutputArrays(literal)) out.append(ToNumpy(a));
        }
        return out;
      },
      py::arg("program"), py::arg("seed"),
      "The documented random inputs of `systole run --random-inputs SEED` (hlo::RandomInputs).");
  m.def(
      "interpret",
      [](const PyProgram& p, const py::sequence& inputs) {
        const std::vector<hlo::Literal> arguments = Arguments(*p.model, inputs);
        hlo::Literal result;
        {
          py::gil_scoped_release release;
          result = hlo::Interpreter(*p.model->module).Run(arguments);
        }
        py::list out;
        for (const npy::Array& a : hlo::OutputArrays(result)) out.append(ToNumpy(a));
        return out;
      },
      py::arg("program"), py::arg("inputs"),
      "Runs the program's HLO on the CPU interpreter (the numerical reference, in double).");
  m.def(
      "_native_memcpy_seconds",
      [](std::uint64_t nbytes, int iterations) {
        // Benchmark baseline: a plain memcpy of nbytes between two buffers already touched.
        std::vector<std::uint8_t> from(nbytes, 1), to(nbytes, 0);
        std::vector<double> seconds;
        py::gil_scoped_release release;
        for (int k = 0; k < iterations; ++k) {
          from[static_cast<std::size_t>(k) % from.size()] = static_cast<std::uint8_t>(k);
          const auto start = std::chrono::steady_clock::now();
          std::memcpy(to.data(), from.data(), from.size());
          seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
          if (to[static_cast<std::size_t>(k) % to.size()] != from[static_cast<std::size_t>(k) % from.size()]) {
            throw std::logic_error("memcpy baseline: copy mismatch");
          }
        }
        return seconds;
      },
      py::arg("nbytes"), py::arg("iterations"),
      "Benchmark baseline: seconds per plain memcpy of nbytes (bench/python_bench.py).");
  m.def(
      "resolve_device",
      [](const std::string& device, const std::string& fallback) {
        const DeviceResolution resolution = ResolveDevice(device, fallback);
        py::dict d;
        d["requested"] = resolution.requested;
        d["uris"] = resolution.uris;
        d["source"] = resolution.source;
        return d;
      },
      py::arg("device"), py::arg("fallback") = "ref",
      "What a device name, URI or comma-separated list stands for (devices.toml, SYSTOLE_DEVICE when empty).");
  BindTraining(m);
  m.def("configs", &ListConfigs, "Names of the configurations LoadConfig finds.");
  m.def("config_info", [](const std::string& name) { return ConfigDict(LoadConfigNameOrFile(name)); }, py::arg("config"));
}
