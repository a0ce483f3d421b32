// runtime/ — running a compiled model: host steps on the interpreter, device steps through the
// driver API on any Device (ref, rtl, tcp://…), values converted between the two at each
// boundary; a loop or conditional with device work (a control step) run by the host, its
// called computations' steps each time it calls one. It sits above both the compiler (which knows no device) and the driver (which knows
// no HLO).
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "systole/device.hpp"
#include "toolchain/compiler/model.hpp"
#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/literal.hpp"

namespace systole::runtime {

using compiler::CompiledModel;
class ResidentState;

struct RunStats {
  std::uint64_t cycles = 0;     // device CYCLES, summed over the device steps
  std::uint64_t mxu_busy = 0;   // device MXU_BUSY
  std::uint64_t macs = 0;       // device MACS
  std::size_t device_steps = 0;
  std::size_t host_steps = 0;
  double host_seconds = 0;      // host steps and value conversions
  double device_seconds = 0;    // loading, launching and reading back device steps
  // Device memory the host wrote and read through the link: programs (instructions and data
  // segments) loaded, operands written, results read. Register traffic is not counted.
  std::uint64_t program_bytes = 0;       // programs loaded (0 for programs already resident)
  std::uint64_t operand_bytes = 0;       // device steps' inputs written
  std::uint64_t result_bytes = 0;        // device steps' outputs read
};

// The device steps' programs of one model, loaded into one device's memory on first use and
// kept there, so that a model run again and again (a training step) loads its instructions
// and constants once and afterwards only writes its operands and reads its results. Holds
// device memory until destroyed; `model` and `device` must outlive it. Programs after the
// first are placed where the device has room (Device::Load relocates them exactly).
class ResidentPrograms {
 public:
  // With `state` (made for this model and device), the programs that read or update training
  // state are loaded with its buffers bound (ResidentState::Bindings).
  ResidentPrograms(const CompiledModel& model, Device& device, const ResidentState* state = nullptr);
  const CompiledModel& model() const { return *model_; }
  const Device& device() const { return *device_; }
  const ResidentState* state() const { return state_; }
  // The program of `step` (one of the model's device steps, nested ones in loops included),
  // loaded if it is not yet; the bytes a load wrote are added to `program_bytes`. A loop's
  // body thus loads its programs in its first iteration only.
  systole::Program& Get(const compiler::DeviceStep& step, std::uint64_t& program_bytes);

 private:
  const CompiledModel* model_;
  Device* device_;
  const ResidentState* state_;
  std::unordered_map<const compiler::DeviceStep*, std::optional<systole::Program>> programs_;  // loaded on first use
};

// What one device step gave back: its output's bytes and the counters after it.
struct DeviceStepResult {
  std::vector<std::uint8_t> output;
  Counters counters;
};

// Runs one device step of `source_name` whose program is loaded on `device`: writes `inputs`
// (Program::WriteInput order), clears the counters, launches, waits, reads the output and the
// counters, and tells a recording timeline (Device::recording) the step's name and counters.
// Throws std::runtime_error naming the step on a device fault (and `where`, when not empty), and
// when `stop` is set while it waits.
DeviceStepResult RunLoadedStep(Device& device, systole::Program& program, const compiler::DeviceStep& step,
                               const std::vector<std::vector<std::uint8_t>>& inputs, const std::string& source_name,
                               const std::string& where = {}, const std::atomic<bool>* stop = nullptr);

// Adds `more`'s link bytes (programs, operands, results) to `total`'s.
void AddLinkBytes(RunStats& total, const RunStats& more);

struct RunResult {
  hlo::Literal result;  // the entry root's value
  RunStats stats;
};

// What one device step wrote to the device and read back from it: its inputs as the bytes
// written (Program::WriteInput order), its output's bytes and the counters after it. Enough to
// run the step again on another device and compare (parallel_steps.hpp).
struct DeviceStepRecord {
  std::vector<std::vector<std::uint8_t>> inputs;
  std::vector<std::uint8_t> output;
  Counters counters;
};

// The device bytes of `value` laid out as `binding` says (a kValue binding: transpose, column
// blocking, element type), as a device step's input is written; a kBias binding of a vector
// value: the vector replicated over the binding's rows ([N/C, rows, C], ReplicatedBias).
std::vector<std::uint8_t> EncodeValue(const compiler::Binding& binding, const hlo::Literal& value);
// A per-channel vector as the drains of a raw (fp32) output start from it: [N/C, rows, C], every
// row the vector, the padding columns zero (lower_dot_conv.cpp).
std::vector<double> ReplicatedBias(const std::vector<double>& bias, const std::vector<std::uint64_t>& shape);
// The inverse: device bytes laid out as `binding` says, back to a value of `shape`.
hlo::Literal DecodeValue(const compiler::Binding& binding, const std::vector<std::uint8_t>& bytes, const hlo::Shape& shape);

// Runs `model` with `arguments` (entry parameters in order, shapes as declared). `progress`
// (may be empty) hears about each device step. With `resident` (made for this model and
// device) the device steps reuse its programs instead of loading their own; the results are
// the same either way. Throws std::runtime_error naming the step on a device fault or timeout,
// std::invalid_argument when `resident` belongs to another model or device. With `record`,
// every device step's bytes and counters are appended to it in the order the steps ran (a
// loop's body once per iteration). A loop (a control step) still running after
// `while_iteration_limit` iterations throws the interpreter's hlo::HloError naming it.
// A model with training state in device memory (CompiledModel::state_tensors) runs on `state`,
// which already holds the state parameters' values: their arguments are not written, and the
// root's new parameters and momenta are placeholders (zeros) that the caller reads from `state`
// when it needs them (TrainingSession). Without `state`, Execute makes one, writes it from
// `arguments` and reads the root's state values back: the same result as a model without.
// `resident` programs of such a model must have been made with `state` (std::invalid_argument
// otherwise: their update programs are bound to that state's buffers).
RunResult Execute(const CompiledModel& model, Device& device, const std::vector<hlo::Literal>& arguments,
                  const std::function<void(const std::string&)>& progress = {},
                  ResidentPrograms* resident = nullptr, std::vector<DeviceStepRecord>* record = nullptr,
                  std::int64_t while_iteration_limit = hlo::Interpreter::kDefaultWhileIterationLimit,
                  ResidentState* state = nullptr);

// Random inputs shaped like a trained network's, for demonstrations and tests of deep models:
// hlo::RandomInputs(module, seed), then every parameter that is the weights (operand 1) of a
// dot or convolution is scaled by sqrt(3 / fan-in) (He-style: activations keep their size
// through many layers) and every rank-1 parameter (biases, batch-norm scale, shift, mean,
// variance) is mapped into [0.5, 1.5), so variances are positive. Plain uniform [-1, 1)
// inputs make ResNet-50's batch norms take rsqrt of negative variances.
std::vector<hlo::Literal> NetworkInputs(const hlo::Module& module, std::uint64_t seed);

// `data` (row-major, dimensions `dims`) with the dimensions in `reversed` read back to front.
std::vector<double> Reverse(std::vector<double> data, const std::vector<std::int64_t>& dims,
                            const std::vector<std::int64_t>& reversed);
// Values in device order: `data` has row-major dims `dims`; the result has dims
// dims[permutation[0]], dims[permutation[1]], … (a transpose).
std::vector<double> Permute(const std::vector<double>& data, const std::vector<std::int64_t>& dims,
                            const std::vector<std::int64_t>& permutation);

}  // namespace systole::runtime
