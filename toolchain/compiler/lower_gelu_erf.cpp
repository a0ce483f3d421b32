// GELU in the erf form, as `jax.nn.gelu(x, approximate=False)` writes it:
//
//   h = x·0.5;  z = (−x)·(1/√2);  e = erfc(z);  y = h·e
//
// where erfc is XLA's expansion of it: two polynomials (|z| < 1 and beyond), exp(−z²), 1/z²,
// compares and selects, 60-odd f32 instructions (bf16 programs convert z to f32 and e back).
// The expansion is recognised by what it computes rather than by its instruction list, which
// changes between XLA versions: every instruction from z to e is elementwise arithmetic, abs,
// exp, compare, select or convert whose other operands are constants, is read only inside the
// expansion, and, evaluated in double at sample points across erfc's range, equals erfc within
// 10⁻⁵ (relative; XLA's own approximation is within ~10⁻⁷). The whole of it is then one VECTOR
// math=gelu_erf of x (docs/NUMERICS.md), instead of 60-odd host steps.
#include <cmath>
#include <numbers>
#include <unordered_map>
#include <unordered_set>

#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool ExpansionOpcode(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kNegate:
    case Opcode::kAbs:
    case Opcode::kExp:
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kConvert:
      return true;
    default:
      return false;
  }
}

// The expansion between `leaf` (z) and `value`: its instructions, in post-order (operands first).
class Expansion {
 public:
  explicit Expansion(const Instruction* leaf) : leaf_(leaf) {}

  // Collects `value` and what it reads down to the leaf; false when something else is read.
  bool Collect(const Instruction* value, int depth = 0) {
    constexpr int kMaxDepth = 200;  // XLA's expansion is ~40 deep
    if (value == leaf_ || seen_.contains(value) || UniformConstant(*value)) return true;
    if (depth > kMaxDepth || !ExpansionOpcode(value->opcode)) return false;
    for (const Instruction* operand : value->operands) {
      if (!Collect(operand, depth + 1)) return false;
    }
    seen_.insert(value);
    members_.push_back(value);
    return true;
  }

  // `value`'s number at z (compares give 0 or 1).
  double Evaluate(const Instruction* value, double z) {
    if (value == leaf_) return z;
    if (const auto cached = cache_.find(value); cached != cache_.end()) return cached->second;
    // Collect admitted only constants besides the members.
    const double result = seen_.contains(value) ? Compute(*value, z) : UniformConstant(*value).value_or(std::nan(""));
    cache_[value] = result;
    return result;
  }
  void Forget() { cache_.clear(); }

  const std::vector<const Instruction*>& members() const { return members_; }
  bool Contains(const Instruction* i) const { return seen_.contains(i); }
  int Count(Opcode opcode) const {
    int n = 0;
    for (const Instruction* m : members_) n += m->opcode == opcode ? 1 : 0;
    return n;
  }

 private:
  double Compute(const Instruction& i, double z) {
    const auto operand = [&](std::size_t k) { return Evaluate(i.operands.at(k), z); };
    switch (i.opcode) {
      case Opcode::kAdd: return operand(0) + operand(1);
      case Opcode::kSubtract: return operand(0) - operand(1);
      case Opcode::kMultiply: return operand(0) * operand(1);
      case Opcode::kDivide: return operand(0) / operand(1);
      case Opcode::kNegate: return -operand(0);
      case Opcode::kAbs: return std::abs(operand(0));
      case Opcode::kExp: return std::exp(operand(0));
      case Opcode::kConvert: return operand(0);
      case Opcode::kSelect: return operand(0) != 0.0 ? operand(1) : operand(2);
      case Opcode::kCompare: {
        const double a = operand(0), b = operand(1);
        switch (i.comparison) {
          case hlo::ComparisonDirection::kEq: return a == b;
          case hlo::ComparisonDirection::kNe: return a != b;
          case hlo::ComparisonDirection::kLt: return a < b;
          case hlo::ComparisonDirection::kLe: return a <= b;
          case hlo::ComparisonDirection::kGt: return a > b;
          case hlo::ComparisonDirection::kGe: return a >= b;
        }
        return 0.0;
      }
      default: return std::nan("");
    }
  }

