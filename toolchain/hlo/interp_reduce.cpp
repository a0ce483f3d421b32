// reduce, reduce-window and select-and-scatter (a max pool's gradient). A reducer that is one binary op of its two parameters (add, max,
// …: every reducer in real dumps) runs as a direct loop; any other reducer is interpreted per
// element. Either way values fold in row-major order over the reduced dimensions, starting from
// the initial value, and are rounded to the element type after every step.
#include <algorithm>

#include "toolchain/hlo/dims.hpp"
#include "toolchain/hlo/interp_kernels.hpp"

namespace systole::hlo::detail {

namespace {

// The row-major offset in an operand of dims `in_dims` of element `window_index` of the window
// at `position` (the output index of reduce-window, the source index of select-and-scatter);
// none in padding or a base-dilation hole.
std::optional<std::int64_t> WindowOffset(const std::vector<WindowDim>& window, const std::vector<std::int64_t>& in_dims,
                                         const std::vector<std::int64_t>& in_strides,
                                         const std::vector<std::int64_t>& position,
                                         const std::vector<std::int64_t>& window_index) {
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < in_dims.size(); ++d) {
    const WindowDim& w = window[d];
    const std::int64_t dilated = position[d] * w.stride - w.pad_low + window_index[d] * w.rhs_dilation;
    if (dilated < 0 || dilated % w.lhs_dilation != 0 || dilated / w.lhs_dilation >= in_dims[d]) return std::nullopt;
    offset += dilated / w.lhs_dilation * in_strides[d];
  }
  return offset;
}

// The next row-major index below `dims` (an odometer; wraps to zeros after the last).
void Advance(std::vector<std::int64_t>& index, const std::vector<std::int64_t>& dims) {
  for (std::size_t d = index.size(); d-- > 0;) {
    if (++index[d] < dims[d]) return;
    index[d] = 0;
  }
}
std::vector<std::int64_t> WindowSizes(const std::vector<WindowDim>& window) {
  std::vector<std::int64_t> sizes;
  for (const WindowDim& w : window) sizes.push_back(w.size);
  return sizes;
}

// The binary op a reducer applies to its two parameters, when it is that simple.
std::optional<Opcode> SimpleReducer(const Computation& reducer) {
  const Instruction* root = reducer.root;
  if (!IsElementwiseBinary(root->opcode) || root->opcode == Opcode::kCompare) return std::nullopt;
  if (root->operands.size() != 2) return std::nullopt;
  for (const Instruction* operand : root->operands) {
    if (operand->opcode != Opcode::kParameter) return std::nullopt;
  }
  if (root->operands[0] == root->operands[1]) return std::nullopt;
  return root->opcode;  // a op b == b op a for every such op but subtract/divide/…; order kept below
}

}  // namespace

Folder::Folder(const Computation& reducer, const std::vector<ElementType>& types, const ComputationRunner& run)
    : reducer_(reducer), types_(types), run_(run), simple_(types.size() == 1 ? SimpleReducer(reducer) : std::nullopt) {
  if (simple_) swapped_ = reducer.root->operands[0]->parameter_number == 1;
}

void Folder::Fold(std::vector<double>& acc, const std::vector<double>& x) const {
  if (simple_) {
    const double a = swapped_ ? x[0] : acc[0];
    const double b = swapped_ ? acc[0] : x[0];
    acc[0] = RoundToType(types_[0], ApplyBinary(*simple_, types_[0], a, b));
    return;
  }
  const std::size_t n = types_.size();
  std::vector<Literal> scalars;
  for (std::size_t k = 0; k < n; ++k) scalars.push_back(Literal::Scalar(types_[k], acc[k]));
  for (std::size_t k = 0; k < n; ++k) scalars.push_back(Literal::Scalar(types_[k], x[k]));
  Operands arguments;
  for (const Literal& scalar : scalars) arguments.push_back(&scalar);
  const Literal out = run_(reducer_, arguments);
  if (n == 1) {
    acc[0] = out.values[0];
  } else {
    for (std::size_t k = 0; k < n; ++k) acc[k] = out.elements[k].values[0];
  }
}

