#include "toolchain/hlo/verifier.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "toolchain/hlo/shape_inference.hpp"

namespace systole::hlo {

namespace {

[[noreturn]] void Fail(const Instruction& instruction, const std::string& message) {
  throw HloError(instruction.location, fmt::format("instruction '{}': {}", instruction.name, message));
}

// Operands must be defined in the same computation, and the graph must be acyclic.
void VerifyGraph(const Computation& computation) {
  enum class Mark : std::uint8_t { kUnvisited, kActive, kDone };
  std::unordered_map<const Instruction*, Mark> marks;
  for (const auto& instruction : computation.instructions) marks[instruction.get()] = Mark::kUnvisited;
  for (const auto& instruction : computation.instructions) {
    for (const Instruction* operand : instruction->operands) {
      if (!marks.contains(operand)) {
        Fail(*instruction, fmt::format("operand '{}' is not in computation '{}'", operand->name, computation.name));
      }
    }
  }
  for (const auto& start : computation.instructions) {
    if (marks[start.get()] != Mark::kUnvisited) continue;
    std::vector<std::pair<const Instruction*, std::size_t>> stack{{start.get(), 0}};
    marks[start.get()] = Mark::kActive;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operands.size()) {
        const Instruction* operand = node->operands[next++];
        const Mark mark = marks[operand];
        if (mark == Mark::kActive) Fail(*operand, "is part of a cycle (it depends on itself)");
        if (mark == Mark::kUnvisited) {
          marks[operand] = Mark::kActive;
          stack.emplace_back(operand, 0);
        }
      } else {
        marks[node] = Mark::kDone;
        stack.pop_back();
      }
    }
  }
}

void VerifyParameters(const Computation& computation) {
  std::unordered_map<std::int64_t, const Instruction*> seen;
  for (const auto& instruction : computation.instructions) {
    if (instruction->opcode != Opcode::kParameter) continue;
    const auto [it, inserted] = seen.emplace(instruction->parameter_number, instruction.get());
    if (!inserted) {
      Fail(*instruction, fmt::format("parameter number {} is also used by '{}'", instruction->parameter_number,
                                     it->second->name));
    }
    if (!instruction->shape.IsArray() && !instruction->shape.IsTuple()) Fail(*instruction, "has no array shape");
  }
  for (const auto& [number, instruction] : seen) {
    if (number < 0 || static_cast<std::size_t>(number) >= seen.size()) {
      Fail(*instruction, fmt::format("parameter number {} leaves a gap: computation '{}' has {} parameter(s)", number,
                                     computation.name, seen.size()));
    }
  }
}

// Calls must not recurse: the interpreter and the inliner follow them depth-first.
void VerifyNoRecursion(const Module& module) {
  enum class Mark : std::uint8_t { kUnvisited, kActive, kDone };
  std::unordered_map<const Computation*, Mark> marks;
  std::vector<std::pair<const Computation*, std::vector<const Computation*>>> stack;
  auto callees = [](const Computation* computation) {
    std::vector<const Computation*> out;
    for (const auto& instruction : computation->instructions) {
      for (const Computation* callee : instruction->called) out.push_back(callee);
    }
    return out;
  };
  for (const auto& root : module.computations) {
    if (marks[root.get()] != Mark::kUnvisited) continue;
    marks[root.get()] = Mark::kActive;
    stack.emplace_back(root.get(), callees(root.get()));
    while (!stack.empty()) {
      auto& [computation, pending] = stack.back();
      if (pending.empty()) {
        marks[computation] = Mark::kDone;
        stack.pop_back();
        continue;
      }
      const Computation* callee = pending.back();
      pending.pop_back();
      if (marks[callee] == Mark::kActive) {
        throw HloError(callee->location, fmt::format("computation '{}' calls itself (recursion is not allowed)",
                                                     callee->name));
      }
      if (marks[callee] == Mark::kUnvisited) {
        marks[callee] = Mark::kActive;
        stack.emplace_back(callee, callees(callee));
      }
    }
  }
}

