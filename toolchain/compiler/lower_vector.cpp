// Elementwise instructions on the vector unit, on bf16 configurations: add, subtract, multiply,
// maximum, minimum of two bf16 tensors of one shape, and the maximum / minimum / clamp with
// constants that follow (ReLU, ReLU6, clamp) as the VECTOR instruction's function — or alone,
// as an activation (VECTOR max(a, a) with the function). The vector unit computes in fp32,
// applies the function and rounds to bf16 (docs/NUMERICS.md); XLA's bf16 ops round each result,
// and since rounding is monotone, f(round(x op y)) = round(f(x op y)) for these functions with
// bf16 bounds: the fused step gives the bits of one step per instruction. bf16 exponential,
// rsqrt, tanh, logistic and log are one VECTOR with its transcendental `math` (docs/NUMERICS.md
// gives their accuracy); sqrt is 1 / rsqrt and divide a · (1 / b), two VECTORs each (the
// intermediate rounded to bf16), except a / sqrt(b), which is a · rsqrt(b)
// (VectorGroup::stores_rsqrt). f32 programs keep other f32 ops on the host: the vector unit's
// element type is bf16: they run here at the MXU's DEFAULT precision only on an inference path
// (default_precision.cpp), and residual adds (IsResidualAdd).
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "arch/numerics/bf16.hpp"
#include "toolchain/codegen/kernels.hpp"
#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::Instruction;
using hlo::Opcode;

std::optional<isa::VecOp> VectorOpOf(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: return isa::VecOp::kAdd;
    case Opcode::kSubtract: return isa::VecOp::kSub;
    case Opcode::kMultiply: return isa::VecOp::kMul;
    case Opcode::kMaximum: return isa::VecOp::kMax;
    case Opcode::kMinimum: return isa::VecOp::kMin;
    default: return std::nullopt;
  }
}

// The VECTOR transcendental that computes a unary instruction by itself.
std::optional<isa::VecMath> UnaryMathOf(Opcode opcode) {
  switch (opcode) {
    case Opcode::kExp: return isa::VecMath::kExp;
    case Opcode::kRsqrt: return isa::VecMath::kRsqrt;
    case Opcode::kTanh: return isa::VecMath::kTanh;
    case Opcode::kLogistic: return isa::VecMath::kSigmoid;
    case Opcode::kLog: return isa::VecMath::kLog;
    default: return std::nullopt;
  }
}

bool IsBf16(const Instruction& i) { return i.shape.type == hlo::ElementType::kBf16 && i.shape.Elements() > 0; }

std::uint16_t Bf16Bits(double v) {
  return numerics::F32ToBf16(std::bit_cast<std::uint32_t>(static_cast<float>(v)));
}

// Data movement whose every result element is one element of its single operand: a value and
// its copies hold the same numbers (1 / x of a copy is the copy of 1 / x).
bool CopiesElements(const Instruction& i) {
  switch (i.opcode) {
    case Opcode::kBitcast:
    case Opcode::kBroadcast:
    case Opcode::kCopy:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
      return i.operands.size() == 1 && i.shape.type == i.operands[0]->shape.type;
    default:
      return false;
  }
}

// Every use of `value`, through element copies, is the divisor (only) of a divide the vector
// unit computes, and neither `value` nor a copy of it is the root.
bool FeedsOnlyDivisors(const Instruction& value, const Users& users, const Instruction* root, const Config& config,
                       const DefaultPrecisionOps& f32_ops, int depth) {
  constexpr int kMaxDepth = 16;  // a row result is broadcast back in a few reshapes
  const auto it = users.find(&value);
  if (&value == root || depth > kMaxDepth || it == users.end() || it->second.empty()) return false;
  for (const Instruction* user : it->second) {
    if (CopiesElements(*user)) {
      if (!FeedsOnlyDivisors(*user, users, root, config, f32_ops, depth + 1)) return false;
    } else if (user->opcode != Opcode::kDivide || user->operands.size() != 2 || user->operands[0] == &value ||
               user->operands[1] != &value || !RunsOnVectorUnit(*user, config, f32_ops)) {
      return false;
    }
  }
  return true;
}

