// Max pools on the device: a reduce-window whose computation is max(a, b), over at most two
// dimensions, becomes the POOL kernel (codegen/pool.cpp). The POOL works on NHWC images; max
// pooling treats every (batch, channel) pair alike, so any two untouched dimensions may play N
// and C and the binding's permutation brings the value into that order (NCHW pools included).
// A -inf pad in front of the pool, or a zero pad of non-negative values (how JAX writes
// ResNet's stem pool), becomes the POOL's padding, which is filled with -inf rows.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool IsMaxComputation(const Instruction& reduction) {
  if (reduction.called.size() != 1 || reduction.called[0]->root == nullptr) return false;
  const Instruction& root = *reduction.called[0]->root;
  return root.opcode == Opcode::kMaximum && root.operands.size() == 2 &&
         root.operands[0]->opcode == Opcode::kParameter && root.operands[1]->opcode == Opcode::kParameter &&
         root.operands[0] != root.operands[1];
}

// The init / padding value is the identity of max on the device's element type: -inf for
// bf16, anything <= -128 for s8 (the POOL pads with -inf / -128).
bool IsMaxIdentity(const Instruction& value, bool int8) {
  const std::optional<double> v = UniformConstant(value);
  return v && (int8 ? *v <= -128.0 : (std::isinf(*v) && *v < 0));
}

std::uint32_t U32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

}  // namespace

std::optional<PoolPlan> PlanMaxPool(const Instruction& pool, const Users& users, const Config& config,
                                    const std::function<bool(const Instruction&)>& non_negative,
                                    std::string& why_not) {
  const bool int8 = config.dtype == DType::kInt8;
  const auto no = [&](std::string reason) -> std::optional<PoolPlan> {
    why_not = std::move(reason);
    return std::nullopt;
  };
  if (pool.opcode != Opcode::kReduceWindow || pool.operands.size() != 2) return no("no device kernel");
  if (!IsMaxComputation(pool)) return no("not a max pool (the POOL kernel's exact form)");
  const hlo::ElementType type = pool.shape.type;
  if (int8 ? type != hlo::ElementType::kS8
           : type != hlo::ElementType::kF32 && type != hlo::ElementType::kBf16) {
    return no(fmt::format("a {} max pool on a {} configuration", hlo::ElementTypeName(type), config.name));
  }
  if (!IsMaxIdentity(*pool.operands[1], int8)) return no("the init value is not -inf");
  if (pool.shape.Rank() != 4 || pool.window.size() != 4) return no("not a 2-D pool of a rank-4 value");
  std::vector<std::int64_t> spatial, other;
  for (std::size_t d = 0; d < 4; ++d) {
    const hlo::WindowDim& w = pool.window[d];
    if (w.lhs_dilation != 1 || w.rhs_dilation != 1 || w.reversal) return no("a dilated window");
    if (w.pad_low < 0 || w.pad_high < 0) return no("negative padding");
    const bool trivial = w.size == 1 && w.stride == 1 && w.pad_low == 0 && w.pad_high == 0;
    (trivial ? other : spatial).push_back(static_cast<std::int64_t>(d));
  }
  if (spatial.size() > 2) return no("a window over more than two dimensions");
  // Too few pooled dimensions: borrow trivial ones (they pool 1x1), the middle ones first.
  for (std::int64_t d : {1, 2, 0, 3}) {
    if (spatial.size() == 2) break;
    if (const auto it = std::find(other.begin(), other.end(), d); it != other.end()) {
      other.erase(it);
      spatial.push_back(d);
    }
  }
  std::sort(spatial.begin(), spatial.end());

  PoolPlan plan;
  plan.pool = &pool;
  plan.input = pool.operands[0];
  plan.permutation = {other[0], spatial[0], spatial[1], other[1]};
  const hlo::WindowDim& wh = pool.window[static_cast<std::size_t>(spatial[0])];
  const hlo::WindowDim& ww = pool.window[static_cast<std::size_t>(spatial[1])];
  plan.window_h = U32(wh.size);
  plan.window_w = U32(ww.size);
  plan.stride_h = U32(wh.stride);
  plan.stride_w = U32(ww.stride);
  plan.padding = {U32(wh.pad_low), U32(wh.pad_high), U32(ww.pad_low), U32(ww.pad_high)};

  // An explicit pad of only the pooled dimensions, read by nothing else, with the max identity
  // or with 0 in front of non-negative values (JAX pads ResNet's stem pool, after a ReLU, with
  // 0): when no window lies wholly in the padding (pad < window), every window holds a value
  // >= 0, so a zero pad changes no maximum and the POOL's -inf padding gives the same result.
  const Instruction& pad = *plan.input;
  const auto pad_users = users.find(&pad);
  const bool zero_pad = pad.opcode == Opcode::kPad && UniformConstant(*pad.operands.at(1)) == 0.0 &&
                        non_negative(*pad.operands.at(0));
  if (pad.opcode == Opcode::kPad && (zero_pad || IsMaxIdentity(*pad.operands.at(1), int8)) &&
      pad_users != users.end() && pad_users->second.size() == 1) {
    bool absorbable = true;
    for (std::size_t d = 0; d < pad.padding.size(); ++d) {
      const hlo::PadDim& p = pad.padding[d];
      const bool pooled = std::find(spatial.begin(), spatial.end(), std::int64_t(d)) != spatial.end();
      absorbable = absorbable && p.interior == 0 && p.low >= 0 && p.high >= 0 &&
                   (pooled || (p.low == 0 && p.high == 0));
      if (zero_pad && pooled) {
        const hlo::WindowDim& w = pool.window[d];
        absorbable = absorbable && p.low + w.pad_low < w.size && p.high + w.pad_high < w.size;
      }
    }
    if (absorbable) {
      for (std::size_t s = 0; s < 2; ++s) {
        const hlo::PadDim& p = pad.padding[static_cast<std::size_t>(spatial[s])];
        plan.padding[2 * s] += U32(p.low);
        plan.padding[2 * s + 1] += U32(p.high);
      }
      plan.pad = &pad;
      plan.input = pad.operands[0];
    }
  }
  return plan;
}

