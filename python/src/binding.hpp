// python/src — what the extension's source files share: the handle every Python object made
// from a Device holds (with the lock that keeps the driver's one-thread-per-Device rule), the
// compiled program, NumPy conversion, and each file's bindings.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <string>

#include "systole/device.hpp"
#include "toolchain/compiler/model.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::python {

namespace py = pybind11;

// A Device shared by its Python handle and the buffers and trainers made from it.
struct DeviceHolder {
  explicit DeviceHolder(Device opened) : device(std::move(opened)) {}
  Device device;
  std::mutex mutex;  // the driver allows one thread at a time per Device
};

// A compiled model (compiler::CompiledModel), immutable once made.
struct PyProgram {
  std::shared_ptr<const compiler::CompiledModel> model;
};

// An .npy-typed array as a NumPy array of the same type (module.cpp).
py::array ToNumpy(const npy::Array& array);

// The holder behind a systole._systole.Device; a TypeError naming `what` for anything else
// (module.cpp, where the Device class is).
std::shared_ptr<DeviceHolder> DeviceHolderOf(const py::handle& device, const std::string& what);

// A ValueError when `model` is compiled for another configuration than `device` reports.
void CheckProgramConfig(const compiler::CompiledModel& model, const Device& device);

// systole._systole.Trainer: runtime::TrainLoop over one device or a pod (training.cpp).
void BindTraining(py::module_& module);

}  // namespace systole::python
