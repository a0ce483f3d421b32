// Recognising SGD with momentum and Adam in a training step (optimizer_match.hpp).
#include "toolchain/compiler/optimizer_match.hpp"

#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {

using hlo::Instruction;
using hlo::Opcode;

namespace {

bool IsF32Matrix(const Instruction* i) { return i->shape.IsArray() && i->shape.type == hlo::ElementType::kF32 && i->shape.Rank() == 2; }
bool IsF32Vector(const Instruction* i) { return i->shape.IsArray() && i->shape.type == hlo::ElementType::kF32 && i->shape.Rank() == 1; }
// Convolution weights, [KH, KW, Cin, Cout] in some order.
bool IsF32Kernel(const Instruction* i) { return i->shape.IsArray() && i->shape.type == hlo::ElementType::kF32 && i->shape.Rank() == 4; }

// A state input: a parameter, or (in a loop's body) a get-tuple-element of the tuple parameter.
bool IsStateInput(const Instruction* i) {
  return i->opcode == Opcode::kParameter ||
         (i->opcode == Opcode::kGetTupleElement && i->operands[0]->opcode == Opcode::kParameter);
}

// `i` = op(x, y) with x satisfying `first`: (x, y); either operand order.
template <class Predicate>
std::optional<std::pair<const Instruction*, const Instruction*>> Split(const Instruction* i, Opcode op, Predicate first) {
  if (i->opcode != op || i->operands.size() != 2) return std::nullopt;
  for (std::size_t k = 0; k < 2; ++k) {
    if (first(i->operands[k])) return std::make_pair(i->operands[k], i->operands[1 - k]);
  }
  return std::nullopt;
}

// The gradient g: a dot over the batch (dimension 0 of both operands), or its transpose, shaped
// as the parameter. Sets the update's dot, rows and cols and adds the transpose to the chain.
// A bias's gradient (a sum over the batch, on the host like the rest of its backward pass) and a
// convolution's (a convolution over the batch, which the update does not recompute) are any f32
// value of the parameter's shape: the update step reads it as an input.
bool MatchGradient(const Instruction* gradient, Update& u) {
  if (IsF32Vector(u.parameter) || IsF32Kernel(u.parameter)) {
    if (gradient->shape.type != hlo::ElementType::kF32 || gradient->shape.dims != u.parameter->shape.dims) return false;
    u.host_gradient = gradient;
    return true;
  }
  const bool transposed = gradient->opcode == Opcode::kTranspose && gradient->dimensions == std::vector<std::int64_t>{1, 0};
  const Instruction* dot = transposed ? gradient->operands[0] : gradient;
  const hlo::DotDimensionNumbers& d = dot->dot_dims;
  if (dot->opcode != Opcode::kDot || !d.lhs_batch.empty() || d.lhs_contracting != std::vector<std::int64_t>{0} ||
      d.rhs_contracting != std::vector<std::int64_t>{0} || !IsF32Matrix(dot->operands[0]) ||
      !IsF32Matrix(dot->operands[1]) || gradient->shape.dims != u.parameter->shape.dims) {
    return false;
  }
  if (transposed) u.chain.push_back(gradient);
  u.dot = dot;
  u.rows = transposed ? dot->operands[1] : dot->operands[0];
  u.cols = transposed ? dot->operands[0] : dot->operands[1];
  return true;
}

// A constant, or a broadcast of one, whose elements all equal one value (fusion.cpp's
// UniformConstant): the optimizers' hyperparameters.
const auto kIsSplat = [](const Instruction* i) { return UniformConstant(*i).has_value(); };

// Both optimizers end in p' = p − step, for an f32 matrix (weights), vector (a bias) or rank-4
// array (convolution weights).
bool SubtractsFrom(const Instruction* new_parameter, const Instruction* parameter) {
  return new_parameter->opcode == Opcode::kSubtract && new_parameter->operands[0] == parameter &&
         (IsF32Matrix(parameter) || IsF32Vector(parameter) || IsF32Kernel(parameter));
}

}  // namespace

// p' = p − (m' ·lr), m' = (m·mu) + g.
std::optional<Update> MatchSgd(const Instruction* new_parameter, const Instruction* parameter, const AliasMap& alias_of_output) {
  Update u;
  u.parameter = parameter;
  u.new_parameter = new_parameter;
  if (!SubtractsFrom(new_parameter, parameter)) return std::nullopt;
  const auto step = Split(new_parameter->operands[1], Opcode::kMultiply, [](const Instruction* i) { return !kIsSplat(i); });
  if (!step || !kIsSplat(step->second)) return std::nullopt;
  u.learning_rate = *UniformConstant(*step->second);
  const Instruction* new_momentum = step->first;
  const auto is_decay = [&](const Instruction* i) {
    const auto decay = Split(i, Opcode::kMultiply, IsStateInput);
    const auto alias = alias_of_output.find(new_momentum);
    return decay && kIsSplat(decay->second) && alias != alias_of_output.end() && alias->second == decay->first;
  };
  const auto terms = Split(new_momentum, Opcode::kAdd, is_decay);
  if (!terms) return std::nullopt;
  const auto decay = Split(terms->first, Opcode::kMultiply, IsStateInput);
  u.mu = *UniformConstant(*decay->second);
  u.moments = {decay->first};
  u.new_moments = {new_momentum};
  u.chain = {terms->first, new_momentum, new_parameter->operands[1], new_parameter};
  if (!MatchGradient(terms->second, u)) return std::nullopt;
  return u;
}