Literal EvalReduce(const Instruction& instruction, const Operands& operands, const ComputationRunner& run) {
  const std::size_t n = operands.size() / 2;
  const Shape& in_shape = operands[0]->shape;
  std::vector<std::int64_t> kept;
  std::vector<std::int64_t> reduced;
  for (std::size_t d = 0; d < in_shape.Rank(); ++d) {
    const bool is_reduced = std::find(instruction.dimensions.begin(), instruction.dimensions.end(),
                                      static_cast<std::int64_t>(d)) != instruction.dimensions.end();
    (is_reduced ? reduced : kept).push_back(static_cast<std::int64_t>(d));
  }
  std::vector<std::int64_t> order = kept;  // kept dims first, reduced dims (in order) last
  std::sort(reduced.begin(), reduced.end());
  order.insert(order.end(), reduced.begin(), reduced.end());
  std::int64_t run_length = 1;
  for (std::int64_t d : reduced) run_length *= in_shape.dims[U(d)];

  std::vector<std::vector<double>> inputs;
  std::vector<ElementType> types;
  for (std::size_t k = 0; k < n; ++k) {
    inputs.push_back(Permute(*operands[k], order));
    types.push_back(operands[n + k]->shape.type);
  }
  const Folder folder(*instruction.called[0], types, run);
  Literal result(instruction.shape);
  std::vector<double>& first_out = n == 1 ? result.values : result.elements[0].values;
  const std::size_t outputs = first_out.size();
  std::vector<double> acc(n);
  std::vector<double> x(n);
  for (std::size_t o = 0; o < outputs; ++o) {
    for (std::size_t k = 0; k < n; ++k) acc[k] = operands[n + k]->values[0];
    for (std::int64_t r = 0; r < run_length; ++r) {
      for (std::size_t k = 0; k < n; ++k) x[k] = inputs[k][o * U(run_length) + U(r)];
      folder.Fold(acc, x);
    }
    if (n == 1) {
      result.values[o] = acc[0];
    } else {
      for (std::size_t k = 0; k < n; ++k) result.elements[k].values[o] = acc[k];
    }
  }
  return result;
}

Literal EvalReduceWindow(const Instruction& instruction, const Operands& operands, const ComputationRunner& run) {
  const Literal& input = *operands[0];
  const double init = operands[1]->values[0];
  const Folder folder(*instruction.called[0], {operands[1]->shape.type}, run);
  const std::size_t rank = input.shape.Rank();
  const std::vector<std::int64_t>& in_dims = input.shape.dims;
  const std::vector<std::int64_t> in_strides = RowMajorStrides(in_dims);
  const std::vector<std::int64_t>& out_dims = instruction.shape.dims;
  const std::vector<std::int64_t> window_sizes = WindowSizes(instruction.window);
  std::int64_t window_elements = 1;
  for (const std::int64_t size : window_sizes) window_elements *= size;

  Literal result(instruction.shape);
  std::vector<std::int64_t> out_index(rank, 0);
  std::vector<std::int64_t> window_index(rank, 0);
  std::vector<double> acc(1);
  std::vector<double> x(1);
  for (double& out : result.values) {
    acc[0] = init;
    std::fill(window_index.begin(), window_index.end(), 0);
    for (std::int64_t e = 0; e < window_elements; ++e) {
      // Padding and base-dilation holes read as the initial value, as XLA defines them.
      const std::optional<std::int64_t> offset = WindowOffset(instruction.window, in_dims, in_strides, out_index,
                                                              window_index);
      x[0] = offset ? input.values[U(*offset)] : init;
      folder.Fold(acc, x);
      Advance(window_index, window_sizes);
    }
    out = acc[0];
    Advance(out_index, out_dims);
  }
  return result;
}

Literal EvalSelectAndScatter(const Instruction& instruction, const Operands& operands, const ComputationRunner& run) {
  const Literal& input = *operands[0];
  const Literal& source = *operands[1];
  const ElementType type = input.shape.type;
  const Computation& select = *instruction.called[0];
  const Folder scatter(*instruction.called[1], {type}, run);
  const std::size_t rank = input.shape.Rank();
  const std::vector<std::int64_t> in_strides = RowMajorStrides(input.shape.dims);
  const std::vector<std::int64_t> window_sizes = WindowSizes(instruction.window);
  std::int64_t window_elements = 1;
  for (const std::int64_t size : window_sizes) window_elements *= size;

  Literal result(instruction.shape);
  std::fill(result.values.begin(), result.values.end(), operands[2]->values[0]);
  std::vector<std::int64_t> source_index(rank, 0);
  std::vector<std::int64_t> window_index(rank, 0);
  Literal selected_value(Shape(type, {})), candidate(Shape(type, {}));
  std::vector<double> acc(1), x(1);
  for (const double source_value : source.values) {
    // XLA's order: the first element of the window in row-major order (padding is skipped, not
    // read), then each later one replaces it unless select(selected, later) is true.
    std::optional<std::int64_t> selected;
    std::fill(window_index.begin(), window_index.end(), 0);
    for (std::int64_t e = 0; e < window_elements; ++e) {
      const std::optional<std::int64_t> offset = WindowOffset(instruction.window, input.shape.dims, in_strides,
                                                              source_index, window_index);
      if (offset) {
        candidate.values[0] = input.values[U(*offset)];
        if (!selected) {
          selected = offset;
          selected_value.values[0] = candidate.values[0];
        } else if (run(select, {&selected_value, &candidate}).values.at(0) == 0.0) {
          selected = offset;
          selected_value.values[0] = candidate.values[0];
        }
      }
      Advance(window_index, window_sizes);
    }
    if (selected) {  // scatter(source, current), XLA's parameter order
      acc[0] = source_value;
      x[0] = result.values[U(*selected)];
      scatter.Fold(acc, x);
      result.values[U(*selected)] = acc[0];
    }
    Advance(source_index, source.shape.dims);
  }
  return result;
}

}  // namespace systole::hlo::detail
