// Where training state lives for a placement (state_scope.hpp).
#include "toolchain/compiler/state_scope.hpp"

#include <algorithm>

namespace systole::compiler::detail {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Whether `computation`'s root depends on element `index` of its (tuple) parameter.
bool ReadsTupleElement(const hlo::Computation& computation, std::int64_t index) {
  std::vector<const Instruction*> todo{computation.root};
  std::unordered_set<const Instruction*> seen;
  while (!todo.empty()) {
    const Instruction* i = todo.back();
    todo.pop_back();
    if (!seen.insert(i).second) continue;
    if (i->opcode == Opcode::kParameter) return true;  // the whole tuple
    if (i->opcode == Opcode::kGetTupleElement && i->operands[0]->opcode == Opcode::kParameter) {
      if (i->tuple_index == index) return true;
      continue;
    }
    for (const Instruction* operand : i->operands) todo.push_back(operand);
  }
  return false;
}

}  // namespace

std::optional<StateScope> EntryScope(CompiledModel& model) {
  const hlo::Computation& entry = *model.module->entry;
  const Instruction* root = entry.root;
  if (root->opcode != Opcode::kTuple) return std::nullopt;
  const std::vector<Instruction*> parameters = entry.Parameters();
  StateScope scope;
  scope.steps = &model.steps;
  scope.computation = &entry;
  for (const hlo::InputOutputAlias& alias : model.module->input_output_aliases) {
    if (alias.output_index.size() != 1 || !alias.parameter_index.empty()) return std::nullopt;
    const auto output = static_cast<std::size_t>(alias.output_index[0]);
    const auto parameter = static_cast<std::size_t>(alias.parameter);
    if (output >= root->operands.size() || parameter >= parameters.size() || parameters[parameter] == nullptr) {
      return std::nullopt;
    }
    scope.aliases.emplace_back(root->operands[output], parameters[parameter]);
    scope.alias_of_output[root->operands[output]] = parameters[parameter];
  }
  return scope;
}

std::optional<StateScope> LoopScope(CompiledModel& model, Step& control, const StateScope& entry) {
  const hlo::Computation& computation = *model.module->entry;
  const Instruction* loop = computation.Find(control.instruction);
  if (loop == nullptr || loop->opcode != Opcode::kWhile || control.regions.size() != 2) return std::nullopt;
  const Instruction* start = loop->operands.at(0);
  const hlo::Computation& condition = *loop->called.at(0);
  const hlo::Computation& body = *loop->called.at(1);
  if (start->opcode != Opcode::kTuple || body.root->opcode != Opcode::kTuple) return std::nullopt;
  const std::vector<Instruction*> body_parameters = body.Parameters();
  if (body_parameters.size() != 1 || body_parameters[0] == nullptr) return std::nullopt;
  // The body reads its tuple element by element: anything that takes the whole tuple (a call
  // left in place, a copy) could read the state, which the host then holds as a placeholder.
  for (const auto& i : body.instructions) {
    if (i->opcode == Opcode::kGetTupleElement) continue;
    for (const Instruction* operand : i->operands) {
      if (operand == body_parameters[0]) return std::nullopt;
    }
  }
  // Who reads what in the entry, by instruction.
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> entry_readers;
  for (const auto& i : computation.instructions) {
    for (const Instruction* operand : i->operands) entry_readers[operand].push_back(i.get());
  }
  const auto read_only_by = [&](const Instruction* value, const Instruction* reader) {
    const auto it = entry_readers.find(value);
    return it != entry_readers.end() &&
           std::all_of(it->second.begin(), it->second.end(), [&](const Instruction* r) { return r == reader; });
  };
  StateScope scope;
  scope.steps = &control.regions[1].steps;
  scope.computation = &body;
  for (const auto& [output, parameter] : entry.aliases) {
    if (output->opcode != Opcode::kGetTupleElement || output->operands[0] != loop) continue;
    const std::int64_t index = output->tuple_index;
    if (start->operands.at(static_cast<std::size_t>(index)) != parameter || !read_only_by(parameter, start) ||
        !read_only_by(output, computation.root) || ReadsTupleElement(condition, index)) {
      continue;
    }
    const Instruction* input = nullptr;  // the body's one get-tuple-element of element `index`
    std::size_t found = 0;
    for (const auto& i : body.instructions) {
      if (i->opcode == Opcode::kGetTupleElement && i->operands[0] == body_parameters[0] && i->tuple_index == index) {
        input = i.get();
        ++found;
      }
    }
    if (found != 1) continue;
    // The new value, through the tuples an inlined call returns it in (get-tuple-element of a tuple).
    const Instruction* value = body.root->operands.at(static_cast<std::size_t>(index));
    while (value->opcode == Opcode::kGetTupleElement && value->operands[0]->opcode == Opcode::kTuple) {
      scope.forwards.insert(value->operands[0]);
      value = value->operands[0]->operands.at(static_cast<std::size_t>(value->tuple_index));
    }
    scope.aliases.emplace_back(value, input);
    scope.alias_of_output[value] = input;
    scope.entry_parameter[input] = parameter;
    scope.entry_output[value] = output;
  }
  if (scope.aliases.empty()) return std::nullopt;
  return scope;
}

}  // namespace systole::compiler::detail
