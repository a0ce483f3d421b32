// Where a placement of training state in device memory looks (place_state.cpp): the entry
// computation, or the body of a while loop of training steps that carries donated state, and how
// the state is named outside it.
#pragma once

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "toolchain/compiler/model.hpp"
#include "toolchain/compiler/optimizer_match.hpp"

namespace systole::compiler::detail {

// The computation a placement looks into, and how its state is named outside it: the entry
// (the state inputs are its donated parameters, the new values the root operands they alias),
// or the body of a while loop that carries donated state (the state inputs are the body's
// get-tuple-elements of it, named by the entry parameters that start the loop; the new values
// the body root's operands, named by the entry root operands that the loop's results reach).
struct StateScope {
  using Instruction = hlo::Instruction;
  std::vector<Step>* steps = nullptr;
  const hlo::Computation* computation = nullptr;
  std::vector<std::pair<const Instruction*, const Instruction*>> aliases;  // new value -> state input, in order
  AliasMap alias_of_output;                                                // the same, as a map
  std::unordered_map<const Instruction*, const Instruction*> entry_parameter;  // state input -> entry parameter
  std::unordered_map<const Instruction*, const Instruction*> entry_output;     // new value -> entry root operand
  // Tuples that carry new values on their way to the root (an inlined call's result), which may
  // read them as the root may.
  std::unordered_set<const Instruction*> forwards;

  // The entry parameter a state input stands for (the state tensor's name and the value it is
  // written from).
  const Instruction& Parameter(const Instruction* input) const {
    const auto it = entry_parameter.find(input);
    return it == entry_parameter.end() ? *input : *it->second;
  }
  // The entry root operand a new value reaches (the state tensor is read back as it).
  const Instruction& Output(const Instruction* value) const {
    const auto it = entry_output.find(value);
    return it == entry_output.end() ? *value : *it->second;
  }
};

// The entry's scope: its donated parameters and the root operands they alias. Nothing when an
// alias is not a whole array parameter to a whole root operand, or the root is not a tuple.
std::optional<StateScope> EntryScope(CompiledModel& model);

// The scope of a while loop of the entry (`control`, its control step) that carries donated
// state (EntryScope's aliases): element i of the tuple it starts from is a donated parameter p,
// the entry root operand p aliases is the loop result's element i (and nothing else of the entry
// reads p or that element), the body reads element i through one get-tuple-element s_i and
// returns its new value as element i of its root tuple (directly or through the tuple an inlined
// call returns), and the condition does not read it; the body reads its tuple only through
// get-tuple-elements. Then s_i is a state input named p, and the
// new value is read back as the entry root operand. Nothing when no element qualifies.
std::optional<StateScope> LoopScope(CompiledModel& model, Step& control, const StateScope& entry);

}  // namespace systole::compiler::detail