// optax's Adam: p' = p − (s·m') / (sqrt(v') + eps), m' = m·b1 + g·(1−b1), v' = v·b2 + (g·(1−b2))·g.
std::optional<Update> MatchAdam(const Instruction* new_parameter, const Instruction* parameter, const AliasMap& alias_of_output) {
  Update u;
  u.kind = Update::Kind::kAdam;
  u.parameter = parameter;
  u.new_parameter = new_parameter;
  if (!SubtractsFrom(new_parameter, parameter)) return std::nullopt;
  const Instruction* quotient = new_parameter->operands[1];
  if (quotient->opcode != Opcode::kDivide) return std::nullopt;
  const auto replaces_a_parameter = [&](const Instruction* i) {
    const auto alias = alias_of_output.find(i);
    return alias != alias_of_output.end() && alias->second != parameter;
  };
  // s·m': s a broadcast scalar (what the host computes from the count), m' a new moment.
  const auto scaled = Split(quotient->operands[0], Opcode::kMultiply, replaces_a_parameter);
  if (!scaled || scaled->second->opcode != Opcode::kBroadcast || scaled->second->operands.size() != 1 ||
      scaled->second->operands[0]->shape.Rank() != 0 || scaled->second->operands[0]->shape.type != hlo::ElementType::kF32) {
    return std::nullopt;
  }
  u.step_size = scaled->second->operands[0];
  const auto denominator = Split(quotient->operands[1], Opcode::kAdd, [](const Instruction* i) { return i->opcode == Opcode::kSqrt; });
  if (!denominator || !kIsSplat(denominator->second)) return std::nullopt;
  u.adam.epsilon = static_cast<float>(*UniformConstant(*denominator->second));
  const Instruction* new_first = scaled->first;
  const Instruction* new_second = denominator->first->operands[0];
  if (!replaces_a_parameter(new_second)) return std::nullopt;
  // x·c with x satisfying `what`: (x, c).
  const auto times_splat = [](const Instruction* i, auto what) -> std::optional<std::pair<const Instruction*, float>> {
    const auto split = Split(i, Opcode::kMultiply, [&](const Instruction* x) { return !kIsSplat(x) && what(x); });
    if (!split || !kIsSplat(split->second)) return std::nullopt;
    return std::make_pair(split->first, static_cast<float>(*UniformConstant(*split->second)));
  };
  const auto moment_of = [&](const Instruction* new_moment) { return alias_of_output.at(new_moment); };
  const auto is_parameter = IsStateInput;
  const auto anything = [](const Instruction*) { return true; };
  // m' = m·b1 + g·(1−b1)
  const auto first_terms = Split(new_first, Opcode::kAdd, [&](const Instruction* i) {
    const auto t = times_splat(i, is_parameter);
    return t && t->first == moment_of(new_first);
  });
  if (!first_terms) return std::nullopt;
  const auto decay1 = times_splat(first_terms->first, is_parameter);
  const auto grad1 = times_splat(first_terms->second, anything);
  if (!grad1) return std::nullopt;
  const Instruction* gradient = grad1->first;
  // v' = v·b2 + (g·(1−b2))·g
  const auto second_terms = Split(new_second, Opcode::kAdd, [&](const Instruction* i) {
    const auto t = times_splat(i, is_parameter);
    return t && t->first == moment_of(new_second);
  });
  if (!second_terms) return std::nullopt;
  const auto decay2 = times_splat(second_terms->first, is_parameter);
  const Instruction* square = second_terms->second;
  if (square->opcode != Opcode::kMultiply || square->operands[1] != gradient) return std::nullopt;
  const auto grad2 = times_splat(square->operands[0], [&](const Instruction* x) { return x == gradient; });
  if (!grad2) return std::nullopt;
  u.adam.b1 = decay1->second;
  u.adam.one_minus_b1 = grad1->second;
  u.adam.b2 = decay2->second;
  u.adam.one_minus_b2 = grad2->second;
  u.moments = {decay1->first, decay2->first};
  u.new_moments = {new_first, new_second};
  u.chain = {first_terms->first, first_terms->second, new_first, second_terms->first, square->operands[0], square,
             new_second, denominator->first, quotient->operands[1], scaled->second, quotient->operands[0], quotient,
             new_parameter};
  if (!MatchGradient(gradient, u)) return std::nullopt;
  return u;
}

}  // namespace systole::compiler::detail
