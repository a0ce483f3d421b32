// Input (lhs) dilation made explicit: a convolution whose input is dilated — the input
// gradient of a strided convolution, as jax.grad writes it (`lhs_dilate=2x2`) — becomes a
// `pad` with interior padding (the zeros between the input's pixels, data movement for the
// host) and the same convolution without dilation, which the MXU runs. docs/COMPILER.md,
// "Strided convolutions' input gradients".
//
// The two are the same sum: XLA dilates the input by inserting lhs_dilation - 1 zeros between
// neighbouring pixels (none at the edges), then pads it by pad_low / pad_high — exactly
// pad(interior = lhs_dilation - 1) followed by the convolution's own padding. A product with an
// inserted zero is +0 or -0 and leaves every partial sum as it was (a sum that starts from +0
// stays +0 after -0), so the result is bit-identical to skipping the zeros, as XLA's evaluator
// and our interpreter do — unless a weight is infinite or NaN, when 0 x w is NaN where they
// skip (a weight that is not finite has ruined the training step anyway).
#include <fmt/core.h>

#include <algorithm>

#include "toolchain/compiler/lowering.hpp"
#include "toolchain/hlo/pass.hpp"

namespace systole::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

bool AnyMxuTypes(const Instruction& conv) {
  const ElementType lhs = conv.operands.at(0)->shape.type, rhs = conv.operands.at(1)->shape.type;
  const ElementType out = conv.shape.type;
  const auto floating = [](ElementType t) { return t == ElementType::kF32 || t == ElementType::kBf16; };
  const bool int8 = lhs == ElementType::kS8 && rhs == ElementType::kS8 && out == ElementType::kS32;
  return int8 || (floating(lhs) && floating(rhs) && floating(out));
}

// A convolution the MXU would take (fusion.cpp, MxuRejection) but for its input dilation.
bool DilatedOnlyInItsInput(const Instruction& conv) {
  if (conv.opcode != Opcode::kConvolution || !AnyMxuTypes(conv) || conv.shape.Elements() == 0) return false;
  const bool dilated = std::any_of(conv.window.begin(), conv.window.end(),
                                   [](const hlo::WindowDim& w) { return w.lhs_dilation > 1; });
  return dilated && !detail::ConvolutionKernelRejection(conv, true);
}

class ExplicitInputDilation : public hlo::Pass {
 public:
  std::string_view name() const override { return "explicit-input-dilation"; }

  hlo::PassResult Run(hlo::Module& module) override {
    bool changed = false;
    for (const auto& computation : module.computations) {
      for (Instruction* conv : computation->PostOrder()) {
        if (!DilatedOnlyInItsInput(*conv)) continue;
        Rewrite(*computation, *conv);
        changed = true;
      }
    }
    return hlo::PassResult::Changed(changed);
  }

 private:
  static void Rewrite(hlo::Computation& computation, Instruction& conv) {
    Instruction* input = conv.operands.at(0);
    auto zero = std::make_unique<Instruction>();
    zero->name = computation.UniqueName(conv.name + ".dilation_zero");
    zero->opcode = Opcode::kConstant;
    zero->shape = hlo::Shape(input->shape.type, {});
    zero->literal = hlo::Literal::Scalar(input->shape.type, 0.0);
    zero->metadata = conv.metadata;
    Instruction* zero_at = computation.Insert(std::move(zero), &conv);

    auto pad = std::make_unique<Instruction>();
    pad->name = computation.UniqueName(conv.name + ".dilated_input");
    pad->opcode = Opcode::kPad;
    pad->shape = input->shape;
    pad->padding.assign(input->shape.Rank(), hlo::PadDim{});
    for (std::size_t s = 0; s < conv.conv_dims.input_spatial.size(); ++s) {
      const auto dim = static_cast<std::size_t>(conv.conv_dims.input_spatial[s]);
      hlo::WindowDim& w = conv.window.at(s);
      const std::int64_t size = input->shape.dims.at(dim);
      pad->padding[dim].interior = w.lhs_dilation - 1;
      pad->shape.dims[dim] = size == 0 ? 0 : (size - 1) * w.lhs_dilation + 1;
      w.lhs_dilation = 1;
    }
    pad->operands = {input, zero_at};
    pad->metadata = conv.metadata;
    pad->location = conv.location;
    conv.operands[0] = computation.Insert(std::move(pad), &conv);
  }
};

}  // namespace

namespace detail {

void MakeInputDilationExplicit(hlo::Module& module, const std::string& source_name) {
  hlo::Pipeline pipeline("back-end");
  pipeline.Add<ExplicitInputDilation>();
  const hlo::PassResult result = pipeline.Run(module);
  if (!result.ok()) throw std::runtime_error(fmt::format("{}: {}", source_name, *result.error));
}

}  // namespace detail
}  // namespace systole::compiler
