// batch-norm-training, -inference and -grad: per feature (the operand's `feature_index`
// dimension), over every other dimension. Computed in double and rounded once to the element
// type, so results are at least as exact as XLA's expansion of the same ops into f32 arithmetic
// (which rounds every step; tests compare with JAX within f32 tolerance). The variance is the
// biased one (divided by N), as XLA's.
#include <cmath>
#include <cstddef>

#include "toolchain/hlo/interp_kernels.hpp"

namespace systole::hlo::detail {
namespace {

// Walks the operand's elements with the feature each belongs to.
struct FeatureLayout {
  std::size_t features = 0, inner = 1, count = 0;  // inner: elements after the feature dimension
  explicit FeatureLayout(const Instruction& instruction, const Shape& operand) {
    const auto index = static_cast<std::size_t>(instruction.feature_index);
    features = static_cast<std::size_t>(operand.dims[index]);
    for (std::size_t d = index + 1; d < operand.dims.size(); ++d) inner *= static_cast<std::size_t>(operand.dims[d]);
    count = static_cast<std::size_t>(operand.Elements());
  }
  std::size_t FeatureOf(std::size_t element) const { return element / inner % features; }
  double PerFeature() const { return features == 0 ? 0.0 : static_cast<double>(count / features); }
};

// Per feature: the mean and the biased variance of `x`.
void Moments(const FeatureLayout& layout, const std::vector<double>& x, std::vector<double>& mean,
             std::vector<double>& variance) {
  mean.assign(layout.features, 0.0);
  variance.assign(layout.features, 0.0);
  const double n = layout.PerFeature();
  if (n == 0) return;
  for (std::size_t i = 0; i < layout.count; ++i) mean[layout.FeatureOf(i)] += x[i];
  for (double& m : mean) m /= n;
  for (std::size_t i = 0; i < layout.count; ++i) {
    const double d = x[i] - mean[layout.FeatureOf(i)];
    variance[layout.FeatureOf(i)] += d * d;
  }
  for (double& v : variance) v /= n;
}

// (x − mean) / sqrt(variance + ε) · scale + offset.
Literal Normalize(const Instruction& instruction, const FeatureLayout& layout, const Literal& x,
                  const std::vector<double>& scale, const std::vector<double>& offset,
                  const std::vector<double>& mean, const std::vector<double>& variance) {
  Literal out(x.shape);
  for (std::size_t i = 0; i < layout.count; ++i) {
    const std::size_t f = layout.FeatureOf(i);
    out.values[i] = (x.values[i] - mean[f]) / std::sqrt(variance[f] + instruction.epsilon) * scale[f] + offset[f];
  }
  RoundAll(x.shape.type, out.values);
  return out;
}

Literal PerFeature(ElementType type, std::vector<double> values) {
  Literal out(Shape(type, {static_cast<std::int64_t>(values.size())}));
  out.values = std::move(values);
  RoundAll(type, out.values);
  return out;
}

}  // namespace

Literal EvalBatchNorm(const Instruction& instruction, const Operands& operands) {
  const Literal& x = *operands.at(0);
  const ElementType type = x.shape.type;
  const FeatureLayout layout(instruction, x.shape);
  const std::vector<double>& scale = operands.at(1)->values;
  if (instruction.opcode == Opcode::kBatchNormInference) {
    return Normalize(instruction, layout, x, scale, operands.at(2)->values, operands.at(3)->values,
                     operands.at(4)->values);
  }
  if (instruction.opcode == Opcode::kBatchNormTraining) {
    std::vector<double> mean, variance;
    Moments(layout, x.values, mean, variance);
    Literal result(instruction.shape);
    result.elements = {Normalize(instruction, layout, x, scale, operands.at(2)->values, mean, variance),
                       PerFeature(type, mean), PerFeature(type, variance)};
    return result;
  }
  // batch-norm-grad, with x̂ = (x − mean)·inv and inv = 1/sqrt(variance + ε):
  //   grad_offset = Σ dy, grad_scale = Σ dy·x̂,
  //   grad_operand = scale·inv/N · (N·dy − grad_offset − x̂·grad_scale).
  const std::vector<double>& mean = operands.at(2)->values;
  const std::vector<double>& variance = operands.at(3)->values;
  const std::vector<double>& dy = operands.at(4)->values;
  std::vector<double> inv(layout.features), grad_scale(layout.features, 0.0), grad_offset(layout.features, 0.0);
  for (std::size_t f = 0; f < layout.features; ++f) inv[f] = 1.0 / std::sqrt(variance[f] + instruction.epsilon);
  const auto x_hat = [&](std::size_t i) {
    const std::size_t f = layout.FeatureOf(i);
    return (x.values[i] - mean[f]) * inv[f];
  };
  for (std::size_t i = 0; i < layout.count; ++i) {
    const std::size_t f = layout.FeatureOf(i);
    grad_offset[f] += dy[i];
    grad_scale[f] += dy[i] * x_hat(i);
  }
  const double n = layout.PerFeature();
  Literal grad_operand(x.shape);
  for (std::size_t i = 0; i < layout.count; ++i) {
    const std::size_t f = layout.FeatureOf(i);
    grad_operand.values[i] = scale[f] * inv[f] / n * (n * dy[i] - grad_offset[f] - x_hat(i) * grad_scale[f]);
  }
  RoundAll(type, grad_operand.values);
  Literal result(instruction.shape);
  result.elements = {std::move(grad_operand), PerFeature(type, std::move(grad_scale)),
                     PerFeature(type, std::move(grad_offset))};
  return result;
}

}  // namespace systole::hlo::detail
