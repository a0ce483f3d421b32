// When may a device step store an f32 value as bf16? When nothing downstream can tell: every
// path from the value ends in an operation that rounds to bf16 itself (a dot or convolution on
// the MXU rounds its operands, a convert to bf16 rounds), and in between there is only data
// movement or an operation that commutes with the rounding. Round-to-nearest-even is monotone,
// so max / min with anything (a max pool, a ReLU, a clamp) commute with it:
// round(max(x, c)) = max(round(x), round(c)), and the final rounding of c happens either way.
#include <algorithm>

#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool IsFloat(const hlo::Shape& shape) {
  return shape.type == hlo::ElementType::kF32 || shape.type == hlo::ElementType::kBf16;
}

// A reduce-window / reduce computation that is max(a, b) or min(a, b) of its parameters.
bool IsMinMaxComputation(const Instruction& reduction) {
  if (reduction.called.size() != 1 || reduction.called[0]->root == nullptr) return false;
  const Instruction& root = *reduction.called[0]->root;
  if (root.opcode != Opcode::kMaximum && root.opcode != Opcode::kMinimum) return false;
  return std::all_of(root.operands.begin(), root.operands.end(),
                     [](const Instruction* o) { return o->opcode == Opcode::kParameter; });
}

struct Walk {
  const Users& users;
  const Instruction* root;
  const Config& config;
  bool fuse;
};

bool Invisible(const Instruction& value, const Walk& walk, int depth);

// Whether `user`, reading `value`, rounds it to bf16 or passes it on to such uses unchanged
// up to the rounding.
bool UseRounds(const Instruction& value, const Instruction& user, const Walk& walk, int depth) {
  switch (user.opcode) {
    case Opcode::kDot:
    case Opcode::kConvolution:
      // The MXU rounds both operands to bf16 (docs/NUMERICS.md); a dot / convolution it
      // cannot run is evaluated on the host at full precision.
      return IsFloat(user.operands.at(0)->shape) && IsFloat(user.operands.at(1)->shape) &&
             !MxuRejection(user, walk.config, "");
    case Opcode::kConvert:
      return user.shape.type == hlo::ElementType::kBf16 ||
             (IsFloat(user.shape) && Invisible(user, walk, depth + 1));
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kCopy:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kPad:
      return IsFloat(user.shape) && Invisible(user, walk, depth + 1);
    case Opcode::kReduceWindow:
      return IsMinMaxComputation(user) && Invisible(user, walk, depth + 1);
    case Opcode::kAdd:
      // Fused, a residual add keeps the residual stream in bf16: the vector unit rounds its
      // operands, and a convolution's starting tensor is the shortcut as the step before
      // stored it (IsResidualAdd).
      return walk.fuse && IsResidualAdd(user, walk.config);
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kClamp: {
      // Monotone in `value` when every other operand is a constant.
      for (const Instruction* operand : user.operands) {
        if (operand != &value && !UniformConstant(*operand)) return false;
      }
      return Invisible(user, walk, depth + 1);
    }
    default:
      return false;
  }
}

bool Invisible(const Instruction& value, const Walk& walk, int depth) {
  // Real graphs reach a dot within a few data-movement steps; the limit bounds the walk.
  constexpr int kMaxDepth = 12;
  if (&value == walk.root || depth > kMaxDepth || !IsFloat(value.shape)) return false;
  const auto it = walk.users.find(&value);
  if (it == walk.users.end() || it->second.empty()) return false;
  return std::all_of(it->second.begin(), it->second.end(),
                     [&](const Instruction* user) { return UseRounds(value, *user, walk, depth); });
}

}  // namespace

bool RoundingToBf16IsInvisible(const Instruction& value, const Users& users, const Instruction* root,
                               const Config& config, bool fuse) {
  return config.dtype == DType::kBf16 && Invisible(value, Walk{users, root, config, fuse}, 0);
}

}  // namespace systole::compiler::detail
