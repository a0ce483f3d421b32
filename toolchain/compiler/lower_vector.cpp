// Elementwise instructions on the vector unit: add, subtract, multiply, maximum, minimum of two
// bf16 tensors of one shape, on bf16 configurations. The vector unit computes in fp32 and
// rounds to bf16 (docs/NUMERICS.md), as XLA's bf16 ops do. f32 programs keep these ops on
// the host: the vector unit's element type is bf16, which would lose precision.
#include <fmt/core.h>

#include "codegen/kernels.hpp"
#include "compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

std::optional<isa::VecOp> VectorOpOf(hlo::Opcode opcode) {
  switch (opcode) {
    case hlo::Opcode::kAdd: return isa::VecOp::kAdd;
    case hlo::Opcode::kSubtract: return isa::VecOp::kSub;
    case hlo::Opcode::kMultiply: return isa::VecOp::kMul;
    case hlo::Opcode::kMaximum: return isa::VecOp::kMax;
    case hlo::Opcode::kMinimum: return isa::VecOp::kMin;
    default: return std::nullopt;
  }
}

}  // namespace

bool RunsOnVectorUnit(const hlo::Instruction& instruction, const Config& config) {
  if (config.dtype != DType::kBf16 || !VectorOpOf(instruction.opcode)) return false;
  if (instruction.shape.type != hlo::ElementType::kBf16 || instruction.shape.Elements() == 0) return false;
  for (const hlo::Instruction* operand : instruction.operands) {
    if (!operand->shape.SameAs(instruction.shape)) return false;
  }
  return true;
}

DeviceStep LowerVector(const hlo::Instruction& instruction, const Config& config) {
  codegen::ProgramBuilder builder(config);
  std::vector<std::uint64_t> dims;
  std::vector<std::int64_t> identity;
  for (std::size_t d = 0; d < instruction.shape.Rank(); ++d) {
    dims.push_back(static_cast<std::uint64_t>(instruction.shape.dims[d]));
    identity.push_back(static_cast<std::int64_t>(d));
  }
  if (dims.empty()) dims.push_back(1);  // a scalar is one element
  const auto bf16 = assembly::DataType::kBf16;
  const codegen::Tensor a = builder.AddInput("a", bf16, dims);
  const codegen::Tensor b = builder.AddInput("b", bf16, dims);
  const codegen::Tensor y = builder.AddOutput("y", bf16, dims);
  DeviceStep step;
  step.kernel = fmt::format("vector {} {}", hlo::OpcodeName(instruction.opcode), instruction.shape.ToString());
  step.covers = {instruction.name};
  builder.BeginKernel(step.kernel);
  codegen::ElementwiseParams params;
  params.op = *VectorOpOf(instruction.opcode);
  codegen::Elementwise(builder, a, b, y, params);
  for (const hlo::Instruction* operand : instruction.operands) {
    step.inputs.push_back({Binding::Kind::kValue, operand->name, identity, bf16, dims});
  }
  step.output = {Binding::Kind::kValue, instruction.name, identity, bf16, dims};
  step.program = builder.Finish();
  step.program.config = config.name;
  const codegen::CycleEstimate& total = builder.Estimates().back();
  step.estimate = {total.cycles, total.mxu_busy, total.macs};
  return step;
}

}  // namespace systole::compiler::detail
