#include "toolchain/hlo/shape_inference.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "toolchain/hlo/shape_inference_rules.hpp"

namespace systole::hlo::detail {

Shape Inference::Infer() const {
  const Opcode op = i_.opcode;
  switch (op) {
    case Opcode::kParameter:
      OperandCount(0);
      return i_.shape;
    case Opcode::kConstant:
      OperandCount(0);
      Require(i_.literal.has_value(), "has no literal");
      return i_.shape;
    case Opcode::kIota:
      OperandCount(0);
      Require(i_.shape.IsArray() && i_.shape.Rank() > 0, "needs an array shape of rank >= 1");
      Dimension(i_.iota_dimension, i_.shape.Rank(), "iota_dimension");
      return i_.shape;
    case Opcode::kBitcast:
    case Opcode::kReshape: {
      OperandCount(1);
      const Shape& operand = ArrayOperand(0);
      Require(i_.shape.IsArray(), "needs an array result");
      Require(operand.Elements() == i_.shape.Elements(),
              fmt::format("cannot reshape {} ({} elements) to {} ({} elements)", operand.ToString(),
                          operand.Elements(), i_.shape.ToString(), i_.shape.Elements()));
      return Shape(operand.type, i_.shape.dims);
    }
    case Opcode::kBroadcast: return Broadcast();
    case Opcode::kConcatenate: return Concatenate();
    case Opcode::kDynamicSlice: return DynamicSlice();
    case Opcode::kDynamicUpdateSlice: return DynamicUpdateSlice();
    case Opcode::kGather: return Gather();
    case Opcode::kScatter: return Scatter();
    case Opcode::kSort: return Sort();
    case Opcode::kGetTupleElement: {
      OperandCount(1);
      const Shape& tuple = Operand(0);
      Require(tuple.IsTuple(), fmt::format("operand must be a tuple, found {}", tuple.ToString()));
      Require(i_.tuple_index >= 0 && static_cast<std::size_t>(i_.tuple_index) < tuple.tuple.size(),
              fmt::format("index {} is out of range for {}", i_.tuple_index, tuple.ToString()));
      return tuple.tuple[static_cast<std::size_t>(i_.tuple_index)];
    }
    case Opcode::kPad: return Pad();
    case Opcode::kReverse: {
      OperandCount(1);
      Distinct(i_.dimensions, ArrayOperand(0).Rank(), "dimension");
      return Operand(0);
    }
    case Opcode::kSlice: return Slice();
    case Opcode::kTranspose: return Transpose();
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* operand : i_.operands) elements.push_back(operand->shape);
      return Shape::Tuple(std::move(elements));
    }
    case Opcode::kCall:
    case Opcode::kFusion: return Call();
    case Opcode::kWhile: return While();
    case Opcode::kConditional: return Conditional();
    case Opcode::kConvolution: return Convolution();
    case Opcode::kDot: return Dot();
    case Opcode::kReduce: return Reduce();
    case Opcode::kReduceWindow: return ReduceWindow();
    case Opcode::kSelectAndScatter: return SelectAndScatter();
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: return BatchNorm();
    default: return Elementwise();
  }
}

