// Operations that address an array through computed indices: gather (embedding lookups, indexed
// reads), scatter (their gradients, `.at[…].add/set`), sort (`jnp.sort`, `argsort`: variadic,
// with a comparator computation) and dynamic-update-slice (`lax.scan` stacking its outputs).
//
// Out-of-range indices follow XLA: gather and dynamic-update-slice clamp each start index so the
// whole window stays inside the operand; scatter skips an update whose window would not fit.
// Sorting is always stable (std::stable_sort), which is one valid order for `is_stable=false`
// too, and stays well-defined for comparators that are not strict weak orders.
#include <algorithm>
#include <numeric>

#include "toolchain/hlo/dims.hpp"
#include "toolchain/hlo/interp_kernels.hpp"

namespace systole::hlo::detail {

namespace {

// Advances a row-major multi-index over `dims`; false after the last one.
bool Next(std::vector<std::int64_t>& index, const std::vector<std::int64_t>& dims) {
  for (std::size_t d = dims.size(); d-- > 0;) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

// How gather and scatter find an index vector and a window. `window_source` lists, for each
// operand dimension a window spans (increasing), the dimension of the result (gather) or of the
// updates (scatter) that walks it; `batch_source` lists the result's or updates' dimensions
// that walk the indices' batch dimensions.
class IndexedAccess {
 public:
  IndexedAccess(const GatherScatterDims& dims, const Shape& operand, const Shape& indices, std::size_t walked_rank)
      : g_(dims),
        operand_dims_(operand.dims),
        operand_strides_(RowMajorStrides(operand.dims)),
        index_strides_(RowMajorStrides(indices.dims)),
        implicit_vector_(U(dims.index_vector_dim) == indices.Rank()) {
    for (std::size_t d = 0; d < operand.Rank(); ++d) {
      const auto dim = static_cast<std::int64_t>(d);
      if (!Contains(g_.collapsed_slice_dims, dim) && !Contains(g_.operand_batching_dims, dim)) windowed_.push_back(dim);
    }
    for (std::size_t d = 0; d < walked_rank; ++d) {
      if (!Contains(g_.offset_dims, static_cast<std::int64_t>(d))) batch_walked_.push_back(static_cast<std::int64_t>(d));
    }
    for (std::size_t d = 0; d < indices.Rank(); ++d) {
      if (implicit_vector_ || static_cast<std::int64_t>(d) != g_.index_vector_dim) {
        batch_indices_.push_back(static_cast<std::int64_t>(d));
      }
    }
  }

  // The start position in the operand (unclamped; doubles so that no index can overflow) for the
  // batch position that `walked` (an index of the result or the updates) is at.
  std::vector<double> Start(const std::vector<std::int64_t>& walked, const Literal& indices) const {
    std::int64_t base = 0;
    for (std::size_t k = 0; k < batch_walked_.size(); ++k) {
      base += walked[U(batch_walked_[k])] * index_strides_[U(batch_indices_[k])];
    }
    std::vector<double> start(operand_dims_.size(), 0.0);
    const std::int64_t vector_stride = implicit_vector_ ? 0 : index_strides_[U(g_.index_vector_dim)];
    for (std::size_t k = 0; k < g_.start_index_map.size(); ++k) {
      start[U(g_.start_index_map[k])] = indices.values[U(base + static_cast<std::int64_t>(k) * vector_stride)];
    }
    for (std::size_t k = 0; k < g_.operand_batching_dims.size(); ++k) {
      const auto position = std::find(batch_indices_.begin(), batch_indices_.end(), g_.start_indices_batching_dims[k]);
      const auto component = static_cast<std::size_t>(position - batch_indices_.begin());
      start[U(g_.operand_batching_dims[k])] = static_cast<double>(walked[U(batch_walked_[component])]);
    }
    return start;
  }

  // Operand offset of window element `walked` at integer start `start`.
  std::int64_t Offset(const std::vector<std::int64_t>& start, const std::vector<std::int64_t>& walked) const {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < start.size(); ++d) offset += start[d] * operand_strides_[d];
    for (std::size_t j = 0; j < windowed_.size(); ++j) {
      offset += walked[U(g_.offset_dims[j])] * operand_strides_[U(windowed_[j])];
    }
    return offset;
  }

  const std::vector<std::int64_t>& operand_dims() const { return operand_dims_; }
  const std::vector<std::int64_t>& windowed() const { return windowed_; }

 private:
  const GatherScatterDims& g_;
  std::vector<std::int64_t> operand_dims_;
  std::vector<std::int64_t> operand_strides_;
  std::vector<std::int64_t> index_strides_;
  bool implicit_vector_;
  std::vector<std::int64_t> windowed_;
  std::vector<std::int64_t> batch_walked_;
  std::vector<std::int64_t> batch_indices_;
};

Literal Gather(const Instruction& instruction, const Operands& operands) {
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  const GatherScatterDims& g = instruction.gather_dims;
  const IndexedAccess access(g, operand.shape, indices.shape, instruction.shape.Rank());
  Literal result(instruction.shape);
  if (result.values.empty()) return result;
  std::vector<std::int64_t> out_index(instruction.shape.Rank(), 0);
  std::vector<std::int64_t> start(operand.shape.Rank(), 0);
  std::size_t o = 0;
  do {
    const std::vector<double> requested = access.Start(out_index, indices);
    for (std::size_t d = 0; d < start.size(); ++d) {
      const auto limit = static_cast<double>(operand.shape.dims[d] - g.slice_sizes[d]);
      start[d] = static_cast<std::int64_t>(std::clamp(requested[d], 0.0, limit));
    }
    result.values[o++] = operand.values[U(access.Offset(start, out_index))];
  } while (Next(out_index, instruction.shape.dims));
  return result;
}

Literal Scatter(const Instruction& instruction, const Operands& operands, const ComputationRunner& run) {
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  const Literal& updates = *operands[2];
  const GatherScatterDims& g = instruction.gather_dims;
  const IndexedAccess access(g, operand.shape, indices.shape, updates.shape.Rank());
  // The window's extent along every operand dimension: 1 where inserted or batching.
  std::vector<std::int64_t> extent(operand.shape.Rank(), 1);
  for (std::size_t j = 0; j < access.windowed().size(); ++j) {
    extent[U(access.windowed()[j])] = updates.shape.dims[U(g.offset_dims[j])];
  }
  const Folder folder(*instruction.called[0], {operand.shape.type}, run);
  Literal result = operand;
  result.shape = instruction.shape;
  if (updates.values.empty()) return result;
  std::vector<std::int64_t> update_index(updates.shape.Rank(), 0);
  std::vector<std::int64_t> start(operand.shape.Rank(), 0);
  std::vector<double> acc(1);
  std::vector<double> x(1);
  std::size_t u = 0;
  do {
    const std::vector<double> requested = access.Start(update_index, indices);
    bool inside = true;
    for (std::size_t d = 0; d < start.size() && inside; ++d) {
      inside = requested[d] >= 0 && requested[d] + static_cast<double>(extent[d]) <= static_cast<double>(operand.shape.dims[d]);
      start[d] = inside ? static_cast<std::int64_t>(requested[d]) : 0;
    }
    if (inside) {
      double& target = result.values[U(access.Offset(start, update_index))];
      acc[0] = target;
      x[0] = updates.values[u];
      folder.Fold(acc, x);
      target = acc[0];
    }
    ++u;
  } while (Next(update_index, updates.shape.dims));
  return result;
}

Literal Sort(const Instruction& instruction, const Operands& operands, const ComputationRunner& run) {
  const Shape& shape = operands[0]->shape;
  const std::size_t axis = U(instruction.dimensions[0]);
  const std::int64_t length = shape.dims[axis];
  std::int64_t inner = 1;
  for (std::size_t d = axis + 1; d < shape.Rank(); ++d) inner *= shape.dims[d];
  const std::int64_t slices = length == 0 ? 0 : shape.Elements() / length;
  const std::size_t n = operands.size();

  std::vector<Literal> outputs;
  for (const Literal* operand : operands) outputs.push_back(*operand);
  std::vector<Literal> arguments;
  for (std::size_t k = 0; k < 2 * n; ++k) arguments.push_back(Literal::Scalar(operands[k / 2]->shape.type, 0.0));
  Operands pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);