// `sqrt` is a sqrt the vector unit computes whose every use is a divisor (FeedsOnlyDivisors).
bool SqrtFeedsOnlyDivisors(const Instruction& sqrt, const Users& users, const Instruction* root, const Config& config,
                           const DefaultPrecisionOps& f32_ops) {
  return sqrt.opcode == Opcode::kSqrt && RunsOnVectorUnit(sqrt, config, f32_ops) &&
         FeedsOnlyDivisors(sqrt, users, root, config, f32_ops, 0);
}

}  // namespace

const Instruction* DivisorRsqrt(const Instruction& divide, const Users& users, const Instruction* root,
                                const Config& config, const DefaultPrecisionOps& f32_ops) {
  if (divide.opcode != Opcode::kDivide || divide.operands.size() != 2) return nullptr;
  const Instruction* source = divide.operands[1];
  while (CopiesElements(*source)) source = source->operands[0];
  return SqrtFeedsOnlyDivisors(*source, users, root, config, f32_ops) ? source : nullptr;
}

std::optional<std::pair<double, double>> ClampBounds(const Instruction& user, const Instruction& value) {
  if (user.opcode == Opcode::kMaximum || user.opcode == Opcode::kMinimum) {
    if (user.operands.size() != 2 || user.operands[0] == user.operands[1]) return std::nullopt;
    const Instruction* other = user.operands[0] == &value ? user.operands[1] : user.operands[0];
    if (user.operands[0] != &value && user.operands[1] != &value) return std::nullopt;
    const std::optional<double> bound = UniformConstant(*other);
    if (!bound) return std::nullopt;
    return user.opcode == Opcode::kMaximum ? std::pair{*bound, double(INFINITY)} : std::pair{-double(INFINITY), *bound};
  }
  if (user.opcode == Opcode::kClamp && user.operands.size() == 3 && user.operands[1] == &value) {
    const std::optional<double> lo = UniformConstant(*user.operands[0]), hi = UniformConstant(*user.operands[2]);
    if (lo && hi) return std::pair{*lo, *hi};
  }
  return std::nullopt;
}

isa::ActFunc FunctionOf(double lo, double hi) {
  if (lo == 0.0 && hi == INFINITY) return isa::ActFunc::kRelu;
  return lo == 0.0 && hi == 6.0 ? isa::ActFunc::kRelu6 : isa::ActFunc::kClamp;
}

namespace {

// `value` is computed by a dot / convolution the MXU runs, possibly through per-channel adds and multiplies
// (a broadcast operand), clamps with constants and converts, or by a residual add.
bool IsMxuActivation(const Instruction& value, const Config& config, int depth) {
  constexpr int kMaxDepth = 16;  // a drain chain is a handful of instructions
  if (depth > kMaxDepth) return false;
  switch (value.opcode) {
    case Opcode::kDot:
    case Opcode::kConvolution:
      return !MxuRejection(value, config, "");
    case Opcode::kConvert:
      return IsMxuActivation(*value.operands.at(0), config, depth + 1);
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kClamp: {
      if (value.opcode == Opcode::kAdd && IsResidualAdd(value, config)) return true;
      const Instruction* data = nullptr;
      for (const Instruction* operand : value.operands) {
        if (operand->opcode == Opcode::kBroadcast || UniformConstant(*operand)) continue;
        if (data != nullptr) return false;  // two activations: not a per-channel term
        data = operand;
      }
      return data != nullptr && IsMxuActivation(*data, config, depth + 1);
    }
    default:
      return false;
  }
}

}  // namespace

bool IsResidualAdd(const Instruction& instruction, const Config& config) {
  if (config.dtype != DType::kBf16 || instruction.opcode != Opcode::kAdd ||
      instruction.shape.type != hlo::ElementType::kF32 || instruction.shape.Elements() == 0 ||
      instruction.operands.size() != 2) {
    return false;
  }
  for (const Instruction* operand : instruction.operands) {
    if (!operand->shape.SameAs(instruction.shape) || !IsMxuActivation(*operand, config, 0)) return false;
  }
  return true;
}

bool RunsOnVectorUnit(const Instruction& instruction, const Config& config, const DefaultPrecisionOps& f32_ops) {
  const Opcode opcode = instruction.opcode;
  const bool unary = UnaryMathOf(opcode) || opcode == Opcode::kSqrt;
  if (config.dtype != DType::kBf16 || !(IsBf16(instruction) || f32_ops.contains(&instruction)) ||
      !(VectorOpOf(opcode) || unary || opcode == Opcode::kDivide)) {
    return false;
  }
  if (instruction.operands.size() != (unary ? 1u : 2u)) return false;
  for (const Instruction* operand : instruction.operands) {
    if (!operand->shape.SameAs(instruction.shape)) return false;
  }
  return true;
}

