// Reductions on the vector unit's REDUCE (codegen RowReduce, ColumnReduce): a `reduce` with
// `add` (init 0) or `maximum` (init −∞) over contiguous dimensions of a bf16 value — directly, or
// of its convert to f32, as JAX writes `x.sum(-1)` / `x.mean(-1)` / `x.max(-1)` for bf16, or of
// an f32 activation at the MXU's DEFAULT precision (default_precision.cpp) — followed by
// reshapes and a divide or multiply by a constant (the mean's 1/n, which becomes REDUCE's scale)
// up to a convert to bf16. Trailing dimensions reduce along rows (a softmax's max and sum, a
// layer norm's mean); middle ones across rows (a global average pool over an NHWC image's
// pixels). The device sums in fp32 and rounds to bf16 once per REDUCE (docs/ISA.md), the HLO in
// f32 and rounds at the convert: the results differ in the bf16 rounding of partial sums,
// within the f32/bf16 tolerance (docs/COMPILER.md, "Reductions").
#include <fmt/core.h>

#include <bit>
#include <cmath>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

// The reduce's computation: add or maximum of its two parameters.
std::optional<Opcode> Combiner(const Instruction& reduce) {
  if (reduce.called.size() != 1 || reduce.called[0]->root == nullptr) return std::nullopt;
  const Instruction& root = *reduce.called[0]->root;
  if ((root.opcode != Opcode::kAdd && root.opcode != Opcode::kMaximum) || root.operands.size() != 2 ||
      root.operands[0]->opcode != Opcode::kParameter || root.operands[1]->opcode != Opcode::kParameter ||
      root.operands[0] == root.operands[1]) {
    return std::nullopt;
  }
  return root.opcode;
}

const Instruction* SingleUser(const Instruction& value, const Users& users, const Instruction* root) {
  if (&value == root) return nullptr;
  const auto it = users.find(&value);
  return it != users.end() && it->second.size() == 1 ? it->second.front() : nullptr;
}

}  // namespace

std::optional<RowReducePlan> PlanRowReduce(const Instruction& reduce, const Users& users, const Instruction* root,
                                           const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops,
                                           std::string& why_not) {
  if (config.dtype != DType::kBf16 || reduce.opcode != Opcode::kReduce || reduce.operands.size() != 2 ||
      !reduce.shape.IsArray()) {
    return std::nullopt;
  }
  const std::optional<Opcode> combiner = Combiner(reduce);
  const std::optional<double> init = UniformConstant(*reduce.operands[1]);
  if (!combiner || !init || (*combiner == Opcode::kAdd ? *init != 0.0 : *init != -INFINITY)) {
    why_not = "REDUCE computes add from 0 and maximum from -inf only";
    return std::nullopt;
  }
  const Instruction* data = reduce.operands[0];
  const std::size_t rank = data->shape.Rank();
  // The reduced dimensions must be contiguous: [outer, columns, inner] in row-major order.
  std::vector<std::int64_t> dims = reduce.dimensions;
  std::sort(dims.begin(), dims.end());
  bool contiguous = !dims.empty();
  for (std::size_t i = 1; i < dims.size(); ++i) contiguous = contiguous && dims[i] == dims[i - 1] + 1;
  if (!contiguous) {
    why_not = "REDUCE reduces neighbouring dimensions only (these are not next to each other)";
    return std::nullopt;
  }
  RowReducePlan plan;
  plan.reduce = &reduce;
  plan.max = *combiner == Opcode::kMaximum;
  plan.input = data;
  const bool f32 = fuse && f32_ops.contains(&reduce);
  if (fuse && data->opcode == Opcode::kConvert && data->operands[0]->shape.type == ElementType::kBf16) {
    plan.input = data->operands[0];  // f32 arithmetic on bf16 values: the device's fp32 sum
  } else if (data->shape.type != ElementType::kBf16 && !f32) {
    why_not = fmt::format("a reduction of {} values that is not on an inference path (the vector unit reads bf16; "
                          "docs/COMPILER.md, \"f32 programs on the vector unit\")",
                          hlo::ElementTypeName(data->shape.type));
    return std::nullopt;
  }
  plan.columns = 1;
  for (std::int64_t d : dims) plan.columns *= static_cast<std::uint64_t>(data->shape.dims[static_cast<std::size_t>(d)]);
  for (std::size_t d = static_cast<std::size_t>(dims.back()) + 1; d < rank; ++d) {
    plan.inner *= static_cast<std::uint64_t>(data->shape.dims[d]);
  }
  // The chain: reshapes, one divide / multiply by a constant (the scale; sums only), a convert.
  double scale = 1.0;
  bool scaled = false;
  const Instruction* current = &reduce;
  while (fuse) {
    const Instruction* user = SingleUser(*current, users, root);
    if (user == nullptr) break;
    const bool moves = (user->opcode == Opcode::kReshape || user->opcode == Opcode::kBitcast) &&
                       user->shape.type == current->shape.type;
    std::optional<double> factor;
    if (!plan.max && !scaled && (user->opcode == Opcode::kDivide || user->opcode == Opcode::kMultiply) &&
        user->operands.size() == 2 && user->operands[0] == current) {
      if (const std::optional<double> c = UniformConstant(*user->operands[1]); c && *c != 0.0) {
        factor = user->opcode == Opcode::kDivide ? 1.0 / *c : *c;
      }
    }
    const bool to_bf16 = user->opcode == Opcode::kConvert && user->shape.type == ElementType::kBf16;
    if (factor) {
      scale = *factor;
      scaled = true;
    } else if (!moves && !to_bf16) {
      break;
    }
    plan.chain.push_back(user);
    current = user;
    if (to_bf16) break;
  }
  const Instruction& result = *plan.Result();
  if (result.shape.type != ElementType::kBf16 && !f32 && !RoundingToBf16IsInvisible(result, users, root, config, fuse)) {
    why_not = "its f32 result is read at full precision (REDUCE rounds to bf16)";
    return std::nullopt;
  }
  plan.scale_bits = scaled ? std::bit_cast<std::uint32_t>(static_cast<float>(scale)) : 0;
  return plan;
}

