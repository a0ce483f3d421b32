// What each host step does: produce a value (parameter, constant), move data (reshape,
// broadcast, transpose, tuple, …), compute the drain vectors of device steps from the model's
// parameters alone (batch norm's scale and shift: parameter arithmetic), or compute on the
// program's activations. Only the last is work the device should have done; `systole compile
// --json` counts it as `host_compute_steps` (docs/COMPILER.md, "Host steps").
#include <fmt/core.h>

#include <unordered_map>

#include "toolchain/compiler/model.hpp"

namespace systole::compiler {
namespace {

using hlo::Opcode;

// Who reads a value: a host step (by index), or a device step as weights / a drain vector
// (the runtime folds those into the step's weights and bias) or as data.
struct Reader {
  std::size_t host_step = SIZE_MAX;  // SIZE_MAX: a device step
  bool as_weights = false;
};

}  // namespace

std::string_view HostWorkName(HostWork work) {
  switch (work) {
    case HostWork::kValue: return "value";
    case HostWork::kDataMovement: return "data movement";
    case HostWork::kParameters: return "parameter arithmetic";
    case HostWork::kCompute: return "compute";
  }
  return "?";
}

std::string HostStepNote(const Step& step) {
  const std::string_view work = HostWorkName(step.work);
  if (step.reason == work || step.reason.starts_with("parameters only")) return step.reason;
  return fmt::format("{}: {}", work, step.reason);
}

bool MovesDataOnly(Opcode opcode) {
  switch (opcode) {
    case Opcode::kBitcast:
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGather:
    case Opcode::kGetTupleElement:
    case Opcode::kPad:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
    case Opcode::kTuple:
    case Opcode::kCopy:
    case Opcode::kConvert:
      return true;
    default:
      return false;
  }
}

bool ProducesValue(Opcode opcode) {
  return opcode == Opcode::kParameter || opcode == Opcode::kConstant || opcode == Opcode::kIota;
}

namespace {

// ClassifyHostSteps for the steps of one computation (the entry, or a region's), then for the
// regions of its control steps. A control step reads its operands as a host step does.
void ClassifySteps(const hlo::Module& module, std::vector<Step>& steps, const hlo::Computation& computation) {
  std::unordered_map<std::string, std::vector<Reader>> readers;
  std::unordered_map<std::string, std::size_t> host_step_of;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    if (step.kind != Step::Kind::kDevice) {
      if (step.kind == Step::Kind::kHost) host_step_of[step.instruction] = s;
      for (const hlo::Instruction* operand : computation.Find(step.instruction)->operands) {
        readers[operand->name].push_back({s, false});
      }
      continue;
    }
    for (const Binding& binding : step.device->inputs) {
      if (binding.kind != Binding::Kind::kBias && binding.kind != Binding::Kind::kState) {
        readers[binding.value].push_back({SIZE_MAX, binding.kind == Binding::Kind::kWeights});
      }
    }
    for (const EpilogueTerm& term : step.device->epilogue) readers[term.operand].push_back({SIZE_MAX, true});
  }

  // Forward: which host values depend on parameters and constants only (no device result).
  std::vector<bool> inputs_only(steps.size(), false);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    if (steps[s].kind != Step::Kind::kHost) continue;
    bool only = true;
    for (const hlo::Instruction* operand : computation.Find(steps[s].instruction)->operands) {
      if (operand->opcode == Opcode::kParameter) continue;
      const auto it = host_step_of.find(operand->name);
      only = only && it != host_step_of.end() && inputs_only[it->second];
    }
    inputs_only[s] = only;
  }
  // Backward: which host values reach device steps only as weights or drain vectors (a control
  // step's reads count as computing).
  std::vector<bool> weights_only(steps.size(), false);
  for (std::size_t s = steps.size(); s-- > 0;) {
    Step& step = steps[s];
    for (Region& region : step.regions) {
      if (const hlo::Computation* callee = module.Find(region.computation)) ClassifySteps(module, region.steps, *callee);
    }
    if (step.kind != Step::Kind::kHost) continue;
    const auto it = readers.find(step.instruction);
    bool only = it != readers.end() && step.instruction != computation.root->name;
    if (only) {
      for (const Reader& r : it->second) {
        only = only && (r.host_step == SIZE_MAX ? r.as_weights : weights_only[r.host_step]);
      }
    }
    weights_only[s] = only;
    const Opcode opcode = computation.Find(step.instruction)->opcode;
    if (ProducesValue(opcode)) {
      step.work = HostWork::kValue;
    } else if (MovesDataOnly(opcode)) {
      step.work = HostWork::kDataMovement;
    } else {
      step.work = only && inputs_only[s] ? HostWork::kParameters : HostWork::kCompute;
    }
  }
}

}  // namespace

void ClassifyHostSteps(CompiledModel& model) { ClassifySteps(*model.module, model.steps, *model.module->entry); }

std::size_t CompiledModel::HostStepCount(HostWork work) const {
  std::size_t n = 0;
  ForEachStep([&](const Step& step, const hlo::Computation&, std::size_t) {
    n += step.kind == Step::Kind::kHost && step.work == work ? 1 : 0;
  });
  return n;
}

}  // namespace systole::compiler