  std::vector<std::int64_t> order(U(length));
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::int64_t base = (s / inner) * length * inner + s % inner;
    const auto at = [&](std::int64_t k) { return U(base + k * inner); };
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      for (std::size_t k = 0; k < n; ++k) {
        arguments[2 * k].values[0] = operands[k]->values[at(a)];
        arguments[2 * k + 1].values[0] = operands[k]->values[at(b)];
      }
      return run(*instruction.called[0], pointers).values[0] != 0.0;
    });
    for (std::size_t k = 0; k < n; ++k) {
      for (std::int64_t i = 0; i < length; ++i) outputs[k].values[at(i)] = operands[k]->values[at(order[U(i)])];
    }
  }
  if (n == 1) return std::move(outputs[0]);
  Literal result;
  result.shape = instruction.shape;
  result.elements = std::move(outputs);
  return result;
}

Literal DynamicUpdateSlice(const Instruction& instruction, const Operands& operands) {
  const Literal& operand = *operands[0];
  const Literal& update = *operands[1];
  const std::vector<std::int64_t> strides = RowMajorStrides(operand.shape.dims);
  std::int64_t base = 0;
  for (std::size_t d = 0; d < operand.shape.Rank(); ++d) {
    const auto limit = static_cast<double>(operand.shape.dims[d] - update.shape.dims[d]);
    base += static_cast<std::int64_t>(std::clamp(operands[d + 2]->values[0], 0.0, limit)) * strides[d];
  }
  Literal result = operand;
  result.shape = instruction.shape;
  if (update.values.empty()) return result;
  std::vector<std::int64_t> index(update.shape.Rank(), 0);
  std::size_t u = 0;
  do {
    std::int64_t offset = base;
    for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
    result.values[U(offset)] = update.values[u++];
  } while (Next(index, update.shape.dims));
  return result;
}

}  // namespace

Literal EvalIndexed(const Instruction& instruction, const Operands& operands, const ComputationRunner& run) {
  switch (instruction.opcode) {
    case Opcode::kGather: return Gather(instruction, operands);
    case Opcode::kScatter: return Scatter(instruction, operands, run);
    case Opcode::kSort: return Sort(instruction, operands, run);
    case Opcode::kDynamicUpdateSlice: return DynamicUpdateSlice(instruction, operands);
    default: Unsupported(instruction, "is not an indexed op");
  }
}

}  // namespace systole::hlo::detail
