#include "runtime/resident_state.hpp"

#include <fmt/core.h>

#include <stdexcept>

#include "runtime/execute.hpp"

namespace systole::runtime {

ResidentState::ResidentState(const compiler::CompiledModel& model, Device& device) : model_(&model) {
  for (const compiler::StateTensor& tensor : model.state_tensors) {
    std::uint64_t bytes = image::DataTypeBytes(tensor.layout.dtype);
    for (const std::uint64_t d : tensor.layout.shape) bytes *= d;
    held_.push_back({&tensor, device.Allocate(bytes)});
  }
}

bool ResidentState::Holds(const std::string& parameter) const {
  for (const Held& held : held_) {
    if (held.tensor->layout.value == parameter) return true;
  }
  return false;
}

bool ResidentState::HoldsOutput(const std::string& output) const {
  for (const Held& held : held_) {
    if (held.tensor->output == output) return true;
  }
  return false;
}

std::uint64_t ResidentState::Write(const std::string& parameter, const hlo::Literal& value) {
  std::uint64_t bytes = 0;
  for (Held& held : held_) {
    if (held.tensor->layout.value != parameter) continue;
    const std::vector<std::uint8_t> data = EncodeValue(held.tensor->layout, value);
    held.buffer.Write(data);
    bytes += data.size();
  }
  return bytes;
}

std::uint64_t ResidentState::WriteAll(const std::vector<hlo::Literal>& arguments) {
  const auto parameters = model_->module->entry->Parameters();
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < parameters.size() && i < arguments.size(); ++i) {
    if (parameters[i] != nullptr && Holds(parameters[i]->name)) bytes += Write(parameters[i]->name, arguments[i]);
  }
  return bytes;
}

const ResidentState::Held& ResidentState::Find(const std::string& name) const {
  for (const Held& held : held_) {
    if (held.tensor->name == name) return held;
  }
  throw std::logic_error(fmt::format("{}: no state tensor '{}'", model_->source_name, name));
}

hlo::Literal ResidentState::ReadTensor(const Held& held, std::uint64_t& bytes_read) const {
  const hlo::Instruction* parameter = model_->module->entry->Find(held.tensor->layout.value);
  if (parameter == nullptr) throw std::logic_error(fmt::format("{}: no parameter {}", model_->source_name, held.tensor->layout.value));
  const std::vector<std::uint8_t> bytes = held.buffer.Read();
  bytes_read += bytes.size();
  return DecodeValue(held.tensor->layout, bytes, parameter->shape);
}

hlo::Literal ResidentState::Read(const std::string& parameter, std::uint64_t& bytes_read) const {
  for (const Held& held : held_) {
    if (held.tensor->layout.value == parameter && !held.tensor->output.empty()) return ReadTensor(held, bytes_read);
  }
  throw std::logic_error(fmt::format("{}: parameter {} is not held on the device", model_->source_name, parameter));
}

hlo::Literal ResidentState::ReadOutput(const std::string& output, std::uint64_t& bytes_read) const {
  for (const Held& held : held_) {
    if (held.tensor->output == output) return ReadTensor(held, bytes_read);
  }
  throw std::logic_error(fmt::format("{}: value {} is not held on the device", model_->source_name, output));
}

std::vector<TensorBinding> ResidentState::Bindings(const compiler::DeviceStep& step) const {
  std::vector<TensorBinding> bindings;
  for (std::size_t i = 0; i < step.inputs.size(); ++i) {
    if (step.inputs[i].kind == compiler::Binding::Kind::kState) {
      bindings.push_back({step.program.inputs.at(i).name, Find(step.inputs[i].value).buffer});
    }
  }
  return bindings;
}

}  // namespace systole::runtime
