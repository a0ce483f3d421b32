// runtime/ — running a compiled model: host steps on the interpreter, device steps through the
// driver API on any Device (ref, rtl, tcp://…), values converted between the two at each
// boundary. It sits above both the compiler (which knows no device) and the driver (which knows
// no HLO).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "systole/device.hpp"
#include "toolchain/compiler/model.hpp"
#include "toolchain/hlo/literal.hpp"

namespace systole::runtime {

using compiler::CompiledModel;

struct RunStats {
  std::uint64_t cycles = 0;     // device CYCLES, summed over the device steps
  std::uint64_t mxu_busy = 0;   // device MXU_BUSY
  std::uint64_t macs = 0;       // device MACS
  std::size_t device_steps = 0;
  std::size_t host_steps = 0;
  double host_seconds = 0;      // host steps and value conversions
  double device_seconds = 0;    // loading, launching and reading back device steps
};

struct RunResult {
  hlo::Literal result;  // the entry root's value
  RunStats stats;
};

// Runs `model` with `arguments` (entry parameters in order, shapes as declared). `progress`
// (may be empty) hears about each device step. Throws std::runtime_error naming the step on
// a device fault or timeout.
RunResult Execute(const CompiledModel& model, Device& device, const std::vector<hlo::Literal>& arguments,
                  const std::function<void(const std::string&)>& progress = {});

// Random inputs shaped like a trained network's, for demonstrations and tests of deep models:
// hlo::RandomInputs(module, seed), then every parameter that is the weights (operand 1) of a
// dot or convolution is scaled by sqrt(3 / fan-in) (He-style: activations keep their size
// through many layers) and every rank-1 parameter (biases, batch-norm scale, shift, mean,
// variance) is mapped into [0.5, 1.5), so variances are positive. Plain uniform [-1, 1)
// inputs make ResNet-50's batch norms take rsqrt of negative variances.
std::vector<hlo::Literal> NetworkInputs(const hlo::Module& module, std::uint64_t seed);

// Values in device order: `data` has row-major dims `dims`; the result has dims
// dims[permutation[0]], dims[permutation[1]], … (a transpose).
std::vector<double> Permute(const std::vector<double>& data, const std::vector<std::int64_t>& dims,
                            const std::vector<std::int64_t>& permutation);

}  // namespace systole::runtime