DeviceStep LowerRowReduce(const RowReducePlan& plan, const Config& config) {
  codegen::ProgramBuilder builder(config);
  const Instruction& result = *plan.Result();
  const auto bf16 = image::DataType::kBf16;
  const std::uint64_t elements = static_cast<std::uint64_t>(plan.input->shape.Elements());
  const std::uint64_t outer = elements / (plan.columns * plan.inner), results = outer * plan.inner;
  DeviceStep step;
  step.kernel = plan.inner == 1
                    ? fmt::format("reduce {} {}x{}", plan.max ? "max" : "sum", outer, plan.columns)
                    : fmt::format("reduce {} {}x{}x{} over rows", plan.max ? "max" : "sum", outer, plan.columns, plan.inner);
  if (plan.reduce->operands[0] != plan.input) step.covers.push_back(plan.reduce->operands[0]->name);
  step.covers.push_back(plan.reduce->name);
  for (const Instruction* i : plan.chain) step.covers.push_back(i->name);
  std::vector<std::int64_t> in_identity, out_identity;
  for (std::size_t d = 0; d < plan.input->shape.Rank(); ++d) in_identity.push_back(static_cast<std::int64_t>(d));
  for (std::size_t d = 0; d < result.shape.Rank(); ++d) out_identity.push_back(static_cast<std::int64_t>(d));
  std::vector<std::uint64_t> in_shape{outer, plan.columns};
  if (plan.inner != 1) in_shape.push_back(plan.inner);
  const codegen::Tensor x = builder.AddInput("x", bf16, in_shape);
  const codegen::Tensor y = builder.AddOutput("y", bf16, {results});
  codegen::RowReduceParams params;
  params.op = plan.max ? isa::PoolOp::kMax : isa::PoolOp::kSum;
  params.scale_bits = plan.scale_bits;
  if (plan.inner == 1) {
    codegen::RowReduce(builder, x, y, params);
  } else {
    codegen::ColumnReduce(builder, x, y, params);
  }
  step.inputs.push_back({Binding::Kind::kValue, plan.input->name, in_identity, bf16, in_shape});
  step.output = {Binding::Kind::kValue, result.name, out_identity, bf16, {results}};
  FinishStep(step, builder, config);
  return step;
}

}  // namespace systole::compiler::detail
