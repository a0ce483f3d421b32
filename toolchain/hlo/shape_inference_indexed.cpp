// Shape inference for the operations that address an array through computed indices: gather,
// scatter, sort and dynamic-update-slice. The rules follow XLA's operation semantics; every
// attribute is checked, so the interpreter can index without bounds surprises.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "toolchain/hlo/dims.hpp"
#include "toolchain/hlo/shape_inference_rules.hpp"

namespace systole::hlo::detail {

void Inference::SortedDistinct(const std::vector<std::int64_t>& dims, std::size_t rank, std::string_view what) const {
  Distinct(dims, rank, what);
  Require(std::is_sorted(dims.begin(), dims.end()), fmt::format("{} {{{}}} must be in increasing order", what,
                                                                fmt::join(dims, ",")));
}

Shape Inference::DynamicUpdateSlice() const {
  Require(i_.operands.size() >= 2, "needs an operand and an update");
  const Shape& operand = ArrayOperand(0);
  const Shape& update = ArrayOperand(1);
  OperandCount(2 + operand.Rank());
  Require(update.type == operand.type && update.Rank() == operand.Rank(),
          fmt::format("update {} must have the operand's element type and rank ({})", update.ToString(),
                      operand.ToString()));
  for (std::size_t d = 0; d < operand.Rank(); ++d) {
    Require(update.dims[d] <= operand.dims[d], fmt::format("update dimension {} ({}) exceeds the operand's ({})", d,
                                                           update.dims[d], operand.dims[d]));
  }
  for (std::size_t k = 2; k < i_.operands.size(); ++k) {
    const Shape& index = ArrayOperand(k);
    Require(index.dims.empty() && IsInteger(index.type),
            fmt::format("start index {} must be an integer scalar, found {}", k - 2, index.ToString()));
  }
  return operand;
}

Shape Inference::Gather() const {
  OperandCount(2);
  const Shape& operand = ArrayOperand(0);
  const Shape& indices = ArrayOperand(1);
  const GatherScatterDims& g = i_.gather_dims;
  Require(IsInteger(indices.type), fmt::format("start indices must be integers, found {}", indices.ToString()));
  Require(g.index_vector_dim >= 0 && U(g.index_vector_dim) <= indices.Rank(),
          fmt::format("index_vector_dim {} is out of range for start indices {}", g.index_vector_dim,
                      indices.ToString()));
  const bool implicit_vector = U(g.index_vector_dim) == indices.Rank();
  const std::int64_t vector_size = implicit_vector ? 1 : indices.dims[U(g.index_vector_dim)];
  Require(g.slice_sizes.size() == operand.Rank(),
          fmt::format("slice_sizes has {} entries for an operand of rank {}", g.slice_sizes.size(), operand.Rank()));
  for (std::size_t d = 0; d < operand.Rank(); ++d) {
    Require(g.slice_sizes[d] >= 0 && g.slice_sizes[d] <= operand.dims[d],
            fmt::format("slice size {} of dimension {} is outside [0, {}]", g.slice_sizes[d], d, operand.dims[d]));
  }
  SortedDistinct(g.collapsed_slice_dims, operand.Rank(), "collapsed_slice_dims");
  SortedDistinct(g.operand_batching_dims, operand.Rank(), "operand_batching_dims");
  for (std::int64_t d : g.collapsed_slice_dims) {
    Require(g.slice_sizes[U(d)] <= 1, fmt::format("collapsed dimension {} has slice size {}", d, g.slice_sizes[U(d)]));
    Require(!Contains(g.operand_batching_dims, d), fmt::format("dimension {} is both collapsed and batching", d));
  }
  for (std::int64_t d : g.operand_batching_dims) {
    Require(g.slice_sizes[U(d)] <= 1, fmt::format("batching dimension {} has slice size {}", d, g.slice_sizes[U(d)]));
  }
  Distinct(g.start_index_map, operand.Rank(), "start_index_map entry");
  Require(static_cast<std::int64_t>(g.start_index_map.size()) == vector_size,
          fmt::format("start_index_map has {} entries but the index vectors have {}", g.start_index_map.size(),
                      vector_size));
  for (std::int64_t d : g.start_index_map) {
    Require(!Contains(g.operand_batching_dims, d), fmt::format("start_index_map names batching dimension {}", d));
  }
  Distinct(g.start_indices_batching_dims, indices.Rank(), "start_indices_batching_dims entry");
  Require(!Contains(g.start_indices_batching_dims, g.index_vector_dim),
          "start_indices_batching_dims names index_vector_dim");
  Require(g.start_indices_batching_dims.size() == g.operand_batching_dims.size(),
          "operand_batching_dims and start_indices_batching_dims need the same number of entries");
  for (std::size_t k = 0; k < g.operand_batching_dims.size(); ++k) {
    Require(operand.dims[U(g.operand_batching_dims[k])] == indices.dims[U(g.start_indices_batching_dims[k])],
            fmt::format("batching dimension {} of the operand and {} of the indices differ in size",
                        g.operand_batching_dims[k], g.start_indices_batching_dims[k]));
  }
  std::vector<std::int64_t> offset_sizes;
  for (std::size_t d = 0; d < operand.Rank(); ++d) {
    const auto dim = static_cast<std::int64_t>(d);
    if (!Contains(g.collapsed_slice_dims, dim) && !Contains(g.operand_batching_dims, dim)) {
      offset_sizes.push_back(g.slice_sizes[d]);
    }
  }
  const std::size_t batch_rank = indices.Rank() - (implicit_vector ? 0 : 1);
  const std::size_t out_rank = batch_rank + offset_sizes.size();
  Require(g.offset_dims.size() == offset_sizes.size(),
          fmt::format("offset_dims has {} entries but the slices keep {} dimension(s)", g.offset_dims.size(),
                      offset_sizes.size()));
  SortedDistinct(g.offset_dims, out_rank, "offset_dims");
  std::vector<std::int64_t> dims(out_rank, 0);
  std::size_t next_offset = 0;
  std::size_t next_batch = 0;
  for (std::size_t d = 0; d < out_rank; ++d) {
    if (Contains(g.offset_dims, static_cast<std::int64_t>(d))) {
      dims[d] = offset_sizes[next_offset++];
    } else {
      if (!implicit_vector && next_batch == U(g.index_vector_dim)) ++next_batch;
      dims[d] = indices.dims[next_batch++];
    }
  }
  return Shape(operand.type, dims);
}

Shape Inference::Scatter() const {
  Require(i_.operands.size() == 3, fmt::format("takes operand, scatter indices and updates (variadic scatter is not "
                                               "supported), found {} operand(s)", i_.operands.size()));
  Require(i_.called.size() == 1, "needs to_apply=");
  const Shape& operand = ArrayOperand(0);
  const Shape& indices = ArrayOperand(1);
  const Shape& updates = ArrayOperand(2);
  const GatherScatterDims& g = i_.gather_dims;
  Require(IsInteger(indices.type), fmt::format("scatter indices must be integers, found {}", indices.ToString()));
  Require(updates.type == operand.type, fmt::format("updates {} must have the operand's element type ({})",
                                                    updates.ToString(), operand.ToString()));
  Require(g.index_vector_dim >= 0 && U(g.index_vector_dim) <= indices.Rank(),
          fmt::format("index_vector_dim {} is out of range for scatter indices {}", g.index_vector_dim,
                      indices.ToString()));
  const bool implicit_vector = U(g.index_vector_dim) == indices.Rank();
  const std::int64_t vector_size = implicit_vector ? 1 : indices.dims[U(g.index_vector_dim)];
  SortedDistinct(g.collapsed_slice_dims, operand.Rank(), "inserted_window_dims");
  SortedDistinct(g.operand_batching_dims, operand.Rank(), "input_batching_dims");
  for (std::int64_t d : g.collapsed_slice_dims) {
    Require(!Contains(g.operand_batching_dims, d), fmt::format("dimension {} is both inserted and batching", d));
  }
  Distinct(g.start_index_map, operand.Rank(), "scatter_dims_to_operand_dims entry");
  Require(static_cast<std::int64_t>(g.start_index_map.size()) == vector_size,
          fmt::format("scatter_dims_to_operand_dims has {} entries but the index vectors have {}",
                      g.start_index_map.size(), vector_size));
  Distinct(g.start_indices_batching_dims, indices.Rank(), "scatter_indices_batching_dims entry");
  Require(!Contains(g.start_indices_batching_dims, g.index_vector_dim),
          "scatter_indices_batching_dims names index_vector_dim");
  Require(g.start_indices_batching_dims.size() == g.operand_batching_dims.size(),
          "input_batching_dims and scatter_indices_batching_dims need the same number of entries");
  const std::size_t batch_rank = indices.Rank() - (implicit_vector ? 0 : 1);
  const std::size_t window_rank = operand.Rank() - g.collapsed_slice_dims.size() - g.operand_batching_dims.size();
  Require(g.offset_dims.size() == window_rank,
          fmt::format("update_window_dims has {} entries but the operand keeps {} window dimension(s)",
                      g.offset_dims.size(), window_rank));
  Require(updates.Rank() == batch_rank + window_rank,
          fmt::format("updates {} must have rank {} ({} scatter + {} window dimensions)", updates.ToString(),
                      batch_rank + window_rank, batch_rank, window_rank));
  SortedDistinct(g.offset_dims, updates.Rank(), "update_window_dims");
  // Window dimensions of the updates fit the operand; scatter dimensions match the indices.
  std::size_t next_window = 0;
  std::size_t next_batch = 0;
  for (std::size_t d = 0; d < updates.Rank(); ++d) {
    if (Contains(g.offset_dims, static_cast<std::int64_t>(d))) {
      std::size_t operand_dim = 0;
      for (std::size_t seen = 0;; ++operand_dim) {
        const auto dim = static_cast<std::int64_t>(operand_dim);
        if (Contains(g.collapsed_slice_dims, dim) || Contains(g.operand_batching_dims, dim)) continue;
        if (seen++ == next_window) break;
      }
      ++next_window;
      Require(updates.dims[d] <= operand.dims[operand_dim],
              fmt::format("update window dimension {} ({}) exceeds operand dimension {} ({})", d, updates.dims[d],
                          operand_dim, operand.dims[operand_dim]));
    } else {
      if (!implicit_vector && next_batch == U(g.index_vector_dim)) ++next_batch;
      Require(updates.dims[d] == indices.dims[next_batch],
              fmt::format("update scatter dimension {} ({}) differs from scatter indices dimension {} ({})", d,
                          updates.dims[d], next_batch, indices.dims[next_batch]));
      ++next_batch;
    }
  }
  CheckReducer(*i_.called[0], {operand.type});
  return operand;
}

Shape Inference::Sort() const {
  Require(!i_.operands.empty(), "needs at least one operand");
  Require(i_.called.size() == 1, "needs to_apply= (the comparator)");
  const Shape& first = ArrayOperand(0);
  for (std::size_t k = 1; k < i_.operands.size(); ++k) {
    Require(ArrayOperand(k).dims == first.dims, fmt::format("operand {} {} must have the dimensions of operand 0 ({})",
                                                            k, Operand(k).ToString(), first.ToString()));
  }
  Require(i_.dimensions.size() == 1, "needs dimensions={d}: one dimension to sort along");
  Dimension(i_.dimensions[0], first.Rank(), "sort dimension");
  std::vector<ElementType> compared;
  for (std::size_t k = 0; k < 2 * i_.operands.size(); ++k) compared.push_back(Operand(k / 2).type);
  CheckPredicate(*i_.called[0], compared, "comparator");
  if (i_.operands.size() == 1) return first;
  std::vector<Shape> elements;
  for (const Instruction* operand : i_.operands) elements.push_back(operand->shape);
  return Shape::Tuple(std::move(elements));
}

void Inference::CheckPredicate(const Computation& predicate, const std::vector<ElementType>& types,
                               std::string_view role) const {
  const std::vector<Instruction*> parameters = predicate.Parameters();
  Require(parameters.size() == types.size(), fmt::format("{} '{}' must take {} scalar parameters, takes {}", role,
                                                         predicate.name, types.size(), parameters.size()));
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    Require(parameters[k] != nullptr && parameters[k]->shape.IsArray() && parameters[k]->shape.dims.empty() &&
                parameters[k]->shape.type == types[k],
            fmt::format("parameter {} of {} '{}' must be a {} scalar", k, role, predicate.name,
                        ElementTypeName(types[k])));
  }
  const Shape& root = predicate.root->shape;
  Require(root.IsArray() && root.dims.empty() && root.type == ElementType::kPred,
          fmt::format("{} '{}' must return pred[], returns {}", role, predicate.name, root.ToString()));
}

