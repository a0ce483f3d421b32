// Loops and conditionals whose computations have device work. The host keeps the control — a
// while's condition, a conditional's branch index, the tuple a loop carries — and every call
// of a computation runs that computation's steps: its dots and convolutions on the device each
// iteration, exactly as they would run were the computation a program of its own (it is
// partitioned by the same PartitionComputation as the entry). docs/COMPILER.md, "Loops and
// conditionals".
#include <fmt/core.h>

#include <algorithm>

#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler {
namespace {

// Device steps of `step`: 1 for a device step; those of its regions, nested ones included.
std::size_t DeviceStepsIn(const Step& step) {
  std::size_t n = step.kind == Step::Kind::kDevice ? 1 : 0;
  for (const Region& region : step.regions) {
    for (const Step& inner : region.steps) n += DeviceStepsIn(inner);
  }
  return n;
}

std::string RegionRole(const hlo::Instruction& control, std::size_t index) {
  if (control.opcode == hlo::Opcode::kWhile) return index == 0 ? "condition" : "body";
  const bool on_pred = !control.operands.empty() && control.operands[0]->shape.type == hlo::ElementType::kPred;
  if (on_pred) return index == 0 ? "true branch" : "false branch";
  return fmt::format("branch {}", index);
}

}  // namespace

namespace detail {

Step PlaceControlFlow(const hlo::Instruction& control, const Config& config, const CompileOptions& options,
                      const std::string& source_name, std::size_t& built) {
  Step step{Step::Kind::kControl, control.name, "", nullptr};
  for (std::size_t c = 0; c < control.called.size(); ++c) {
    const hlo::Computation& callee = *control.called[c];
    step.regions.push_back({callee.name, RegionRole(control, c),
                            PartitionComputation(callee, config, options, source_name, built)});
  }
  if (DeviceStepsIn(step) > 0) return step;
  return {Step::Kind::kHost, control.name,
          "control flow whose computations have no device work: the interpreter runs it whole", nullptr};
}

}  // namespace detail

namespace {

void AddRows(const hlo::Module& module, const std::vector<Step>& steps, const hlo::Computation& computation,
             std::size_t depth, std::vector<PlacementRow>& rows) {
  for (const Step& step : steps) {
    rows.push_back({&step, nullptr, &computation, depth});
    for (const Region& region : step.regions) {
      const hlo::Computation* callee = module.Find(region.computation);
      if (callee == nullptr) continue;  // LoadModel refuses such a model
      rows.push_back({nullptr, &region, callee, depth + 1});
      AddRows(module, region.steps, *callee, depth + 1, rows);
    }
  }
}

}  // namespace

std::vector<PlacementRow> CompiledModel::PlacementRows() const {
  std::vector<PlacementRow> rows;
  AddRows(*module, steps, *module->entry, 0, rows);
  return rows;
}

void CompiledModel::ForEachStep(
    const std::function<void(const Step&, const hlo::Computation&, std::size_t)>& visit) const {
  for (const PlacementRow& row : PlacementRows()) {
    if (row.step != nullptr) visit(*row.step, *row.computation, row.depth);
  }
}

std::string ControlStepNote(const Step& step, const hlo::Instruction& instruction) {
  const std::size_t device = DeviceStepsIn(step);
  if (instruction.opcode == hlo::Opcode::kWhile) {
    return fmt::format("control: the host runs the loop, its condition and the tuple it carries; the number of "
                       "iterations is not known at compile time, and each runs the body's steps below ({} on the "
                       "device)",
                       device);
  }
  return fmt::format("control: the host picks the branch and runs its steps below ({} on the device in all branches)",
                     device);
}

std::vector<const DeviceStep*> CompiledModel::DeviceSteps() const {
  std::vector<const DeviceStep*> found;
  ForEachStep([&](const Step& step, const hlo::Computation&, std::size_t) {
    if (step.kind == Step::Kind::kDevice) found.push_back(step.device.get());
  });
  return found;
}

bool CompiledModel::HasControlSteps() const {
  return std::any_of(steps.begin(), steps.end(), [](const Step& step) { return step.kind == Step::Kind::kControl; });
}

}  // namespace systole::compiler
