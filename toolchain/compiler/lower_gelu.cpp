// GELU in the tanh form, as `jax.nn.gelu(x, approximate=True)` writes it:
//
//   p2 = x·x;  p3 = p2·x;  m = p3·0.044715;  a = x + m;  s = a·√(2/π);  t = tanh(s);
//   u = t + 1;  h = u·0.5;  y = x·h
//
// matched from y back to x and computed as one VECTOR math=gelu_tanh of x (docs/NUMERICS.md:
// fp32 inside, one rounding to bf16) instead of nine vector steps that each round. Operands may
// come in either order; the constants are compared after rounding to the element type (a bf16
// program writes 0.04468 and 0.7969).
#include <cmath>
#include <numbers>

#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// The operand of the binary `op` that is not `other` (nullptr when neither or both are it).
const Instruction* OtherOperand(const Instruction& op, const Instruction* other) {
  if (op.operands.size() != 2 || op.operands[0] == op.operands[1]) return nullptr;
  if (op.operands[0] == other) return op.operands[1];
  return op.operands[1] == other ? op.operands[0] : nullptr;
}

}  // namespace

bool IsConstant(const Instruction& i, double expected) {
  const std::optional<double> c = UniformConstant(i);
  return c && std::abs(*c - expected) <= std::abs(expected) / 256;  // bf16 keeps 8 significant bits
}

const Instruction* WithConstant(const Instruction* op, Opcode opcode, double c) {
  if (op == nullptr || op->opcode != opcode || op->operands.size() != 2) return nullptr;
  for (int k = 0; k < 2; ++k) {
    if (IsConstant(*op->operands[static_cast<std::size_t>(k)], c)) return op->operands[static_cast<std::size_t>(1 - k)];
  }
  return nullptr;
}

std::optional<VectorGroup> PlanGeluTanh(const Instruction& y, const Users& users, const Instruction* root,
                                        const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops) {
  const bool type_ok = y.shape.type == hlo::ElementType::kBf16 || f32_ops.contains(&y);
  if (!fuse || config.dtype != DType::kBf16 || !type_ok || y.opcode != Opcode::kMultiply ||
      y.operands.size() != 2) {
    return std::nullopt;
  }
  const double sqrt_2_over_pi = std::sqrt(2.0 / std::numbers::pi);
  for (int k = 0; k < 2; ++k) {
    const Instruction* x = y.operands[static_cast<std::size_t>(k)];
    const Instruction* h = y.operands[static_cast<std::size_t>(1 - k)];
    const Instruction* u = WithConstant(h, Opcode::kMultiply, 0.5);
    const Instruction* t = WithConstant(u, Opcode::kAdd, 1.0);
    if (t == nullptr || t->opcode != Opcode::kTanh) continue;
    const Instruction* a = WithConstant(t->operands[0], Opcode::kMultiply, sqrt_2_over_pi);
    if (a == nullptr || a->opcode != Opcode::kAdd) continue;
    const Instruction* m = OtherOperand(*a, x);
    const Instruction* p3 = WithConstant(m, Opcode::kMultiply, 0.044715);
    if (p3 == nullptr || p3->opcode != Opcode::kMultiply) continue;
    const Instruction* p2 = OtherOperand(*p3, x);
    if (p2 == nullptr || p2->opcode != Opcode::kMultiply || p2->operands[0] != x || p2->operands[1] != x) continue;
    // Every intermediate is read only by the next instruction of the form, and has x's shape.
    const std::vector<const Instruction*> chain = {p2, p3, m, a, t->operands[0], t, u, h, &y};
    bool private_chain = x->shape.SameAs(y.shape);
    for (std::size_t c = 0; c + 1 < chain.size() && private_chain; ++c) {
      const auto it = users.find(chain[c]);
      private_chain = chain[c] != root && it != users.end() && it->second.size() == 1 &&
                      it->second.front() == chain[c + 1] && chain[c]->shape.SameAs(y.shape);
    }
    if (!private_chain) continue;
    VectorGroup group;
    group.input = x;
    group.math = isa::VecMath::kGeluTanh;
    group.chain = chain;
    return group;
  }
  return std::nullopt;
}

}  // namespace systole::compiler::detail
