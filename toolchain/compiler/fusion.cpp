// Which dots and convolutions go to the MXU, and which of their users fuse into the drain.
//
// The drain (ACTIVATE, docs/ISA.md) computes func((acc + bias) * scalar) per output row, so a
// chain of per-channel adds and multiplies after a dot / convolution folds into an affine
// y = a[c] * acc + b[c]: the multiplies scale the weights' output channels (batch norm folded
// into the weights), the adds become the bias. The maximum / minimum / clamp with constants
// that follow (ReLU as maximum(x, 0) either way round, ReLU6 as clamp or min(max(x, 0), 6)),
// and converts to bf16 between them, become the drain's function. This is what lets ResNet-50's conv + bias + batch norm + ReLU run as one step.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

// The C-element vector that `broadcast` spreads along output dimension `feature`, or nullptr.
const Instruction* PerChannelVector(const Instruction& broadcast, std::int64_t feature, std::int64_t channels) {
  if (broadcast.opcode != Opcode::kBroadcast) return nullptr;
  const Instruction* vector = broadcast.operands.at(0);
  if (vector->shape.Elements() != channels) return nullptr;
  bool found = false;
  for (std::size_t d = 0; d < broadcast.dimensions.size(); ++d) {
    const std::int64_t size = vector->shape.dims.at(d);
    if (broadcast.dimensions[d] == feature && size == channels) {
      found = true;
    } else if (size != 1) {
      return nullptr;
    }
  }
  return found ? vector : nullptr;
}

// A zero, non-interior pad of only the spatial dimensions whose one user is the convolution
// becomes part of the convolution's padding.
void AbsorbPad(Group& group, const Users& users) {
  const Instruction& pad = *group.input;
  if (pad.opcode != Opcode::kPad || UniformConstant(*pad.operands.at(1)) != 0.0) return;
  const auto it = users.find(&pad);
  if (it == users.end() || it->second.size() != 1) return;
  const hlo::ConvDimensionNumbers& d = group.anchor->conv_dims;
  for (std::size_t dim = 0; dim < pad.padding.size(); ++dim) {
    const hlo::PadDim& p = pad.padding[dim];
    if (p.interior != 0 || p.low < 0 || p.high < 0) return;
    const bool spatial = std::find(d.input_spatial.begin(), d.input_spatial.end(), std::int64_t(dim)) != d.input_spatial.end();
    if (!spatial && (p.low != 0 || p.high != 0)) return;
  }
  for (std::size_t s = 0; s < 2; ++s) {
    const hlo::PadDim& p = pad.padding.at(static_cast<std::size_t>(d.input_spatial.at(s)));
    group.extra_padding[2 * s] = p.low;
    group.extra_padding[2 * s + 1] = p.high;
  }
  group.input = pad.operands[0];
}

bool IsFloatMxuType(ElementType t) { return t == ElementType::kF32 || t == ElementType::kBf16; }

}  // namespace

// `instruction` is a constant (or a broadcast of one) whose elements all equal one value.
std::optional<double> UniformConstant(const Instruction& instruction) {
  const Instruction* i = &instruction;
  if (i->opcode == Opcode::kBroadcast) i = i->operands.at(0);
  if (i->opcode != Opcode::kConstant || !i->literal || i->literal_elided || i->literal->values.empty()) {
    return std::nullopt;
  }
  const double first = i->literal->values.front();
  for (double v : i->literal->values) {
    if (v != first) return std::nullopt;
  }
  return first;
}

std::optional<std::string> MxuRejection(const Instruction& anchor, const Config& config,
                                        const std::string& source_name) {
  const ElementType lhs = anchor.operands.at(0)->shape.type;
  const ElementType rhs = anchor.operands.at(1)->shape.type;
  const ElementType out = anchor.shape.type;
  if (config.dtype == DType::kInt8) {
    if (hlo::IsFloating(lhs) || hlo::IsFloating(rhs)) {
      throw std::runtime_error(fmt::format(
          "{}: {}: configuration '{}' has an int8 MXU (int8 x int8 -> int32), which cannot run a "
          "floating-point {}; compile for a bf16 configuration (small, v2) or quantize the model "
          "to s8 operands",
          source_name, anchor.Describe(), config.name, hlo::OpcodeName(anchor.opcode)));
    }
    if (lhs != ElementType::kS8 || rhs != ElementType::kS8 || out != ElementType::kS32) {
      return fmt::format("the int8 MXU takes s8 x s8 -> s32, not {} x {} -> {}", hlo::ElementTypeName(lhs),
                         hlo::ElementTypeName(rhs), hlo::ElementTypeName(out));
    }
  } else if (!IsFloatMxuType(lhs) || !IsFloatMxuType(rhs) || !IsFloatMxuType(out)) {
    return fmt::format("the bf16 MXU takes f32 / bf16 operands and results, not {} x {} -> {}",
                       hlo::ElementTypeName(lhs), hlo::ElementTypeName(rhs), hlo::ElementTypeName(out));
  }
  if (anchor.opcode == Opcode::kConvolution) {
    if (auto why = ConvolutionKernelRejection(anchor, false)) return why;
  }
  if (anchor.shape.Elements() == 0) return std::string("empty result");
  return std::nullopt;
}