Shape Inference::Elementwise() const {
  const Opcode op = i_.opcode;
  if (IsElementwiseUnary(op)) {
    OperandCount(1);
    const Shape& operand = ArrayOperand(0);
    if (op == Opcode::kConvert) {
      Require(i_.shape.IsArray(), "needs an array result");
      return Shape(i_.shape.type, operand.dims);
    }
    if (op == Opcode::kNot) {
      Require(operand.type == ElementType::kPred || IsInteger(operand.type), "needs a pred or integer operand");
    } else if (op != Opcode::kAbs && op != Opcode::kNegate && op != Opcode::kSign && op != Opcode::kCopy) {
      Require(IsFloating(operand.type),
              fmt::format("needs a floating-point operand, found {}", operand.ToString()));
    }
    if (op == Opcode::kIsFinite) return Shape(ElementType::kPred, operand.dims);
    if (op == Opcode::kReducePrecision) {
      Require(i_.exponent_bits >= 1 && i_.exponent_bits <= 11 && i_.mantissa_bits >= 0 && i_.mantissa_bits <= 52,
              "exponent_bits must be 1..11 and mantissa_bits 0..52");
    }
    return Shape(operand.type, operand.dims);
  }
  if (IsElementwiseBinary(op)) {
    OperandCount(2);
    const Shape& lhs = ArrayOperand(0);
    const Shape& rhs = ArrayOperand(1);
    Require(lhs.SameAs(rhs), fmt::format("operands differ: {} and {}", lhs.ToString(), rhs.ToString()));
    if (op == Opcode::kAnd || op == Opcode::kOr || op == Opcode::kXor) {
      Require(lhs.type == ElementType::kPred || IsInteger(lhs.type), "needs pred or integer operands");
    }
    if (op == Opcode::kAtan2) Require(IsFloating(lhs.type), "needs floating-point operands");
    return Shape(op == Opcode::kCompare ? ElementType::kPred : lhs.type, lhs.dims);
  }
  if (op == Opcode::kSelect) {
    OperandCount(3);
    const Shape& predicate = ArrayOperand(0);
    const Shape& on_true = ArrayOperand(1);
    const Shape& on_false = ArrayOperand(2);
    Require(predicate.type == ElementType::kPred, fmt::format("predicate must be pred, found {}", predicate.ToString()));
    Require(on_true.SameAs(on_false), fmt::format("branches differ: {} and {}", on_true.ToString(), on_false.ToString()));
    Require(predicate.dims == on_true.dims || predicate.dims.empty(),
            fmt::format("predicate {} does not match {}", predicate.ToString(), on_true.ToString()));
    return on_true;
  }
  if (op == Opcode::kClamp) {
    OperandCount(3);
    const Shape& low = ArrayOperand(0);
    const Shape& x = ArrayOperand(1);
    const Shape& high = ArrayOperand(2);
    for (const Shape* bound : {&low, &high}) {
      Require(bound->type == x.type && (bound->dims == x.dims || bound->dims.empty()),
              fmt::format("bound {} does not match operand {}", bound->ToString(), x.ToString()));
    }
    return x;
  }
  Fail("has no shape rule");
}

Shape Inference::Broadcast() const {
  OperandCount(1);
  const Shape& operand = ArrayOperand(0);
  Require(i_.shape.IsArray(), "needs an array result");
  Require(i_.dimensions.size() == operand.Rank(),
          fmt::format("dimensions={{{}}} must list one output dimension per operand dimension ({})",
                      fmt::join(i_.dimensions, ","), operand.Rank()));
  Distinct(i_.dimensions, i_.shape.Rank(), "dimension");
  for (std::size_t d = 0; d < operand.Rank(); ++d) {
    const auto out = static_cast<std::size_t>(i_.dimensions[d]);
    Require(operand.dims[d] == i_.shape.dims[out],
            fmt::format("operand dimension {} (size {}) cannot broadcast to output dimension {} (size {})", d,
                        operand.dims[d], out, i_.shape.dims[out]));
  }
  return Shape(operand.type, i_.shape.dims);
}

Shape Inference::Concatenate() const {
  Require(!i_.operands.empty(), "needs at least one operand");
  Require(i_.dimensions.size() == 1, "needs dimensions={d}");
  Shape result = ArrayOperand(0);
  Dimension(i_.dimensions[0], result.Rank(), "dimension");
  const auto axis = static_cast<std::size_t>(i_.dimensions[0]);
  for (std::size_t k = 1; k < i_.operands.size(); ++k) {
    const Shape& operand = ArrayOperand(k);
    bool compatible = operand.type == result.type && operand.Rank() == result.Rank();
    for (std::size_t d = 0; compatible && d < operand.Rank(); ++d) {
      compatible = d == axis || operand.dims[d] == result.dims[d];
    }
    Require(compatible, fmt::format("operand {} {} does not match {}", k, operand.ToString(), Operand(0).ToString()));
    result.dims[axis] += operand.dims[axis];
  }
  result.minor_to_major.clear();
  return result;
}

