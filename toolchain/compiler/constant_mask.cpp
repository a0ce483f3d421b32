// Masks that are compile-time constants (a causal mask: `jnp.where(jnp.tril(...), scores,
// -inf)`), turned into the additive bias the vector unit adds: 0 where the select keeps x,
// -inf where it writes -inf (lowering.hpp, MaskBias; docs/COMPILER.md "Partitioning rules").
#include <cmath>

#include "toolchain/compiler/lowering.hpp"
#include "toolchain/hlo/error.hpp"
#include "toolchain/hlo/interpreter.hpp"

namespace systole::compiler::detail {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// The value of an expression of constants, iotas, broadcasts, reshapes, compares, selects and
// logical ops (a causal mask as `jnp.tril` writes it), evaluated at compile time by the
// interpreter; nullopt for anything else, or beyond a size a mask bias would reasonably have.
std::optional<hlo::Literal> CompileTimeValue(const Instruction& i, int depth) {
  constexpr int kMaxDepth = 24;
  constexpr std::int64_t kMaxElements = 1 << 20;
  if (depth > kMaxDepth || !i.shape.IsArray() || i.shape.Elements() > kMaxElements) return std::nullopt;
  if (i.opcode == Opcode::kConstant) {
    if (!i.literal || i.literal_elided) return std::nullopt;
    return *i.literal;
  }
  switch (i.opcode) {
    case Opcode::kIota:
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kConvert:
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kNot:
      break;
    default:
      return std::nullopt;
  }
  std::vector<hlo::Literal> values;
  values.reserve(i.operands.size());
  for (const Instruction* operand : i.operands) {
    std::optional<hlo::Literal> v = CompileTimeValue(*operand, depth + 1);
    if (!v) return std::nullopt;
    values.push_back(std::move(*v));
  }
  std::vector<const hlo::Literal*> pointers;
  for (const hlo::Literal& v : values) pointers.push_back(&v);
  try {
    return hlo::EvaluateInstruction(i, pointers);
  } catch (const hlo::HloError&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<MaskBias> ConstantMaskOf(const Instruction& select) {
  if (select.opcode != Opcode::kSelect || select.operands.size() != 3 || !select.shape.IsArray()) return std::nullopt;
  const bool fill_false = UniformConstant(*select.operands[2]) == -double(INFINITY);
  const bool fill_true = UniformConstant(*select.operands[1]) == -double(INFINITY);
  if (fill_false == fill_true) return std::nullopt;  // neither (or both) a -inf fill
  const Instruction* data = select.operands[fill_false ? 1 : 2];
  if (!data->shape.SameAs(select.shape)) return std::nullopt;
  const std::optional<hlo::Literal> mask = CompileTimeValue(*select.operands[0], 0);
  if (!mask || mask->values.size() != static_cast<std::size_t>(select.shape.Elements())) return std::nullopt;
  MaskBias bias;
  bias.data = data;
  for (double keep : mask->values) bias.masked.push_back(fill_false ? keep == 0.0 : keep != 0.0);
  return bias;
}

}  // namespace systole::compiler::detail
