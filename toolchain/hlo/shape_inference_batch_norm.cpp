// Shape inference for batch normalization, as XLA defines it: statistics over every dimension of
// the operand but `feature_index`, one value per feature.
//   batch-norm-training(operand, scale, offset)              -> (output, mean, variance)
//   batch-norm-inference(operand, scale, offset, mean, variance) -> output
//   batch-norm-grad(operand, scale, mean, variance, grad_output) -> (grad_operand, grad_scale,
//                                                                   grad_offset)
#include <fmt/core.h>

#include <cmath>

#include "toolchain/hlo/shape_inference_rules.hpp"

namespace systole::hlo::detail {

Shape Inference::BatchNorm() const {
  const Opcode op = i_.opcode;
  OperandCount(op == Opcode::kBatchNormTraining ? 3 : 5);
  const Shape& operand = ArrayOperand(0);
  Require(IsFloating(operand.type), fmt::format("needs a floating-point operand, found {}", operand.ToString()));
  Require(operand.Rank() >= 1, "needs an operand of rank >= 1");
  Dimension(i_.feature_index, operand.Rank(), "feature_index");
  Require(std::isfinite(i_.epsilon) && i_.epsilon >= 0,
          fmt::format("epsilon must be a finite value >= 0, found {}", i_.epsilon));
  const Shape per_feature(operand.type, {operand.dims[static_cast<std::size_t>(i_.feature_index)]});
  // Which operands hold one value per feature, and which one is shaped like the operand.
  static constexpr const char* kTrainingNames[] = {"operand", "scale", "offset"};
  static constexpr const char* kInferenceNames[] = {"operand", "scale", "offset", "mean", "variance"};
  static constexpr const char* kGradNames[] = {"operand", "scale", "mean", "variance", "grad_output"};
  const char* const* names = op == Opcode::kBatchNormTraining    ? kTrainingNames
                             : op == Opcode::kBatchNormInference ? kInferenceNames
                                                                 : kGradNames;
  for (std::size_t k = 1; k < i_.operands.size(); ++k) {
    const Shape& shape = ArrayOperand(k);
    const bool like_operand = op == Opcode::kBatchNormGrad && k == 4;
    const Shape& expected = like_operand ? operand : per_feature;
    Require(shape.SameAs(expected), fmt::format("{} (operand {}, '{}') must be {}, found {}", names[k], k,
                                                i_.operands[k]->name, expected.ToString(), shape.ToString()));
  }
  if (op == Opcode::kBatchNormInference) return operand;
  return Shape::Tuple({operand, per_feature, per_feature});  // (output, mean, variance) or the gradients
}

}  // namespace systole::hlo::detail
