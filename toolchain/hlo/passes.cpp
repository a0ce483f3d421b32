// The canonicalization passes the front end owns: inlining, dead-code elimination, constant
// folding. (Dot, convolution and batch-norm rewrites belong to the back end.)
#include <fmt/core.h>

#include <unordered_map>
#include <unordered_set>

#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/pass.hpp"

namespace systole::hlo {

namespace {

// Copies `callee`'s body into `caller` before `call`, parameters bound to the call's operands;
// returns the copy of the callee's root.
Instruction* InlineBody(Computation& caller, const Instruction& call) {
  const Computation& callee = *call.called[0];
  std::unordered_map<const Instruction*, Instruction*> copies;
  for (const Instruction* original : callee.PostOrder()) {
    if (original->opcode == Opcode::kParameter) {
      copies[original] = call.operands.at(static_cast<std::size_t>(original->parameter_number));
      continue;
    }
    auto copy = std::make_unique<Instruction>(*original);
    copy->name = caller.UniqueName(call.name + "." + original->name);
    // The body of jax.nn.relu has no source line of its own: it is where the call was made.
    if (copy->metadata.stack_frame_id == 0 && copy->metadata.source_file.empty()) {
      copy->metadata.stack_frame_id = call.metadata.stack_frame_id;
      copy->metadata.source_file = call.metadata.source_file;
      copy->metadata.source_line = call.metadata.source_line;
    }
    for (Instruction*& operand : copy->operands) operand = copies.at(operand);
    copies[original] = caller.Insert(std::move(copy), &call);
  }
  return copies.at(callee.root);
}

}  // namespace

PassResult InlineCalls::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations) {
    // Inlined bodies may contain calls themselves: repeat until none is left. (Recursion was
    // ruled out by the verifier, so this ends.)
    for (bool found = true; found;) {
      found = false;
      for (const auto& instruction : computation->instructions) {
        // A fusion of an optimized dump is a call whose body XLA chose to compile as one
        // kernel: the back end makes its own fusion decisions, so it is inlined like a call.
        if (instruction->opcode != Opcode::kCall && instruction->opcode != Opcode::kFusion) continue;
        Instruction* call = instruction.get();
        Instruction* result = InlineBody(*computation, *call);
        computation->ReplaceAllUses(call, result);
        computation->RemoveIf([&](const Instruction& i) { return &i == call; });
        found = changed = true;
        break;  // the instruction list changed under the loop
      }
    }
  }
  return PassResult::Changed(changed);
}

PassResult DeadCodeElimination::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations) {
    std::unordered_set<const Instruction*> live;
    for (const Instruction* instruction : computation->PostOrder()) live.insert(instruction);
    const std::size_t before = computation->instructions.size();
    // Users are removed together with what they use, so no survivor points at a removed one.
    computation->RemoveIf([&](const Instruction& i) {
      return !live.contains(&i) && i.opcode != Opcode::kParameter;
    });
    changed = changed || computation->instructions.size() != before;
  }
  // Computations unreachable from the entry.
  std::unordered_set<const Computation*> reachable{module.entry};
  std::vector<const Computation*> work{module.entry};
  while (!work.empty()) {
    const Computation* computation = work.back();
    work.pop_back();
    for (const auto& instruction : computation->instructions) {
      for (const Computation* callee : instruction->called) {
        if (reachable.insert(callee).second) work.push_back(callee);
      }
    }
  }
  const std::size_t before = module.computations.size();
  std::erase_if(module.computations, [&](const auto& c) { return !reachable.contains(c.get()); });
  return PassResult::Changed(changed || module.computations.size() != before);
}

