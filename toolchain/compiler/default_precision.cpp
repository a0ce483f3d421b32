// Which f32 instructions of a program the vector unit computes, at the MXU's DEFAULT precision
// (docs/COMPILER.md, "f32 programs on the vector unit"). An f32 HLO program already runs its
// dots and convolutions with bf16 operands and fp32 accumulation, the TPU's default; the same
// precision is given to the work between them on an inference path: elementwise arithmetic,
// transcendentals and reductions of *activations* (values computed from MXU results) with
// constants or per-channel vectors, and masks that are compile-time constants (a causal
// mask's select, an add of a constant 0 / -inf bias). The vector unit reads bf16, computes in fp32 and rounds its
// result to bf16, so each such step rounds once more than the f32 HLO does.
//
// What keeps full precision, on the host: parameter arithmetic (batch norm's folded vectors:
// they become weights), arithmetic with a tensor of the activation's own rank that is not an
// activation (a parameter updated by a training step, a one-hot label), and everything whose
// result does not flow, through such steps, dots, convolutions and data movement only, into the
// program's outputs — so a training step's gradients, which end in parameter updates, stay f32.
#include <algorithm>

#include "toolchain/compiler/model.hpp"
#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool IsF32(const Instruction& i) { return i.shape.type == hlo::ElementType::kF32 && i.shape.Elements() > 0; }

bool ArithmeticOpcode(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kClamp:
    case Opcode::kExp:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
    case Opcode::kTanh:
    case Opcode::kLogistic:
    case Opcode::kReduce:
      return true;
    default:
      return false;
  }
}

// A value that is not an activation but may take part: a constant, or a lower-rank value (a
// per-channel vector, a row's max or sum) reshaped or broadcast to the instruction's shape.
bool BiasLike(const Instruction& operand, std::size_t rank) {
  if (UniformConstant(operand)) return true;
  const Instruction* v = &operand;
  while (v->opcode == Opcode::kReshape || v->opcode == Opcode::kBroadcast || v->opcode == Opcode::kBitcast) {
    v = v->operands.at(0);
    if (v->shape.Rank() < rank) return true;
  }
  return v->opcode == Opcode::kConstant;
}

}  // namespace

DefaultPrecisionOps F32VectorOps(const hlo::Computation& entry, const Users& users, const Config& config, bool fuse) {
  DefaultPrecisionOps ops;
  if (!fuse || config.dtype != DType::kBf16) return ops;
  const std::vector<Instruction*> order = entry.PostOrder();
  // Forward: activations (MXU results and what is computed from them) and the candidates.
  std::unordered_set<const Instruction*> activation;
  for (const Instruction* i : order) {
    bool from_activation = false;
    for (const Instruction* operand : i->operands) from_activation = from_activation || activation.contains(operand);
    if ((i->opcode == Opcode::kDot || i->opcode == Opcode::kConvolution) && !MxuRejection(*i, config, "")) {
      activation.insert(i);
    } else if ((MovesDataOnly(i->opcode) || i->opcode == Opcode::kReduceWindow) && from_activation) {
      activation.insert(i);
    } else if (const std::optional<MaskBias> mask = i->opcode == Opcode::kSelect && IsF32(*i) ? ConstantMaskOf(*i)
                                                                                               : std::nullopt;
               mask && activation.contains(mask->data)) {
      activation.insert(i);  // a constant mask: an add of a constant bias
      ops.insert(i);
    } else if (from_activation && IsF32(*i) && ArithmeticOpcode(i->opcode)) {
      const bool others_bias_like = std::all_of(i->operands.begin(), i->operands.end(), [&](const Instruction* o) {
        return activation.contains(o) || BiasLike(*o, i->shape.Rank());
      });
      if (others_bias_like) {
        activation.insert(i);
        ops.insert(i);
      }
    }
  }
  // Backward: keep what reaches the outputs through activations only (the root, or a tuple
  // root's elements, end the path).
  std::unordered_set<const Instruction*> reaches_output;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* i = *it;
    if (i == entry.root) {
      if (activation.contains(i)) reaches_output.insert(i);
      continue;
    }
    const auto u = users.find(i);
    bool ok = activation.contains(i) && u != users.end() && !u->second.empty();
    if (ok) {
      for (const Instruction* user : u->second) {
        ok = ok && ((user == entry.root && user->opcode == Opcode::kTuple) || reaches_output.contains(user));
      }
    }
    if (ok) reaches_output.insert(i);
  }
  std::erase_if(ops, [&](const Instruction* i) { return !reaches_output.contains(i); });
  return ops;
}

}  // namespace systole::compiler::detail