Shape Inference::DynamicSlice() const {
  Require(!i_.operands.empty(), "needs an operand");
  const Shape& operand = ArrayOperand(0);
  OperandCount(1 + operand.Rank());
  for (std::size_t k = 1; k < i_.operands.size(); ++k) {
    const Shape& index = ArrayOperand(k);
    Require(index.dims.empty() && IsInteger(index.type),
            fmt::format("start index {} must be an integer scalar, found {}", k - 1, index.ToString()));
  }
  Require(i_.dynamic_slice_sizes.size() == operand.Rank(), "dynamic_slice_sizes must have one size per dimension");
  for (std::size_t d = 0; d < operand.Rank(); ++d) {
    Require(i_.dynamic_slice_sizes[d] >= 0 && i_.dynamic_slice_sizes[d] <= operand.dims[d],
            fmt::format("slice size {} exceeds dimension {} of size {}", i_.dynamic_slice_sizes[d], d, operand.dims[d]));
  }
  return Shape(operand.type, i_.dynamic_slice_sizes);
}

Shape Inference::Pad() const {
  OperandCount(2);
  const Shape& operand = ArrayOperand(0);
  const Shape& value = ArrayOperand(1);
  Require(value.dims.empty() && value.type == operand.type,
          fmt::format("padding value must be a {} scalar, found {}", ElementTypeName(operand.type), value.ToString()));
  Require(i_.padding.size() == operand.Rank(),
          fmt::format("padding has {} dimension(s) but the operand has rank {}", i_.padding.size(), operand.Rank()));
  Shape result(operand.type, {});
  for (std::size_t d = 0; d < operand.Rank(); ++d) {
    const PadDim& pad = i_.padding[d];
    Require(pad.interior >= 0, "interior padding must not be negative");
    const std::int64_t size =
        pad.low + pad.high + operand.dims[d] + std::max<std::int64_t>(operand.dims[d] - 1, 0) * pad.interior;
    Require(size >= 0, fmt::format("dimension {} would have negative size {}", d, size));
    result.dims.push_back(size);
  }
  return result;
}

Shape Inference::Slice() const {
  OperandCount(1);
  const Shape& operand = ArrayOperand(0);
  Require(i_.slice.size() == operand.Rank(),
          fmt::format("slice has {} dimension(s) but the operand has rank {}", i_.slice.size(), operand.Rank()));
  Shape result(operand.type, {});
  for (std::size_t d = 0; d < operand.Rank(); ++d) {
    const SliceDim& s = i_.slice[d];
    Require(s.start >= 0 && s.start <= s.limit && s.limit <= operand.dims[d] && s.stride >= 1,
            fmt::format("slice [{}:{}:{}] is invalid for dimension {} of size {}", s.start, s.limit, s.stride, d,
                        operand.dims[d]));
    result.dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  }
  return result;
}

Shape Inference::Transpose() const {
  OperandCount(1);
  const Shape& operand = ArrayOperand(0);
  Require(i_.dimensions.size() == operand.Rank(), "dimensions must be a permutation of the operand's dimensions");
  Distinct(i_.dimensions, operand.Rank(), "dimension");
  Shape result(operand.type, {});
  for (std::int64_t d : i_.dimensions) result.dims.push_back(operand.dims[static_cast<std::size_t>(d)]);
  return result;
}

Shape Inference::Call() const {
  Require(i_.called.size() == 1, i_.opcode == Opcode::kFusion ? "needs exactly one computation (calls=)"
                                                               : "needs exactly one computation (to_apply=)");
  const Computation& callee = *i_.called[0];
  const std::vector<Instruction*> parameters = callee.Parameters();
  Require(parameters.size() == i_.operands.size(),
          fmt::format("passes {} operand(s) to '{}', which takes {}", i_.operands.size(), callee.name, parameters.size()));
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    Require(parameters[k] != nullptr && parameters[k]->shape.SameAs(Operand(k)),
            fmt::format("operand {} is {} but parameter {} of '{}' is {}", k, Operand(k).ToString(), k, callee.name,
                        parameters[k] != nullptr ? parameters[k]->shape.ToString() : "missing"));
  }
  return callee.root->shape;
}

