#include "toolchain/hlo/interpreter.hpp"

#include <fmt/core.h>

#include <stdexcept>
#include <unordered_map>

#include "toolchain/hlo/interp_kernels.hpp"

namespace systole::hlo {

namespace {

using detail::Operands;

Literal Dispatch(const Instruction& instruction, const Operands& operands, const detail::ComputationRunner& run,
                 std::int64_t while_iteration_limit) {
  switch (instruction.opcode) {
    case Opcode::kParameter:
      detail::Unsupported(instruction, "has no value outside a computation run");
    case Opcode::kConstant:
      if (instruction.literal_elided || !instruction.literal) {
        detail::Unsupported(instruction, "was printed as {...}: its values are not in the dump");
      }
      return *instruction.literal;
    case Opcode::kCall:
    case Opcode::kFusion: return run(*instruction.called[0], operands);
    case Opcode::kWhile:
    case Opcode::kConditional: return EvaluateControlFlow(instruction, operands, run, while_iteration_limit);
    case Opcode::kDot: return detail::EvalDot(instruction, operands);
    case Opcode::kConvolution: return detail::EvalConvolution(instruction, operands);
    case Opcode::kReduce: return detail::EvalReduce(instruction, operands, run);
    case Opcode::kReduceWindow: return detail::EvalReduceWindow(instruction, operands, run);
    case Opcode::kSelectAndScatter: return detail::EvalSelectAndScatter(instruction, operands, run);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: return detail::EvalBatchNorm(instruction, operands);
    case Opcode::kGather:
    case Opcode::kScatter:
    case Opcode::kSort:
    case Opcode::kDynamicUpdateSlice: return detail::EvalIndexed(instruction, operands, run);
    case Opcode::kBroadcast:
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kReverse:
    case Opcode::kPad:
    case Opcode::kConcatenate:
    case Opcode::kIota:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement: return detail::EvalDataMovement(instruction, operands);
    default: return detail::EvalElementwise(instruction, operands);
  }
}

void CheckArgument(const Instruction& parameter, const Literal& argument) {
  if (!argument.shape.SameAs(parameter.shape)) {
    throw HloError(parameter.location, fmt::format("argument for parameter {} ('{}') is {} but the parameter is {}",
                                                   parameter.parameter_number, parameter.name,
                                                   argument.shape.ToString(), parameter.shape.ToString()));
  }
}

}  // namespace

Literal EvaluateControlFlow(const Instruction& instruction, const std::vector<const Literal*>& operands,
                            const CalledComputationRunner& run, std::int64_t while_iteration_limit) {
  if (instruction.opcode == Opcode::kConditional) {
    const Literal& selector = *operands.at(0);
    const std::size_t branches = instruction.called.size();
    std::size_t branch = 0;
    if (selector.shape.type == ElementType::kPred) {
      branch = selector.values.at(0) != 0.0 ? 0 : 1;
    } else {
      const double index = selector.values.at(0);
      branch = index >= 0 && index < static_cast<double>(branches) ? static_cast<std::size_t>(index) : branches - 1;
    }
    return run(*instruction.called[branch], {operands.at(branch + 1)});
  }
  if (instruction.opcode != Opcode::kWhile) {
    throw std::logic_error(fmt::format("EvaluateControlFlow: '{}' is neither a while nor a conditional", instruction.name));
  }
  Literal state = *operands.at(0);
  for (std::int64_t iteration = 0;; ++iteration) {
    if (run(*instruction.called[0], {&state}).values.at(0) == 0.0) return state;
    if (iteration == while_iteration_limit) {
      throw HloError(instruction.location, fmt::format("while '{}' is still running after {} iterations",
                                                       instruction.name, while_iteration_limit));
    }
    state = run(*instruction.called[1], {&state});
  }
}

Literal Interpreter::Run(const std::vector<Literal>& arguments) const {
  if (module_.entry == nullptr) throw HloError("module has no entry computation");
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  return Run(*module_.entry, pointers);
}

Literal Interpreter::Run(const Computation& computation, const std::vector<const Literal*>& arguments) const {
  const std::vector<Instruction*> parameters = computation.Parameters();
  if (arguments.size() != parameters.size()) {
    throw HloError(computation.location, fmt::format("computation '{}' takes {} argument(s), given {}",
                                                     computation.name, parameters.size(), arguments.size()));
  }
  const std::vector<Instruction*> order = computation.PostOrder();
  // Values live until their last user has run, so peak memory follows the live set, not the
  // whole program.
  std::unordered_map<const Instruction*, std::size_t> remaining_uses;
  for (const Instruction* instruction : order) {
    for (const Instruction* operand : instruction->operands) ++remaining_uses[operand];
  }
  std::unordered_map<const Instruction*, Literal> owned;
  std::unordered_map<const Instruction*, const Literal*> values;
  const detail::ComputationRunner run = [this](const Computation& callee, const Operands& operands) {
    return Run(callee, operands);
  };
  for (const Instruction* instruction : order) {
    if (instruction->opcode == Opcode::kParameter) {
      const Literal* argument = arguments[static_cast<std::size_t>(instruction->parameter_number)];
      CheckArgument(*instruction, *argument);
      values[instruction] = argument;
      continue;
    }
    Operands operands;
    for (const Instruction* operand : instruction->operands) operands.push_back(values.at(operand));
    Literal value = Dispatch(*instruction, operands, run, while_iteration_limit_);
    values[instruction] = &(owned[instruction] = std::move(value));
    for (const Instruction* operand : instruction->operands) {
      if (--remaining_uses[operand] == 0 && operand != computation.root) owned.erase(operand);
    }
  }
  const Literal* root = values.at(computation.root);
  const auto found = owned.find(computation.root);
  return found != owned.end() ? std::move(found->second) : *root;
}

Literal EvaluateInstruction(const Instruction& instruction, const std::vector<const Literal*>& operands) {
  const detail::ComputationRunner run = [](const Computation& callee, const Operands& arguments) {
    // Called computations only reach instructions of their own, never other modules.
    Module scratch;
    return Interpreter(scratch).Run(callee, arguments);
  };
  return Dispatch(instruction, operands, run, Interpreter::kDefaultWhileIterationLimit);
}

}  // namespace systole::hlo