std::optional<VectorGroup> PlanVector(const Instruction& i, const Users& users, const Instruction* root,
                                      const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops) {
  // An f32 residual add, and the f32 activation arithmetic of `f32_ops`, run in bf16 only when
  // fusing (--no-fuse keeps f32 programs exact up to the MXU's operand rounding).
  const bool residual = fuse && IsResidualAdd(i, config);
  const bool f32 = fuse && f32_ops.contains(&i);
  if (config.dtype != DType::kBf16 || (!IsBf16(i) && !residual && !f32)) return std::nullopt;
  VectorGroup group;
  group.stores_rsqrt = SqrtFeedsOnlyDivisors(i, users, root, config, f32_ops);
  group.divisor_rsqrt = DivisorRsqrt(i, users, root, config, f32_ops);
  if (!fuse) {  // one step per instruction: a max / min with a broadcast constant is a binary op
    if (!RunsOnVectorUnit(i, config)) return std::nullopt;
    group.op = &i;
    return group;
  }
  double lo = -INFINITY, hi = INFINITY;
  // A max / min / clamp with constants starts an activation of its data operand; any other
  // vector op is the group's operation.
  const Instruction* data = nullptr;
  for (const Instruction* operand : i.operands) {
    if (!UniformConstant(*operand) && ClampBounds(i, *operand)) data = operand;
  }
  if (data != nullptr && data->shape.SameAs(i.shape)) {
    group.input = data;
    const auto [l, h] = *ClampBounds(i, *data);
    lo = l;
    hi = h;
    group.chain.push_back(&i);
  } else if (residual || RunsOnVectorUnit(i, config, f32_ops)) {
    group.op = &i;
  } else if (std::optional<MaskBias> mask = ConstantMaskOf(i)) {
    group.op = &i;
    group.mask = std::move(mask);
  } else {
    return std::nullopt;
  }
  for (const Instruction* current = group.Result(); current != root;) {
    const auto it = users.find(current);
    if (it == users.end() || it->second.size() != 1) break;
    const Instruction* user = it->second.front();
    const auto bounds = ClampBounds(*user, *current);
    if (!bounds || !user->shape.SameAs(current->shape)) break;
    lo = std::max(lo, bounds->first);
    hi = std::min(hi, bounds->second);
    group.chain.push_back(user);
    current = user;
  }
  if (lo > hi) {  // clamp(lo > hi) is the constant hi in HLO: leave the chain to the host
    if (group.op == nullptr) return std::nullopt;
    group.chain.clear();
  }
  if (!group.chain.empty()) {
    group.func = FunctionOf(lo, hi);
    group.lo_bits = Bf16Bits(lo);
    group.hi_bits = Bf16Bits(hi);
  }
  return group;
}

std::vector<const Instruction*> VectorGroup::Reads() const {
  if (op == nullptr) return {input};
  if (mask) return {mask->data};
  return {op->operands.begin(), op->operands.end()};
}

namespace {

// A binary VECTOR op with the group's activation applied to its result.
codegen::ElementwiseParams ElementwiseOf(const VectorGroup& group, isa::VecOp op) {
  codegen::ElementwiseParams params;
  params.op = op;
  params.func = group.func;
  params.lo_bits = group.lo_bits;
  params.hi_bits = group.hi_bits;
  return params;
}

}  // namespace

