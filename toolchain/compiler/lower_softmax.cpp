// Softmax along the last dimension as one device step (codegen Softmax: every intermediate in
// the unified buffer), matched from its divide back to its input as JAX writes
// `jax.nn.softmax(x, axis=-1)`:
//
//   m = reduce(x, −∞) max over the last dim   [ m = maximum(m, −∞) ]
//   t = subtract(x, broadcast(m))             e = exponential(t)
//   s = reduce([convert(]e[)], 0) add over the last dim
//   y = divide(e, broadcast(s))
//
// with any reshapes, unit broadcasts and converts between a row's value and its broadcast (the
// bf16 programs convert e to f32 for the sum and the sum back to bf16). Every intermediate
// must be read only inside the pattern; x and y are the step's input and output. bf16, or f32
// at DEFAULT precision on an inference path (default_precision.cpp).
//
// Numerics: the roundings of the step-by-step lowering (REDUCE, VECTOR sub, exp, recip, mul),
// so a bf16 program's result is bit-identical to it; in an f32 program at DEFAULT precision
// x − m is not rounded to bf16 before the exponential (one VECTOR sub with math=exp, fp32
// inside), as the f32 HLO computes it (docs/COMPILER.md, "Fused softmax").
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/compiler/lowering.hpp"
#include "toolchain/compiler/row_patterns.hpp"

namespace systole::compiler::detail {

using hlo::Instruction;
using hlo::Opcode;

std::optional<SoftmaxPlan> PlanSoftmax(const Instruction& y, const Users& users, const Instruction* root,
                                       const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops) {
  if (!fuse || config.dtype != DType::kBf16 || y.opcode != Opcode::kDivide || y.operands.size() != 2) return std::nullopt;
  const auto on_vector_unit = [&](const Instruction& i) {
    return i.shape.type == hlo::ElementType::kBf16 || f32_ops.contains(&i);
  };
  const Instruction& e = *y.operands[0];
  if (e.opcode != Opcode::kExp || e.operands[0]->opcode != Opcode::kSubtract) return std::nullopt;
  const Instruction& t = *e.operands[0];
  const Instruction& x = *t.operands[0];
  if (x.shape.Rank() == 0 || x.shape.dims != y.shape.dims || !on_vector_unit(y) || !on_vector_unit(e) ||
      !on_vector_unit(t)) {
    return std::nullopt;
  }
  SoftmaxPlan plan;
  plan.input = &x;
  plan.result = &y;
  // The max side: t = x − broadcast(max(x)), through an optional maximum with −∞.
  std::vector<const Instruction*> max_path, sum_path;  // from the broadcast back to the row value
  const Instruction* m = RowValueOf(*t.operands[1], x.shape, max_path);
  if (m != nullptr && m->opcode == Opcode::kMaximum && m->operands.size() == 2) {
    for (std::size_t k = 0; k < 2; ++k) {
      const std::optional<double> c = UniformConstant(*m->operands[1 - k]);
      if (c && *c == -INFINITY) {
        max_path.push_back(m);
        m = m->operands[k];
        break;
      }
    }
  }
  if (m == nullptr || !ReducesLastDimension(*m, true) || m->operands[0] != &x || !on_vector_unit(*m)) return std::nullopt;
  // The sum side: y = e / broadcast(sum(e)), the sum of e or of its convert to f32.
  const Instruction* s = RowValueOf(*y.operands[1], x.shape, sum_path);
  if (s == nullptr || !ReducesLastDimension(*s, false)) return std::nullopt;
  const Instruction* summed = s->operands[0];
  const bool converted =
      summed->opcode == Opcode::kConvert && summed->operands[0] == &e && summed->shape.type == hlo::ElementType::kF32;
  if (!converted && (summed != &e || !on_vector_unit(*s))) return std::nullopt;
  // In execution order.
  std::vector<const Instruction*>& covers = plan.covers;
  covers.push_back(m);
  covers.insert(covers.end(), max_path.rbegin(), max_path.rend());
  covers.push_back(&t);
  covers.push_back(&e);
  if (converted) covers.push_back(summed);
  covers.push_back(s);
  covers.insert(covers.end(), sum_path.rbegin(), sum_path.rend());
  covers.push_back(&y);
  if (!IntermediatesArePrivate(covers, &y, users, root)) return std::nullopt;  // nothing outside reads them
  plan.round_difference = t.shape.type == hlo::ElementType::kBf16;
  plan.n = static_cast<std::uint64_t>(x.shape.dims.back());
  plan.rows = static_cast<std::uint64_t>(x.shape.Elements()) / plan.n;
  if (codegen::SoftmaxRowsPerBlock(config, plan.n) == 0) return std::nullopt;
  return plan;
}

DeviceStep LowerSoftmax(const SoftmaxPlan& plan, const Config& config) {
  codegen::ProgramBuilder builder(config);
  const auto bf16 = image::DataType::kBf16;
  DeviceStep step;
  step.kernel = fmt::format("softmax {}x{}", plan.rows, plan.n);
  for (const hlo::Instruction* i : plan.covers) step.covers.push_back(i->name);
  std::vector<std::int64_t> identity;
  for (std::size_t d = 0; d < plan.input->shape.Rank(); ++d) identity.push_back(static_cast<std::int64_t>(d));
  const std::vector<std::uint64_t> shape{plan.rows, plan.n};
  const codegen::Tensor x = builder.AddInput("x", bf16, shape);
  const codegen::Tensor y = builder.AddOutput("y", bf16, shape);
  codegen::Softmax(builder, x, y, plan.round_difference);
  step.inputs.push_back({Binding::Kind::kValue, plan.input->name, identity, bf16, shape});
  step.output = {Binding::Kind::kValue, plan.result->name, identity, bf16, shape};
  FinishStep(step, builder, config);
  return step;
}

}  // namespace systole::compiler::detail
