// Which f32 instructions of a program the vector unit computes, at the MXU's DEFAULT precision
// (docs/COMPILER.md, "f32 programs on the vector unit"). An f32 HLO program already runs its
// dots and convolutions with bf16 operands and fp32 accumulation, the TPU's default; the same
// precision is given to the work between them on an inference path: elementwise arithmetic,
// transcendentals and reductions of *activations* (values computed from MXU results) with
// constants or per-channel vectors, and masks that are compile-time constants (a causal
// mask's select, an add of a constant 0 / -inf bias). The vector unit reads bf16, computes in
// fp32 and rounds its result to bf16, so each such step rounds once more than the f32 HLO does.
//
// What keeps full precision, on the host: parameter arithmetic (batch norm's folded vectors:
// they become weights), arithmetic that combines an activation with a full-size tensor that is
// not one (a parameter updated by a training step, a loss against one-hot labels: a *sink*),
// and everything that flows into a sink — so a training step's forward pass, gradients and
// updates, and an evaluation's comparison with labels, stay f32.
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
    case Opcode::kLog:
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

// Combines an activation with a full-size tensor that is not one, or is a dot / convolution
// the MXU cannot run (the host computes it at full precision): what it reads must keep f32.
bool IsSink(const Instruction& i, const std::unordered_set<const Instruction*>& activation, const Config& config) {
  const bool reads_any = std::any_of(i.operands.begin(), i.operands.end(),
                                     [&](const Instruction* o) { return activation.contains(o); });
  if (i.opcode == Opcode::kDot || i.opcode == Opcode::kConvolution) {
    return reads_any && MxuRejection(i, config, "").has_value();
  }
  if (i.opcode == Opcode::kReduceWindow || MovesDataOnly(i.opcode) || activation.contains(&i)) return false;
  bool reads_activation = false, reads_other = false;
  for (const Instruction* operand : i.operands) {
    if (activation.contains(operand)) {
      reads_activation = true;
    } else if (!BiasLike(*operand, i.shape.Rank())) {
      reads_other = true;
    }
  }
  return reads_activation && reads_other;
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
    } else if (const std::optional<GeluErfMatch> gelu = IsF32(*i) ? MatchGeluErf(*i, users, entry.root) : std::nullopt;
               gelu && activation.contains(gelu->x)) {
      activation.insert(i);  // GELU's erf form: one VECTOR of x, its compares and selects inside
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
  // Backward: drop what feeds a full-precision sink — an instruction that combines an
  // activation with a full-size tensor that is not one (a parameter update `w - lr * g`, a
  // loss against one-hot labels), or a dot / convolution the host computes — directly or
  // through any later instruction. The MXU's dots and convolutions (their weights), data
  // movement and pools are no sinks.
  std::unordered_set<const Instruction*> feeds_sink;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* i = *it;
    const auto u = users.find(i);
    if (u == users.end()) continue;
    for (const Instruction* user : u->second) {
      if (feeds_sink.contains(user) || IsSink(*user, activation, config)) {
        feeds_sink.insert(i);
        break;
      }
    }
  }
  std::erase_if(ops, [&](const Instruction* i) { return feeds_sink.contains(i); });
  return ops;
}

}  // namespace systole::compiler::detail