DeviceStep LowerPool(const PoolPlan& plan, const Config& config) {
  codegen::ProgramBuilder builder(config);
  const auto dtype = config.dtype == DType::kInt8 ? image::DataType::kInt8 : image::DataType::kBf16;
  std::vector<std::uint64_t> in_dims, out_dims;
  for (std::int64_t p : plan.permutation) {
    in_dims.push_back(static_cast<std::uint64_t>(plan.input->shape.dims.at(static_cast<std::size_t>(p))));
    out_dims.push_back(static_cast<std::uint64_t>(plan.pool->shape.dims.at(static_cast<std::size_t>(p))));
  }
  const codegen::Tensor x = builder.AddInput("x", dtype, in_dims);
  const codegen::Tensor y = builder.AddOutput("y", dtype, out_dims);
  codegen::PoolParams params;
  params.kind = codegen::PoolKind::kMax;
  params.window_h = plan.window_h;
  params.window_w = plan.window_w;
  params.stride_h = plan.stride_h;
  params.stride_w = plan.stride_w;
  params.pad_top = plan.padding[0];
  params.pad_bottom = plan.padding[1];
  params.pad_left = plan.padding[2];
  params.pad_right = plan.padding[3];
  codegen::Pool2D(builder, x, y, params);

  DeviceStep step;
  step.kernel = fmt::format("maxpool {}x{}/{} {}x{}x{}x{}", plan.window_h, plan.window_w, plan.stride_h, in_dims[0],
                            in_dims[1], in_dims[2], in_dims[3]);
  if (plan.pad != nullptr) step.covers.push_back(plan.pad->name);
  step.covers.push_back(plan.pool->name);
  step.inputs.push_back({Binding::Kind::kValue, plan.input->name, plan.permutation, dtype, in_dims});
  step.output = {Binding::Kind::kValue, plan.pool->name, plan.permutation, dtype, out_dims};
  FinishStep(step, builder, config);
  return step;
}

}  // namespace systole::compiler::detail