// select-and-scatter(operand, source, init), window=…, select=S, scatter=T (a max pool's
// gradient): in every window of the operand S picks one element, and the source value of that
// window is combined with T into the result (shaped like the operand) at the picked position.
Shape Inference::SelectAndScatter() const {
  OperandCount(3);
  Require(i_.called.size() == 2, "needs select= and scatter=");
  const Shape& operand = ArrayOperand(0);
  const Shape& source = ArrayOperand(1);
  const Shape& init = ArrayOperand(2);
  Require(init.dims.empty() && init.type == operand.type,
          fmt::format("initial value must be a {} scalar, found {}", ElementTypeName(operand.type), init.ToString()));
  Require(source.type == operand.type, fmt::format("source {} must have the operand's element type ({})",
                                                   source.ToString(), operand.ToString()));
  Require(i_.window.size() == operand.Rank(),
          fmt::format("window has {} dimension(s) but the operand has rank {}", i_.window.size(), operand.Rank()));
  std::vector<std::int64_t> windows;
  for (std::size_t d = 0; d < operand.Rank(); ++d) windows.push_back(WindowedSize(operand.dims[d], i_.window[d]));
  Require(source.dims == windows, fmt::format("source is {} but the operand {} has {} window position(s) per "
                                              "dimension [{}]", source.ToString(), operand.ToString(),
                                              windows.size(), fmt::join(windows, ", ")));
  CheckPredicate(*i_.called[0], {operand.type, operand.type}, "select");
  CheckReducer(*i_.called[1], {operand.type});
  return operand;
}

}  // namespace systole::hlo::detail