const Shape& Inference::CheckUnaryCallee(const Computation& callee, const Shape& shape, const std::string& role) const {
  const std::vector<Instruction*> parameters = callee.Parameters();
  Require(parameters.size() == 1 && parameters[0] != nullptr,
          fmt::format("{} '{}' must take one parameter, takes {}", role, callee.name, parameters.size()));
  Require(parameters[0]->shape.SameAs(shape), fmt::format("{} '{}' takes {} but is given {}", role, callee.name,
                                                          parameters[0]->shape.ToString(), shape.ToString()));
  return callee.root->shape;
}

// while(init), condition=C, body=B: B maps the state to a state of the same shape; C maps it to
// pred[]. The result is the final state.
Shape Inference::While() const {
  OperandCount(1);
  Require(i_.called.size() == 2, "needs a condition= and a body= computation");
  const Shape& state = Operand(0);
  const Shape& keep_going = CheckUnaryCallee(*i_.called[0], state, "condition");
  Require(keep_going.IsArray() && keep_going.type == ElementType::kPred && keep_going.dims.empty(),
          fmt::format("condition '{}' must return pred[], returns {}", i_.called[0]->name, keep_going.ToString()));
  const Shape& next = CheckUnaryCallee(*i_.called[1], state, "body");
  Require(next.SameAs(state), fmt::format("body '{}' returns {} but the loop state is {}", i_.called[1]->name,
                                          next.ToString(), state.ToString()));
  return state;
}

// conditional(pred p, t, f), true_computation=T, false_computation=F; or conditional(s32 i,
// b0, …), branch_computations={B0, …}: branch k takes operand k + 1; every branch returns the
// same shape.
Shape Inference::Conditional() const {
  Require(!i_.operands.empty(), "needs a predicate or branch index operand");
  const Shape& selector = Operand(0);
  const std::size_t branches = i_.called.size();
  Require(selector.IsArray() && selector.dims.empty() &&
              (selector.type == ElementType::kPred || selector.type == ElementType::kS32),
          fmt::format("operand 0 must be pred[] or s32[], found {}", selector.ToString()));
  Require(selector.type != ElementType::kPred || branches == 2,
          fmt::format("a pred[] conditional needs true_computation= and false_computation=, has {} computation(s)",
                      branches));
  Require(branches >= 1, "needs at least one branch computation");
  OperandCount(branches + 1);
  const Shape* result = nullptr;
  for (std::size_t k = 0; k < branches; ++k) {
    const Shape& out = CheckUnaryCallee(*i_.called[k], Operand(k + 1), fmt::format("branch {}", k));
    Require(result == nullptr || out.SameAs(*result),
            fmt::format("branch {} returns {} but branch 0 returns {}", k, out.ToString(), result ? result->ToString() : ""));
    result = &out;
  }
  return *result;
}

std::int64_t Inference::WindowedSize(std::int64_t input, const WindowDim& w) const {
  Require(w.size >= 0 && w.stride >= 1 && w.lhs_dilation >= 1 && w.rhs_dilation >= 1,
          "window sizes must be >= 0 and strides and dilations >= 1");
  const std::int64_t dilated_input = (input == 0 ? 0 : (input - 1) * w.lhs_dilation + 1) + w.pad_low + w.pad_high;
  const std::int64_t dilated_window = w.size == 0 ? 0 : (w.size - 1) * w.rhs_dilation + 1;
  Require(dilated_input >= 0, "padding makes a dimension negative");
  if (dilated_input < dilated_window) return 0;
  return (dilated_input - dilated_window) / w.stride + 1;
}

