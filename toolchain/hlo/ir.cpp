#include "toolchain/hlo/ir.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <unordered_set>

namespace systole::hlo {

namespace {

struct OpcodeEntry {
  Opcode opcode;
  std::string_view name;
};

constexpr std::array kOpcodes{
#define SYSTOLE_HLO_ENTRY(e, n) OpcodeEntry{Opcode::e, n},
    SYSTOLE_HLO_OPCODES(SYSTOLE_HLO_ENTRY)
#undef SYSTOLE_HLO_ENTRY
};

}  // namespace

std::string_view OpcodeName(Opcode opcode) {
  return kOpcodes[static_cast<std::size_t>(opcode)].name;
}

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  for (const OpcodeEntry& entry : kOpcodes) {
    if (entry.name == name) return entry.opcode;
  }
  return std::nullopt;
}

bool IsElementwiseUnary(Opcode opcode) {
  return opcode >= Opcode::kAbs && opcode <= Opcode::kTanh;
}

bool IsElementwiseBinary(Opcode opcode) {
  return opcode >= Opcode::kAdd && opcode <= Opcode::kXor;
}

std::string_view ComparisonDirectionName(ComparisonDirection direction) {
  static constexpr std::array<std::string_view, 6> kNames{"EQ", "NE", "LT", "LE", "GT", "GE"};
  return kNames[static_cast<std::size_t>(direction)];
}

std::string Instruction::Describe() const {
  std::string text = "%" + name + " = " + shape.ToString() + " " + std::string(OpcodeName(opcode)) + "(";
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (i > 0) text += ", ";
    text += "%" + operands[i]->name;
  }
  return text + ")";
}

std::vector<Instruction*> Computation::Parameters() const {
  std::vector<Instruction*> parameters;
  for (const auto& instruction : instructions) {
    if (instruction->opcode != Opcode::kParameter || instruction->parameter_number < 0) continue;
    const auto number = static_cast<std::size_t>(instruction->parameter_number);
    if (number >= instructions.size()) continue;  // absurd number: the verifier reports it
    if (parameters.size() <= number) parameters.resize(number + 1, nullptr);
    parameters[number] = instruction.get();
  }
  return parameters;
}

std::vector<Instruction*> Computation::PostOrder() const {
  std::vector<Instruction*> order;
  if (root == nullptr) return order;
  std::unordered_set<const Instruction*> visited;
  // Iterative DFS: ResNet-sized graphs are deep enough to make recursion a risk.
  std::vector<std::pair<Instruction*, std::size_t>> stack{{root, 0}};
  visited.insert(root);
  while (!stack.empty()) {
    auto& [node, next_operand] = stack.back();
    if (next_operand < node->operands.size()) {
      Instruction* operand = node->operands[next_operand++];
      if (visited.insert(operand).second) stack.emplace_back(operand, 0);
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

Instruction* Computation::Find(std::string_view instruction_name) const {
  for (const auto& instruction : instructions) {
    if (instruction->name == instruction_name) return instruction.get();
  }
  return nullptr;
}

Instruction* Computation::Insert(std::unique_ptr<Instruction> instruction, const Instruction* position) {
  auto where = std::find_if(instructions.begin(), instructions.end(),
                            [&](const auto& i) { return i.get() == position; });
  return instructions.insert(where, std::move(instruction))->get();
}

void Computation::ReplaceAllUses(const Instruction* from, Instruction* to) {
  for (const auto& instruction : instructions) {
    for (Instruction*& operand : instruction->operands) {
      if (operand == from) operand = to;
    }
  }
  if (root == from) root = to;
}

std::string Computation::UniqueName(std::string_view base) const {
  std::unordered_set<std::string_view> taken;
  for (const auto& instruction : instructions) taken.insert(instruction->name);
  std::string candidate(base);
  for (int suffix = 1; taken.contains(candidate); ++suffix) {
    candidate = std::string(base) + "." + std::to_string(suffix);
  }
  return candidate;
}

Computation* Module::Find(std::string_view computation_name) const {
  for (const auto& computation : computations) {
    if (computation->name == computation_name) return computation.get();
  }
  return nullptr;
}

std::string SourceLine(const StackFrameIndex& index, const OpMetadata& m) {
  const auto at = [](const auto& table, std::int64_t id) -> const auto* {
    using Element = std::remove_cvref_t<decltype(table.front())>;
    return id >= 1 && static_cast<std::size_t>(id) <= table.size() ? &table[static_cast<std::size_t>(id - 1)]
                                                                   : static_cast<const Element*>(nullptr);
  };
  if (const StackFrameIndex::Frame* frame = at(index.frames, m.stack_frame_id)) {
    if (const StackFrameIndex::FileLocation* l = at(index.file_locations, frame->file_location_id)) {
      const std::string* file = at(index.file_names, l->file_name_id);
      const std::string* function = at(index.function_names, l->function_name_id);
      std::string text = (file ? *file : std::string("?")) + ":" + std::to_string(l->line);
      if (l->column > 0) text += ":" + std::to_string(l->column);
      if (function) text += " (" + *function + ")";
      return text;
    }
  }
  if (!m.source_file.empty()) {
    return m.source_line > 0 ? m.source_file + ":" + std::to_string(m.source_line) : m.source_file;
  }
  return "";
}

std::string Module::SourceOf(const Instruction& instruction) const {
  return SourceLine(stack_frames, instruction.metadata);
}

std::size_t Module::InstructionCount() const {
  std::size_t count = 0;
  for (const auto& computation : computations) count += computation->instructions.size();
  return count;
}

}  // namespace systole::hlo
