// Layer norm along the last dimension as one device step (codegen LayerNorm: every intermediate
// in the unified buffer), matched from the normalising multiply (or divide) as JAX writes
// `(x - mean) * rsqrt(var + eps)` or `(x - mean) / sqrt(var + eps)` with mean and var row means:
//
//   mean = reduce(x) add over the last dim, a divide by n (with converts and reshapes)
//   d = subtract(x, broadcast(mean))           (JAX writes it twice: once for the square)
//   var = the same row mean of multiply(d, d)  v = add(var, ε)
//   y = multiply(d, broadcast(rsqrt(v)))  or  divide(d, broadcast(sqrt(v)))
//   [ y = multiply(y, broadcast(γ)) ]  [ y = add(y, broadcast(β)) ]   γ, β: [n] vectors
//
// Every intermediate must be read only inside the pattern. bf16, or f32 at DEFAULT precision on
// an inference path. The roundings are those of the step-by-step lowering (a divide by a sqrt is
// a multiply by the stored rsqrt there too), so the result is bit-identical to it.
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "arch/numerics/bf16.hpp"
#include "toolchain/codegen/kernels.hpp"
#include "toolchain/compiler/lowering.hpp"
#include "toolchain/compiler/row_patterns.hpp"

namespace systole::compiler::detail {

using hlo::Instruction;
using hlo::Opcode;

std::optional<LayerNormPlan> PlanLayerNorm(const Instruction& norm, const Users& users, const Instruction* root,
                                           const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops) {
  if (!fuse || config.dtype != DType::kBf16 || norm.operands.size() != 2 ||
      (norm.opcode != Opcode::kMultiply && norm.opcode != Opcode::kDivide)) {
    return std::nullopt;
  }
  const auto on_vector_unit = [&](const Instruction& i) {
    return i.shape.type == hlo::ElementType::kBf16 || f32_ops.contains(&i);
  };
  // A row mean computed on the vector unit: of bf16 values (converted to f32 for the sum), or in
  // f32 at DEFAULT precision.
  const auto row_mean = [&](const Instruction& value, std::vector<const Instruction*>& path) -> std::optional<ScaledRowSum> {
    std::optional<ScaledRowSum> sum = ScaledRowSumOf(value, path);
    if (!sum || !(sum->summed->shape.type == hlo::ElementType::kBf16 || f32_ops.contains(sum->reduce))) return std::nullopt;
    return sum;
  };
  std::vector<const Instruction*> r_path, mean_path, d_path, var_path;
  // y = d · broadcast(rsqrt(v)) or d / broadcast(sqrt(v)); the multiply's operands in either order.
  for (std::size_t side = 0; side < (norm.opcode == Opcode::kMultiply ? 2u : 1u); ++side) {
    r_path.clear();
    mean_path.clear();
    d_path.clear();
    var_path.clear();
    const Instruction& d = *norm.operands[side];
    const Instruction* r = RowValueOf(*norm.operands[1 - side], d.shape, r_path);
    const Opcode root_op = norm.opcode == Opcode::kMultiply ? Opcode::kRsqrt : Opcode::kSqrt;
    if (r == nullptr || r->opcode != root_op || d.opcode != Opcode::kSubtract || !on_vector_unit(norm) ||
        !on_vector_unit(*r) || !on_vector_unit(d)) {
      continue;
    }
    const Instruction& x = *d.operands[0];
    if (x.shape.Rank() == 0 || x.shape.dims != norm.shape.dims) continue;
    const Instruction* mean = RowValueOf(*d.operands[1], x.shape, d_path);
    // v = var + ε
    const Instruction& v = *r->operands[0];
    if (mean == nullptr || v.opcode != Opcode::kAdd || !on_vector_unit(v)) continue;
    std::optional<double> epsilon;
    const Instruction* var = nullptr;
    for (std::size_t k = 0; k < 2 && !epsilon; ++k) {
      epsilon = UniformConstant(*v.operands[1 - k]);
      var = v.operands[k];
    }
    if (!epsilon) continue;
    const std::optional<ScaledRowSum> mean_sum = row_mean(*mean, mean_path);
    const std::optional<ScaledRowSum> var_sum = row_mean(*var, var_path);
    if (!mean_sum || !var_sum || mean_sum->summed != &x || mean_sum->scale_bits != var_sum->scale_bits) continue;
    // var's rows are the squares of a subtract of the same mean from x (d itself or its twin).
    const Instruction& square = *var_sum->summed;
    if (square.opcode != Opcode::kMultiply || square.operands[0] != square.operands[1] || !on_vector_unit(square)) {
      continue;
    }
    const Instruction& twin = *square.operands[0];
    std::vector<const Instruction*> twin_path;
    if (&twin != &d && (twin.opcode != Opcode::kSubtract || twin.operands[0] != &x || !on_vector_unit(twin) ||
                        RowValueOf(*twin.operands[1], x.shape, twin_path) != mean)) {
      continue;
    }
    LayerNormPlan plan;
    plan.input = &x;
    plan.inverse_n_bits = mean_sum->scale_bits;
    plan.epsilon_bits = numerics::F32ToBf16(std::bit_cast<std::uint32_t>(static_cast<float>(*epsilon)));
    std::vector<const Instruction*>& covers = plan.covers;  // in execution order
    covers.insert(covers.end(), mean_path.rbegin(), mean_path.rend());
    covers.insert(covers.end(), d_path.rbegin(), d_path.rend());
    covers.push_back(&d);
    if (&twin != &d) {
      covers.insert(covers.end(), twin_path.rbegin(), twin_path.rend());
      covers.push_back(&twin);
    }
    covers.push_back(&square);
    covers.insert(covers.end(), var_path.rbegin(), var_path.rend());
    covers.push_back(&v);
    covers.push_back(r);
    covers.insert(covers.end(), r_path.rbegin(), r_path.rend());
    covers.push_back(&norm);
    // γ and β after it, each when the previous result has no other reader.
    const Instruction* result = &norm;
    const auto single_user = [&](const Instruction* i) -> const Instruction* {
      const auto it = users.find(i);
      return i != root && it != users.end() && it->second.size() == 1 ? it->second.front() : nullptr;
    };
    for (const Opcode op : {Opcode::kMultiply, Opcode::kAdd}) {
      const Instruction* user = single_user(result);
      if (user == nullptr || user->opcode != op || user->operands.size() != 2 || !on_vector_unit(*user)) break;
      const std::size_t mine = user->operands[0] == result ? 0 : 1;
      const Instruction* vector = ColumnVectorOf(*user->operands[1 - mine], x.shape);
      if (user->operands[mine] != result || vector == nullptr) break;
      (op == Opcode::kMultiply ? plan.gamma : plan.beta) = vector;
      covers.push_back(user);
      result = user;
    }
    plan.result = result;
    // d and its twin share their broadcast of the mean: each instruction once.
    std::vector<const Instruction*> unique;
    for (const Instruction* i : covers) {
      if (std::find(unique.begin(), unique.end(), i) == unique.end()) unique.push_back(i);
    }
    covers = std::move(unique);
    if (!IntermediatesArePrivate(covers, result, users, root)) return std::nullopt;
    plan.n = static_cast<std::uint64_t>(x.shape.dims.back());
    plan.rows = static_cast<std::uint64_t>(x.shape.Elements()) / plan.n;
    if (codegen::LayerNormRowsPerBlock(config, plan.n) == 0) return std::nullopt;
    return plan;
  }
  return std::nullopt;
}

DeviceStep LowerLayerNorm(const LayerNormPlan& plan, const Config& config) {
  codegen::ProgramBuilder builder(config);
  const auto bf16 = image::DataType::kBf16;
  DeviceStep step;
  step.kernel = fmt::format("layer norm {}x{}{}{}", plan.rows, plan.n, plan.gamma ? " ·γ" : "", plan.beta ? " +β" : "");
  for (const hlo::Instruction* i : plan.covers) step.covers.push_back(i->name);
  const auto identity = [](const hlo::Instruction& v) {
    std::vector<std::int64_t> dims;
    for (std::size_t d = 0; d < v.shape.Rank(); ++d) dims.push_back(static_cast<std::int64_t>(d));
    return dims;
  };
  const std::vector<std::uint64_t> shape{plan.rows, plan.n};
  const codegen::Tensor x = builder.AddInput("x", bf16, shape);
  step.inputs.push_back({Binding::Kind::kValue, plan.input->name, identity(*plan.input), bf16, shape});
  codegen::LayerNormParams params;
  params.inverse_n_bits = plan.inverse_n_bits;
  params.epsilon_bits = plan.epsilon_bits;
  if (plan.gamma != nullptr) {
    params.gamma = builder.AddInput("gamma", bf16, {plan.n});
    step.inputs.push_back({Binding::Kind::kValue, plan.gamma->name, identity(*plan.gamma), bf16, {plan.n}});
  }
  if (plan.beta != nullptr) {
    params.beta = builder.AddInput("beta", bf16, {plan.n});
    step.inputs.push_back({Binding::Kind::kValue, plan.beta->name, identity(*plan.beta), bf16, {plan.n}});
  }
  const codegen::Tensor y = builder.AddOutput("y", bf16, shape);
  codegen::LayerNorm(builder, x, y, params);
  step.output = {Binding::Kind::kValue, plan.result->name, identity(*plan.result), bf16, shape};
  FinishStep(step, builder, config);
  return step;
}

}  // namespace systole::compiler::detail