Shape Inference::Convolution() const {
  OperandCount(2);
  const Shape& input = ArrayOperand(0);
  const Shape& kernel = ArrayOperand(1);
  const ConvDimensionNumbers& dn = i_.conv_dims;
  const std::size_t spatial = dn.input_spatial.size();
  Require(input.Rank() == spatial + 2 && kernel.Rank() == spatial + 2 && i_.shape.Rank() == spatial + 2,
          fmt::format("dim_labels describe rank {} but input is {}, kernel {}, output {}", spatial + 2,
                      input.ToString(), kernel.ToString(), i_.shape.ToString()));
  Require(i_.window.size() == spatial || (spatial == 0 && i_.window.empty()),
          fmt::format("window has {} dimension(s) but there are {} spatial dimensions", i_.window.size(), spatial));
  const std::int64_t groups = i_.feature_group_count;
  const std::int64_t batch_groups = i_.batch_group_count;
  Require(groups >= 1 && batch_groups >= 1, "group counts must be >= 1");
  const auto at = [](const Shape& s, std::int64_t d) { return s.dims[static_cast<std::size_t>(d)]; };
  const std::int64_t input_features = at(input, dn.input_feature);
  const std::int64_t kernel_inputs = at(kernel, dn.kernel_input_feature);
  const std::int64_t kernel_outputs = at(kernel, dn.kernel_output_feature);
  Require(input_features % groups == 0 && kernel_inputs * groups == input_features,
          fmt::format("input features ({}) must equal kernel input features ({}) x feature_group_count ({})",
                      input_features, kernel_inputs, groups));
  Require(kernel_outputs % groups == 0 && kernel_outputs % batch_groups == 0,
          fmt::format("kernel output features ({}) must be divisible by the group counts", kernel_outputs));
  Require(at(input, dn.input_batch) % batch_groups == 0, "input batch must be divisible by batch_group_count");
  std::vector<std::int64_t> dims(spatial + 2, 0);
  dims[static_cast<std::size_t>(dn.output_batch)] = at(input, dn.input_batch) / batch_groups;
  dims[static_cast<std::size_t>(dn.output_feature)] = kernel_outputs;
  for (std::size_t s = 0; s < spatial; ++s) {
    const WindowDim& w = i_.window[s];
    Require(w.size == at(kernel, dn.kernel_spatial[s]),
            fmt::format("window size {} of spatial dimension {} differs from the kernel's {}", w.size, s,
                        at(kernel, dn.kernel_spatial[s])));
    dims[static_cast<std::size_t>(dn.output_spatial[s])] = WindowedSize(at(input, dn.input_spatial[s]), w);
  }
  return Shape(i_.shape.type, dims);
}

Shape Inference::Dot() const {
  OperandCount(2);
  const Shape& lhs = ArrayOperand(0);
  const Shape& rhs = ArrayOperand(1);
  const DotDimensionNumbers& dn = i_.dot_dims;
  Require(dn.lhs_batch.size() == dn.rhs_batch.size() && dn.lhs_contracting.size() == dn.rhs_contracting.size(),
          "lhs and rhs need the same number of batch and of contracting dimensions");
  std::vector<std::int64_t> lhs_used = dn.lhs_batch;
  lhs_used.insert(lhs_used.end(), dn.lhs_contracting.begin(), dn.lhs_contracting.end());
  std::vector<std::int64_t> rhs_used = dn.rhs_batch;
  rhs_used.insert(rhs_used.end(), dn.rhs_contracting.begin(), dn.rhs_contracting.end());
  Distinct(lhs_used, lhs.Rank(), "lhs dimension");
  Distinct(rhs_used, rhs.Rank(), "rhs dimension");
  const auto at = [](const Shape& s, std::int64_t d) { return s.dims[static_cast<std::size_t>(d)]; };
  std::vector<std::int64_t> dims;
  for (std::size_t k = 0; k < dn.lhs_batch.size(); ++k) {
    Require(at(lhs, dn.lhs_batch[k]) == at(rhs, dn.rhs_batch[k]),
            fmt::format("batch dimension sizes differ: {} and {}", at(lhs, dn.lhs_batch[k]), at(rhs, dn.rhs_batch[k])));
    dims.push_back(at(lhs, dn.lhs_batch[k]));
  }
  for (std::size_t k = 0; k < dn.lhs_contracting.size(); ++k) {
    Require(at(lhs, dn.lhs_contracting[k]) == at(rhs, dn.rhs_contracting[k]),
            fmt::format("contracting dimension sizes differ: {} ({}) and {} ({})", at(lhs, dn.lhs_contracting[k]),
                        lhs.ToString(), at(rhs, dn.rhs_contracting[k]), rhs.ToString()));
  }
  for (std::size_t d = 0; d < lhs.Rank(); ++d) {
    if (std::find(lhs_used.begin(), lhs_used.end(), static_cast<std::int64_t>(d)) == lhs_used.end()) {
      dims.push_back(lhs.dims[d]);
    }
  }
  for (std::size_t d = 0; d < rhs.Rank(); ++d) {
    if (std::find(rhs_used.begin(), rhs_used.end(), static_cast<std::int64_t>(d)) == rhs_used.end()) {
      dims.push_back(rhs.dims[d]);
    }
  }
  return Shape(i_.shape.IsArray() ? i_.shape.type : lhs.type, dims);
}