DeviceStep LowerVector(const VectorGroup& group, const Config& config) {
  const Instruction& result = *group.Result();
  codegen::ProgramBuilder builder(config);
  std::vector<std::uint64_t> dims;
  std::vector<std::int64_t> identity;
  for (std::size_t d = 0; d < result.shape.Rank(); ++d) {
    dims.push_back(static_cast<std::uint64_t>(result.shape.dims[d]));
    identity.push_back(static_cast<std::int64_t>(d));
  }
  if (dims.empty()) dims.push_back(1);  // a scalar is one element
  const auto bf16 = image::DataType::kBf16;
  DeviceStep step;
  const std::string function = group.chain.empty() ? "" : fmt::format(" + {}", hlo::OpcodeName(group.chain.back()->opcode));
  if (group.op != nullptr) {
    std::string name = group.mask ? "add mask bias (select)" : std::string(hlo::OpcodeName(group.op->opcode));
    if (group.stores_rsqrt) name = "sqrt as rsqrt (its uses divide by it)";
    if (group.divisor_rsqrt != nullptr) name = "divide as multiply by rsqrt";
    step.kernel = fmt::format("vector {}{} {}", name, function, result.shape.ToString());
    step.covers.push_back(group.op->name);
  } else if (group.math) {
    step.kernel = fmt::format("vector gelu ({} form) {}", *group.math == isa::VecMath::kGeluErf ? "erf" : "tanh",
                              result.shape.ToString());
  } else {
    step.kernel = fmt::format("vector activation{} {}", function, result.shape.ToString());
  }
  for (const Instruction* i : group.chain) step.covers.push_back(i->name);
  const std::vector<const Instruction*> reads = group.Reads();
  std::vector<codegen::Tensor> inputs;
  for (std::size_t r = 0; r < reads.size(); ++r) {
    inputs.push_back(builder.AddInput(r == 0 ? "a" : "b", bf16, dims));
    step.inputs.push_back({Binding::Kind::kValue, reads[r]->name, identity, bf16, dims});
  }
  const codegen::Tensor y = builder.AddOutput("y", bf16, dims);
  const Opcode opcode = group.op != nullptr ? group.op->opcode : Opcode::kMaximum;
  if (group.math) {
    codegen::Unary(builder, inputs.at(0), y, *group.math, group.func, group.lo_bits, group.hi_bits);
  } else if (group.mask) {
    // x + bias: 0 keeps x, -inf masks it (bf16 0xFF80), a constant of the program.
    std::vector<std::uint8_t> bytes;
    for (bool masked : group.mask->masked) {
      const std::uint16_t bits = masked ? 0xFF80 : 0x0000;
      bytes.push_back(static_cast<std::uint8_t>(bits & 0xFF));
      bytes.push_back(static_cast<std::uint8_t>(bits >> 8));
    }
    const codegen::Tensor bias = builder.AddConstant("mask_bias", bf16, dims, std::move(bytes));
    codegen::Elementwise(builder, inputs.at(0), bias, y, ElementwiseOf(group, isa::VecOp::kAdd));
  } else if (group.op != nullptr && VectorOpOf(opcode)) {
    codegen::Elementwise(builder, inputs.at(0), inputs.at(1), y, ElementwiseOf(group, *VectorOpOf(opcode)));
  } else if (const std::optional<isa::VecMath> math = UnaryMathOf(opcode); group.op != nullptr && math) {
    codegen::Unary(builder, inputs.at(0), y, *math, group.func, group.lo_bits, group.hi_bits);
  } else if (group.stores_rsqrt) {
    codegen::Unary(builder, inputs.at(0), y, isa::VecMath::kRsqrt, group.func, group.lo_bits, group.hi_bits);
  } else if (group.divisor_rsqrt != nullptr) {
    codegen::Elementwise(builder, inputs.at(0), inputs.at(1), y, ElementwiseOf(group, isa::VecOp::kMul));
  } else if (opcode == Opcode::kSqrt) {
    // sqrt(x) = 1 / rsqrt(x) (exact at 0 and inf: rsqrt gives inf and 0): two roundings to bf16.
    const codegen::Tensor r = builder.AddScratch(bf16, dims);
    codegen::Unary(builder, inputs.at(0), r, isa::VecMath::kRsqrt);
    codegen::Unary(builder, r, y, isa::VecMath::kRecip, group.func, group.lo_bits, group.hi_bits);
  } else if (opcode == Opcode::kDivide) {
    // a / b = a * (1 / b): the reciprocal is rounded to bf16 before the multiply.
    const codegen::Tensor r = builder.AddScratch(bf16, dims);
    codegen::Unary(builder, inputs.at(1), r, isa::VecMath::kRecip);
    codegen::Elementwise(builder, inputs.at(0), r, y, ElementwiseOf(group, isa::VecOp::kMul));
  } else {
    codegen::Activation(builder, inputs.at(0), y, group.func, group.lo_bits, group.hi_bits);
  }
  step.output = {Binding::Kind::kValue, result.name, identity, bf16, dims};
  FinishStep(step, builder, config);
  return step;
}

}  // namespace systole::compiler::detail