namespace {

bool IsScalarConstant(const Instruction& i) {
  return i.opcode == Opcode::kConstant && i.shape.IsArray() && i.shape.dims.empty() && !i.literal_elided;
}

// The scalar constant behind `i` when it is one or a broadcast of one.
const Instruction* SplatSource(const Instruction& i) {
  if (IsScalarConstant(i)) return &i;
  if (i.opcode == Opcode::kBroadcast && IsScalarConstant(*i.operands[0])) return i.operands[0];
  return nullptr;
}

bool Foldable(Opcode opcode) {
  return opcode != Opcode::kParameter && opcode != Opcode::kConstant && opcode != Opcode::kBroadcast &&
         opcode != Opcode::kTuple && opcode != Opcode::kGetTupleElement && opcode != Opcode::kCall &&
         opcode != Opcode::kFusion &&
         opcode != Opcode::kIota;
}

std::unique_ptr<Instruction> MakeConstant(const Computation& computation, const std::string& base, Literal value) {
  auto constant = std::make_unique<Instruction>();
  constant->name = computation.UniqueName(base);
  constant->opcode = Opcode::kConstant;
  constant->shape = value.shape;
  constant->literal = std::move(value);
  return constant;
}

// Folding is an optimization: an instruction the interpreter cannot evaluate (an unsupported
// convolution, say) stays in the module and is reported if and when it is run.
std::optional<Literal> TryEvaluate(const Instruction& instruction, const std::vector<const Literal*>& operands) {
  try {
    return EvaluateInstruction(instruction, operands);
  } catch (const HloError&) {
    return std::nullopt;
  }
}

}  // namespace

PassResult ConstantFolding::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations) {
    for (Instruction* instruction : computation->PostOrder()) {
      if (!Foldable(instruction->opcode) || instruction->operands.empty() || !instruction->shape.IsArray()) continue;
      bool all_constant = true;
      bool all_splat = true;
      // Broadcasts of constants are evaluated for the fold (batch norm of constant parameters
      // mixes constant vectors with broadcast epsilons and scales).
      std::vector<Literal> broadcasts;
      broadcasts.reserve(instruction->operands.size());
      for (const Instruction* operand : instruction->operands) {
        const Instruction* source = operand->opcode == Opcode::kBroadcast ? operand->operands[0] : operand;
        all_constant = all_constant && source->opcode == Opcode::kConstant && !source->literal_elided &&
                       operand->shape.Elements() <= max_elements_;
        all_splat = all_splat && SplatSource(*operand) != nullptr;
      }
      const bool elementwise = IsElementwiseUnary(instruction->opcode) || IsElementwiseBinary(instruction->opcode) ||
                               instruction->opcode == Opcode::kSelect || instruction->opcode == Opcode::kClamp;
      const bool splat_fold = elementwise && all_splat && !instruction->shape.dims.empty();
      if (all_constant && !splat_fold && instruction->shape.Elements() <= max_elements_) {
        std::vector<const Literal*> operands;
        bool evaluated = true;
        for (const Instruction* operand : instruction->operands) {
          if (operand->opcode != Opcode::kBroadcast) {
            operands.push_back(&*operand->literal);
            continue;
          }
          std::optional<Literal> spread = TryEvaluate(*operand, {&*operand->operands[0]->literal});
          if (!spread) {
            evaluated = false;
            break;
          }
          broadcasts.push_back(std::move(*spread));
          operands.push_back(&broadcasts.back());
        }
        if (!evaluated) continue;
        std::optional<Literal> value = TryEvaluate(*instruction, operands);
        if (!value) continue;
        Instruction* constant =
            computation->Insert(MakeConstant(*computation, instruction->name + ".folded", std::move(*value)), instruction);
        computation->ReplaceAllUses(instruction, constant);
        changed = true;
      } else if (splat_fold) {
        // op(broadcast(c1), broadcast(c2)) -> broadcast(op(c1, c2)) on scalars.
        Instruction scalar_op = *instruction;
        scalar_op.shape.dims.clear();
        scalar_op.shape.minor_to_major.clear();
        std::vector<const Literal*> operands;
        for (const Instruction* operand : instruction->operands) operands.push_back(&*SplatSource(*operand)->literal);
        std::optional<Literal> value = TryEvaluate(scalar_op, operands);
        if (!value) continue;
        Instruction* constant =
            computation->Insert(MakeConstant(*computation, instruction->name + ".folded", std::move(*value)), instruction);
        auto broadcast = std::make_unique<Instruction>();
        broadcast->name = computation->UniqueName(instruction->name + ".splat");
        broadcast->opcode = Opcode::kBroadcast;
        broadcast->shape = instruction->shape;
        broadcast->operands = {constant};
        Instruction* splat = computation->Insert(std::move(broadcast), instruction);
        computation->ReplaceAllUses(instruction, splat);
        changed = true;
      }
    }
  }
  // The folded originals are now unused; DCE removes them (and their constant operands).
  return PassResult::Changed(changed);
}

}  // namespace systole::hlo