  const Instruction* leaf_;
  std::unordered_set<const Instruction*> seen_;
  std::vector<const Instruction*> members_;
  std::unordered_map<const Instruction*, double> cache_;
};

// The expansion computes erfc: checked where its branches and erfc's behaviour change (around
// |z| = 1 and 2, the tails, where exp(−z²) underflows f32 beyond z ≈ 9.4).
bool ComputesErfc(Expansion& expansion, const Instruction* value) {
  for (const double z : {-6.0, -3.0, -1.99, -1.01, -0.99, -0.5, -0.1, 0.0, 0.1, 0.5, 0.99, 1.01, 1.5, 1.99,
                         2.01, 3.0, 4.5, 6.0, 9.0, 12.0}) {
    expansion.Forget();
    const double got = expansion.Evaluate(value, z), want = std::erfc(z);
    if (!(std::abs(got - want) <= 1e-5 * want + 1e-30)) return false;
  }
  return true;
}

bool ReadOnlyBy(const Instruction* value, const Users& users, const std::function<bool(const Instruction*)>& inside) {
  const auto it = users.find(value);
  if (it == users.end()) return false;
  for (const Instruction* user : it->second) {
    if (!inside(user)) return false;
  }
  return true;
}

}  // namespace

std::optional<GeluErfMatch> MatchGeluErf(const Instruction& y, const Users& users, const Instruction* root) {
  if (y.opcode != Opcode::kMultiply || y.operands.size() != 2 || y.operands[0] == y.operands[1]) return std::nullopt;
  for (std::size_t k = 0; k < 2; ++k) {
    const Instruction* h = y.operands[k];
    const Instruction* x = WithConstant(h, Opcode::kMultiply, 0.5);
    const Instruction* e = y.operands[1 - k];
    if (x == nullptr || !x->shape.SameAs(y.shape)) continue;
    // z = (−x)·(1/√2), the expansion's only input (through a convert to f32 in bf16 programs).
    const Instruction* z = nullptr;
    for (const Instruction* u : users.contains(x) ? users.at(x) : std::vector<const Instruction*>{}) {
      if (u->opcode != Opcode::kNegate || !users.contains(u) || users.at(u).size() != 1) continue;
      const Instruction* m = users.at(u).front();
      if (WithConstant(m, Opcode::kMultiply, std::numbers::sqrt2 / 2) == u) z = m;
    }
    if (z == nullptr) continue;
    Expansion expansion(z);
    if (e == z || !expansion.Collect(e) || expansion.Count(Opcode::kExp) == 0 ||
        expansion.Count(Opcode::kSelect) == 0 || !ComputesErfc(expansion, e)) {
      continue;
    }
    // Private: nothing outside y reads h, −x, z or the expansion, and none of them is the root.
    GeluErfMatch match{x, {}};
    match.chain.push_back(z->operands[0] == x ? z->operands[1] : z->operands[0]);  // −x
    match.chain.push_back(z);
    match.chain.insert(match.chain.end(), expansion.members().begin(), expansion.members().end());
    match.chain.push_back(h);
    match.chain.push_back(&y);
    const std::unordered_set<const Instruction*> inside(match.chain.begin(), match.chain.end());
    bool private_chain = true;
    for (std::size_t c = 0; c + 1 < match.chain.size() && private_chain; ++c) {
      const Instruction* member = match.chain[c];
      private_chain = member != root && member->shape.dims == y.shape.dims &&
                      ReadOnlyBy(member, users, [&](const Instruction* user) { return inside.contains(user); });
    }
    if (private_chain) return match;
  }
  return std::nullopt;
}

std::optional<VectorGroup> PlanGeluErf(const Instruction& y, const Users& users, const Instruction* root,
                                       const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops) {
  const bool type_ok = y.shape.type == hlo::ElementType::kBf16 || f32_ops.contains(&y);
  if (!fuse || config.dtype != DType::kBf16 || !type_ok) return std::nullopt;
  std::optional<GeluErfMatch> match = MatchGeluErf(y, users, root);
  if (!match) return std::nullopt;
  VectorGroup group;
  group.input = match->x;
  group.math = isa::VecMath::kGeluErf;
  group.chain = std::move(match->chain);
  return group;
}

}  // namespace systole::compiler::detail