// The shape at a tuple index path, or nullptr when the path leaves the shape.
const Shape* ShapeAt(const Shape& shape, const std::vector<std::int64_t>& index) {
  const Shape* at = &shape;
  for (const std::int64_t i : index) {
    if (!at->IsTuple() || i < 0 || i >= static_cast<std::int64_t>(at->tuple.size())) return nullptr;
    at = &at->tuple[static_cast<std::size_t>(i)];
  }
  return at;
}

std::string IndexText(const std::vector<std::int64_t>& index) { return fmt::format("{{{}}}", fmt::join(index, ", ")); }

// input_output_alias: each entry names an entry parameter and an output of the same shape,
// and no output is aliased twice.
void VerifyAliases(const Module& module) {
  std::unordered_map<std::int64_t, const Instruction*> parameters;
  for (const auto& instruction : module.entry->instructions) {
    if (instruction->opcode == Opcode::kParameter) parameters[instruction->parameter_number] = instruction.get();
  }
  std::vector<std::vector<std::int64_t>> outputs;
  for (const InputOutputAlias& alias : module.input_output_aliases) {
    const auto fail = [&](const std::string& message) {
      throw HloError(alias.location, fmt::format("input_output_alias {}: {}", IndexText(alias.output_index), message));
    };
    const auto parameter = parameters.find(alias.parameter);
    if (parameter == parameters.end()) {
      fail(fmt::format("the entry computation has no parameter {} ({} parameters)", alias.parameter,
                       parameters.size()));
    }
    const Shape* output = ShapeAt(module.entry->root->shape, alias.output_index);
    if (output == nullptr) fail(fmt::format("no such output in {}", module.entry->root->shape.ToString()));
    const Shape* input = ShapeAt(parameter->second->shape, alias.parameter_index);
    if (input == nullptr) {
      fail(fmt::format("parameter {} has no element {}", alias.parameter, IndexText(alias.parameter_index)));
    }
    if (!output->SameAs(*input)) {
      fail(fmt::format("the output is {} but parameter {} {} is {}", output->ToString(), alias.parameter,
                       IndexText(alias.parameter_index), input->ToString()));
    }
    if (std::find(outputs.begin(), outputs.end(), alias.output_index) != outputs.end()) fail("aliased twice");
    outputs.push_back(alias.output_index);
  }
}

}  // namespace

void Verify(const Module& module) {
  if (module.entry == nullptr) throw HloError(fmt::format("module '{}' has no entry computation", module.name));
  std::unordered_set<const Computation*> computations;
  for (const auto& computation : module.computations) computations.insert(computation.get());
  if (!computations.contains(module.entry)) throw HloError("the entry computation is not in the module");
  for (const auto& computation : module.computations) {
    if (computation->root == nullptr) {
      throw HloError(computation->location, fmt::format("computation '{}' has no root", computation->name));
    }
    bool root_inside = false;
    for (const auto& instruction : computation->instructions) {
      root_inside = root_inside || instruction.get() == computation->root;
      for (const Computation* callee : instruction->called) {
        if (!computations.contains(callee)) Fail(*instruction, "calls a computation outside the module");
      }
    }
    if (!root_inside) {
      throw HloError(computation->location, fmt::format("root of computation '{}' is not one of its instructions",
                                                        computation->name));
    }
    VerifyGraph(*computation);
    VerifyParameters(*computation);
  }
  VerifyNoRecursion(module);
  VerifyAliases(module);
  for (const auto& computation : module.computations) {
    for (const auto& instruction : computation->instructions) {
      const Shape inferred = InferShape(*instruction);
      if (!inferred.SameAs(instruction->shape)) {
        Fail(*instruction, fmt::format("printed shape {} differs from the inferred shape {}",
                                       instruction->shape.ToString(), inferred.ToString()));
      }
    }
  }
}

}  // namespace systole::hlo