void Inference::CheckReducer(const Computation& reducer, const std::vector<ElementType>& types) const {
  const std::vector<Instruction*> parameters = reducer.Parameters();
  const std::size_t n = types.size();
  Require(parameters.size() == 2 * n,
          fmt::format("reducer '{}' must take {} scalar parameters, takes {}", reducer.name, 2 * n, parameters.size()));
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    Require(parameters[k] != nullptr && parameters[k]->shape.IsArray() && parameters[k]->shape.dims.empty(),
            fmt::format("parameter {} of reducer '{}' must be a scalar", k, reducer.name));
  }
  const Shape& root = reducer.root->shape;
  if (n == 1) {
    Require(root.IsArray() && root.dims.empty(), fmt::format("reducer '{}' must return a scalar", reducer.name));
  } else {
    Require(root.IsTuple() && root.tuple.size() == n,
            fmt::format("reducer '{}' must return a tuple of {} scalars", reducer.name, n));
  }
}

Shape Inference::Reduce() const {
  Require(!i_.operands.empty() && i_.operands.size() % 2 == 0, "needs N operands followed by N initial values");
  Require(i_.called.size() == 1, "needs to_apply=");
  const std::size_t n = i_.operands.size() / 2;
  const Shape& first = ArrayOperand(0);
  std::vector<ElementType> types;
  for (std::size_t k = 0; k < n; ++k) {
    const Shape& operand = ArrayOperand(k);
    const Shape& init = ArrayOperand(n + k);
    Require(operand.dims == first.dims, "reduced operands must have the same dimensions");
    Require(init.dims.empty(), fmt::format("initial value {} must be a scalar, found {}", k, init.ToString()));
    types.push_back(init.type);
  }
  Distinct(i_.dimensions, first.Rank(), "reduced dimension");
  CheckReducer(*i_.called[0], types);
  std::vector<std::int64_t> dims;
  for (std::size_t d = 0; d < first.Rank(); ++d) {
    if (std::find(i_.dimensions.begin(), i_.dimensions.end(), static_cast<std::int64_t>(d)) == i_.dimensions.end()) {
      dims.push_back(first.dims[d]);
    }
  }
  if (n == 1) return Shape(i_.called[0]->root->shape.type, dims);
  std::vector<Shape> elements;
  for (std::size_t k = 0; k < n; ++k) elements.emplace_back(i_.called[0]->root->shape.tuple[k].type, dims);
  return Shape::Tuple(std::move(elements));
}

Shape Inference::ReduceWindow() const {
  Require(i_.operands.size() == 2, "takes one operand and one initial value (variadic reduce-window is not supported)");
  Require(i_.called.size() == 1, "needs to_apply=");
  const Shape& operand = ArrayOperand(0);
  const Shape& init = ArrayOperand(1);
  Require(init.dims.empty(), fmt::format("initial value must be a scalar, found {}", init.ToString()));
  Require(i_.window.size() == operand.Rank(),
          fmt::format("window has {} dimension(s) but the operand has rank {}", i_.window.size(), operand.Rank()));
  CheckReducer(*i_.called[0], {init.type});
  std::vector<std::int64_t> dims;
  for (std::size_t d = 0; d < operand.Rank(); ++d) dims.push_back(WindowedSize(operand.dims[d], i_.window[d]));
  return Shape(i_.called[0]->root->shape.type, dims);
}

}  // namespace systole::hlo::detail

namespace systole::hlo {

Shape InferShape(const Instruction& instruction) { return detail::Inference(instruction).Infer(); }

}  // namespace systole::hlo
