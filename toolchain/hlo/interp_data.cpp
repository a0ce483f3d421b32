// Data-movement kernels. Most are one strided gather: broadcast, transpose, slice, reverse and
// dynamic-slice all read the operand at an affine function of the output index.
#include <algorithm>

#include "toolchain/hlo/dims.hpp"
#include "toolchain/hlo/interp_kernels.hpp"

namespace systole::hlo::detail {

namespace {

Literal Broadcast(const Instruction& instruction, const Literal& operand) {
  const std::vector<std::int64_t> operand_strides = RowMajorStrides(operand.shape.dims);
  std::vector<std::int64_t> strides(instruction.shape.Rank(), 0);
  for (std::size_t d = 0; d < instruction.dimensions.size(); ++d) {
    strides[U(instruction.dimensions[d])] = operand_strides[d];
  }
  Literal result;
  result.shape = instruction.shape;
  result.values = StridedGather(operand.values, 0, instruction.shape.dims, strides);
  return result;
}

Literal Slice(const Instruction& instruction, const Literal& operand) {
  const std::vector<std::int64_t> operand_strides = RowMajorStrides(operand.shape.dims);
  std::int64_t base = 0;
  std::vector<std::int64_t> strides;
  for (std::size_t d = 0; d < instruction.slice.size(); ++d) {
    base += instruction.slice[d].start * operand_strides[d];
    strides.push_back(instruction.slice[d].stride * operand_strides[d]);
  }
  Literal result;
  result.shape = instruction.shape;
  result.values = StridedGather(operand.values, base, instruction.shape.dims, strides);
  return result;
}

Literal DynamicSlice(const Instruction& instruction, const Operands& operands) {
  const Literal& operand = *operands[0];
  const std::vector<std::int64_t> operand_strides = RowMajorStrides(operand.shape.dims);
  std::int64_t base = 0;
  for (std::size_t d = 0; d < operand.shape.Rank(); ++d) {
    // XLA clamps start indices so that the slice stays inside the operand.
    const double requested = operands[d + 1]->values[0];
    const auto limit = static_cast<double>(operand.shape.dims[d] - instruction.dynamic_slice_sizes[d]);
    const auto start = static_cast<std::int64_t>(std::clamp(requested, 0.0, limit));
    base += start * operand_strides[d];
  }
  Literal result;
  result.shape = instruction.shape;
  result.values = StridedGather(operand.values, base, instruction.shape.dims, operand_strides);
  return result;
}

Literal Reverse(const Instruction& instruction, const Literal& operand) {
  std::vector<std::int64_t> strides = RowMajorStrides(operand.shape.dims);
  std::int64_t base = 0;
  for (std::int64_t d : instruction.dimensions) {
    base += (operand.shape.dims[U(d)] - 1) * strides[U(d)];
    strides[U(d)] = -strides[U(d)];
  }
  Literal result;
  result.shape = instruction.shape;
  if (operand.shape.Elements() > 0) result.values = StridedGather(operand.values, base, operand.shape.dims, strides);
  return result;
}

Literal Pad(const Instruction& instruction, const Literal& operand, double pad_value) {
  Literal result(instruction.shape);
  std::fill(result.values.begin(), result.values.end(), pad_value);
  const std::vector<std::int64_t>& in_dims = operand.shape.dims;
  const std::vector<std::int64_t>& out_dims = instruction.shape.dims;
  const std::vector<std::int64_t> out_strides = RowMajorStrides(out_dims);
  const std::size_t rank = in_dims.size();
  if (operand.values.empty()) return result;
  std::vector<std::int64_t> index(rank, 0);
  for (std::size_t linear = 0; linear < operand.values.size(); ++linear) {
    std::int64_t target = 0;
    bool inside = true;
    for (std::size_t d = 0; d < rank && inside; ++d) {
      const PadDim& pad = instruction.padding[d];
      const std::int64_t position = pad.low + index[d] * (pad.interior + 1);
      inside = position >= 0 && position < out_dims[d];
      target += position * out_strides[d];
    }
    if (inside) result.values[U(target)] = operand.values[linear];
    for (std::size_t d = rank; d-- > 0;) {  // odometer
      if (++index[d] < in_dims[d]) break;
      index[d] = 0;
    }
  }
  return result;
}

Literal Concatenate(const Instruction& instruction, const Operands& operands) {
  Literal result(instruction.shape);
  const auto axis = U(instruction.dimensions[0]);
  std::int64_t outer = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= instruction.shape.dims[d];
  std::int64_t out_row = 0;  // elements per outer index in the result
  for (const Literal* operand : operands) out_row += operand->shape.Elements() / std::max<std::int64_t>(outer, 1);
  std::int64_t column = 0;
  for (const Literal* operand : operands) {
    const std::int64_t row = outer == 0 ? 0 : operand->shape.Elements() / outer;
    for (std::int64_t o = 0; o < outer; ++o) {
      std::copy_n(operand->values.begin() + o * row, row, result.values.begin() + o * out_row + column);
    }
    column += row;
  }
  return result;
}

Literal Iota(const Instruction& instruction) {
  Literal result(instruction.shape);
  const std::vector<std::int64_t> strides = RowMajorStrides(instruction.shape.dims);
  const auto d = U(instruction.iota_dimension);
  for (std::size_t i = 0; i < result.values.size(); ++i) {
    const auto index = (static_cast<std::int64_t>(i) / strides[d]) % instruction.shape.dims[d];
    result.values[i] = RoundToType(instruction.shape.type, static_cast<double>(index));
  }
  return result;
}

}  // namespace

std::vector<double> StridedGather(const std::vector<double>& in, std::int64_t base,
                                  const std::vector<std::int64_t>& out_dims,
                                  const std::vector<std::int64_t>& strides) {
  std::int64_t count = 1;
  for (std::int64_t d : out_dims) count *= d;
  std::vector<double> out(U(count));
  if (count == 0) return out;
  const std::size_t rank = out_dims.size();
  if (rank == 0) {
    out[0] = in[U(base)];
    return out;
  }
  // Innermost dimension in a tight loop; the outer ones advance like an odometer.
  const std::int64_t inner = out_dims[rank - 1];
  const std::int64_t inner_stride = strides[rank - 1];
  std::vector<std::int64_t> index(rank - 1, 0);
  std::int64_t offset = base;
  for (std::int64_t start = 0; start < count; start += inner) {
    double* target = out.data() + start;
    for (std::int64_t k = 0; k < inner; ++k) target[k] = in[U(offset + k * inner_stride)];
    for (std::size_t d = rank - 1; d-- > 0;) {
      ++index[d];
      offset += strides[d];
      if (index[d] < out_dims[d]) break;
      offset -= strides[d] * out_dims[d];
      index[d] = 0;
    }
  }
  return out;
}

std::vector<double> Permute(const Literal& operand, const std::vector<std::int64_t>& order) {
  const std::vector<std::int64_t> operand_strides = RowMajorStrides(operand.shape.dims);
  std::vector<std::int64_t> dims;
  std::vector<std::int64_t> strides;
  for (std::int64_t d : order) {
    dims.push_back(operand.shape.dims[U(d)]);
    strides.push_back(operand_strides[U(d)]);
  }
  return StridedGather(operand.values, 0, dims, strides);
}

Literal EvalDataMovement(const Instruction& instruction, const Operands& operands) {
  switch (instruction.opcode) {
    case Opcode::kBroadcast: return Broadcast(instruction, *operands[0]);
    case Opcode::kBitcast:
    case Opcode::kReshape: {
      Literal result;
      result.shape = instruction.shape;
      result.values = operands[0]->values;
      return result;
    }
    case Opcode::kTranspose: {
      Literal result;
      result.shape = instruction.shape;
      result.values = Permute(*operands[0], instruction.dimensions);
      return result;
    }
    case Opcode::kSlice: return Slice(instruction, *operands[0]);
    case Opcode::kDynamicSlice: return DynamicSlice(instruction, operands);
    case Opcode::kReverse: return Reverse(instruction, *operands[0]);
    case Opcode::kPad: return Pad(instruction, *operands[0], operands[1]->values[0]);
    case Opcode::kConcatenate: return Concatenate(instruction, operands);
    case Opcode::kIota: return Iota(instruction);
    case Opcode::kTuple: {
      Literal result;
      result.shape = instruction.shape;
      for (const Literal* operand : operands) result.elements.push_back(*operand);
      return result;
    }
    case Opcode::kGetTupleElement: return operands[0]->elements[U(instruction.tuple_index)];
    default: Unsupported(instruction, "is not a data-movement op");
  }
}

}  // namespace systole::hlo::detail