std::optional<std::string> ConvolutionKernelRejection(const Instruction& conv, bool input_dilation_allowed) {
  if (conv.conv_dims.input_spatial.size() != 2) {
    return fmt::format("{} spatial dimension(s): the convolution kernel is 2-D", conv.conv_dims.input_spatial.size());
  }
  if (conv.batch_group_count != 1) return std::string("batch_group_count > 1");
  for (const hlo::WindowDim& w : conv.window) {
    if (w.lhs_dilation != 1 && !input_dilation_allowed) return std::string("input (lhs) dilation");
    if (w.reversal) return std::string("window reversal");
    if (w.pad_low < 0 || w.pad_high < 0) return std::string("negative padding");
  }
  return std::nullopt;
}

std::optional<std::int64_t> FeatureDimension(const Instruction& anchor) {
  if (anchor.opcode == Opcode::kConvolution) return anchor.conv_dims.output_feature;
  const hlo::DotDimensionNumbers& d = anchor.dot_dims;
  const std::size_t rhs_free = anchor.operands.at(1)->shape.Rank() - d.rhs_batch.size() - d.rhs_contracting.size();
  if (rhs_free != 1) return std::nullopt;
  return static_cast<std::int64_t>(anchor.shape.Rank()) - 1;
}

Group PlanGroup(const Instruction& anchor, const Users& users, const Instruction* root, const Config& config,
                bool fuse, const std::unordered_set<const Instruction*>& claimed) {
  Group group;
  group.anchor = &anchor;
  group.input = anchor.operands.at(0);
  if (fuse && anchor.opcode == Opcode::kConvolution) AbsorbPad(group, users);
  const bool int8 = config.dtype == DType::kInt8;
  const std::optional<std::int64_t> feature = FeatureDimension(anchor);
  const Instruction* current = &anchor;
  // The function: maximum / minimum / clamp with constant bounds, in any order and nesting,
  // narrow [lo, hi]; `before_func` is the chain's length before the first of them.
  double lo = -INFINITY, hi = INFINITY;
  constexpr std::size_t kNoFunction = SIZE_MAX;
  std::size_t before_func = kNoFunction;
  while (fuse && feature && current != root) {
    const auto it = users.find(current);
    if (it == users.end() || it->second.size() != 1) break;
    const Instruction* user = it->second.front();
    const bool convert = user->opcode == Opcode::kConvert && !int8 && user->shape.type == ElementType::kBf16 &&
                         IsFloatMxuType(current->shape.type) && user->shape.dims == current->shape.dims;
    if (!convert && !user->shape.SameAs(current->shape)) break;
    const auto other = [&]() -> const Instruction* {
      for (const Instruction* operand : user->operands) {
        if (operand != current) return operand;
      }
      return nullptr;
    };
    const std::int64_t channels = anchor.shape.dims.at(static_cast<std::size_t>(*feature));
    const std::optional<std::pair<double, double>> bounds = int8 ? std::nullopt : ClampBounds(*user, *current);
    if (convert) {
      // A convert to bf16 is the rounding the drain does anyway (bf16 rounding is idempotent).
    } else if (before_func == kNoFunction && group.residual == nullptr && anchor.opcode == Opcode::kConvolution &&
               other() != nullptr && IsResidualAdd(*user, config) && !claimed.contains(user)) {
      // The other operand starts the accumulators; per-channel terms after the add would
      // scale it too, so they end the chain (PerChannelVector below is not tried again).
      group.residual = other();
    } else if (before_func == kNoFunction && group.residual == nullptr &&
               (user->opcode == Opcode::kAdd || (user->opcode == Opcode::kMultiply && !int8)) && other() != nullptr) {
      const Instruction* vector = PerChannelVector(*other(), *feature, channels);
      if (vector == nullptr) break;
      group.epilogue.push_back({user->opcode == Opcode::kAdd ? EpilogueTerm::Op::kAdd : EpilogueTerm::Op::kMultiply,
                                vector->name});
    } else if (bounds) {
      if (before_func == kNoFunction) before_func = group.chain.size();
      lo = std::max(lo, bounds->first);
      hi = std::min(hi, bounds->second);
    } else {
      break;
    }
    group.chain.push_back(user);
    current = user;
  }
  if (before_func != kNoFunction && lo > hi) {
    // clamp(lo > hi) is the constant hi in HLO; leave such a chain to the host.
    group.chain.resize(before_func);
    before_func = kNoFunction;
  }
  if (before_func != kNoFunction) {
    group.lo = static_cast<float>(lo);
    group.hi = static_cast<float>(hi);
    group.func = FunctionOf(lo, hi);
  }
  if (int8) {
    // int32 accumulators are stored as they are, unless a requantization to s8 follows.
    if (fuse) PlanRequantization(group, users, root);
    return group;
  }

  // The drain rounds to bf16. That is the result's own type for bf16, and harmless for an f32
  // result whose every use rounds to bf16 anyway (rounding.cpp).
  const auto narrow_ok = [&](const Instruction* result) {
    return result->shape.type == ElementType::kBf16 || RoundingToBf16IsInvisible(*result, users, root, config, fuse);
  };
  // A residual sum goes through ACTIVATE (its bias row; the starting tensor is the shortcut):
  // its rounding to bf16 is the residual add's documented one (IsResidualAdd).
  group.narrow_output = group.residual != nullptr || narrow_ok(group.Result());
  if (!group.narrow_output && before_func != kNoFunction) {
    group.chain.resize(before_func);  // an fp32 store cannot apply the function: host
    group.func = isa::ActFunc::kNone;
    group.narrow_output = narrow_ok(group.Result());
  }
  // A trailing convert to bf16 without a narrow store cannot happen: its result is bf16.
  return group;
}

}  // namespace systole::compiler::detail
