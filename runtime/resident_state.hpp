// runtime/ — training state that stays in device memory between runs of a training step (the
// compiler's StateTensor list, CompileOptions::device_state): one driver Buffer per state
// tensor, bound by name into every program that reads or updates it (Device::Load with
// bindings), written from host values once and read back only when the host asks for the state
// (an evaluation, a checkpoint). docs/TRAINING.md, "State in device memory".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "systole/device.hpp"
#include "toolchain/compiler/model.hpp"
#include "toolchain/hlo/literal.hpp"

namespace systole::runtime {

class ResidentState {
 public:
  // Allocates a buffer for each of `model`'s state tensors (none are written yet). `model` and
  // `device` must outlive it.
  ResidentState(const compiler::CompiledModel& model, Device& device);

  const compiler::CompiledModel& model() const { return *model_; }
  // Whether the entry parameter `parameter` lives here.
  bool Holds(const std::string& parameter) const;
  // Writes every state tensor of `parameter` (each layout, fp32 and element-type copies) from
  // its value. Returns the bytes written.
  std::uint64_t Write(const std::string& parameter, const hlo::Literal& value);
  // Writes every state tensor from `arguments`, the entry's parameters in order.
  std::uint64_t WriteAll(const std::vector<hlo::Literal>& arguments);
  // The parameter's value now, read from its fp32 tensor (the first layout: every layout holds
  // the same values). `bytes_read` grows by what crossed the link.
  hlo::Literal Read(const std::string& parameter, std::uint64_t& bytes_read) const;
  // The value of the root operand `output` (a new parameter or momentum an update step left
  // here): the tensor that holds it, read back. Throws std::logic_error when none does.
  hlo::Literal ReadOutput(const std::string& output, std::uint64_t& bytes_read) const;
  // Whether some state tensor holds the root operand `output`.
  bool HoldsOutput(const std::string& output) const;
  // The step's kState inputs bound to their buffers, for Device::Load.
  std::vector<TensorBinding> Bindings(const compiler::DeviceStep& step) const;

 private:
  struct Held {
    const compiler::StateTensor* tensor;
    Buffer buffer;
  };
  const Held& Find(const std::string& name) const;
  hlo::Literal ReadTensor(const Held& held, std::uint64_t& bytes_read) const;

  const compiler::CompiledModel* model_;
  std::vector<Held> held_;
};

}  // namespace systole::runtime
