// Shape inference's rules, one method per family of operations: shape_inference.cpp holds
// most, shape_inference_indexed.cpp gather, scatter, sort and dynamic-update-slice. Internal to
// the front end.
#pragma once

#include <fmt/core.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "toolchain/hlo/ir.hpp"

namespace systole::hlo::detail {

class Inference {
 public:
  explicit Inference(const Instruction& instruction) : i_(instruction) {}

  [[noreturn]] void Fail(const std::string& message) const {
    throw HloError(i_.location, fmt::format("instruction '{}' ({}): {}", i_.name, OpcodeName(i_.opcode), message));
  }
  void Require(bool condition, const std::string& message) const {
    if (!condition) Fail(message);
  }

  void OperandCount(std::size_t count) const {
    Require(i_.operands.size() == count,
            fmt::format("takes {} operand(s), found {}", count, i_.operands.size()));
  }
  const Shape& Operand(std::size_t index) const { return i_.operands[index]->shape; }
  const Shape& ArrayOperand(std::size_t index) const {
    const Shape& shape = Operand(index);
    Require(shape.IsArray(), fmt::format("operand {} ('{}') must be an array, found {}", index,
                                         i_.operands[index]->name, shape.ToString()));
    return shape;
  }
  void Dimension(std::int64_t dim, std::size_t rank, std::string_view what) const {
    Require(dim >= 0 && static_cast<std::size_t>(dim) < rank,
            fmt::format("{} {} is out of range for rank {}", what, dim, rank));
  }
  void Distinct(const std::vector<std::int64_t>& dims, std::size_t rank, std::string_view what) const {
    std::set<std::int64_t> seen;
    for (std::int64_t d : dims) {
      Dimension(d, rank, what);
      Require(seen.insert(d).second, fmt::format("{} {} appears twice", what, d));
    }
  }

  Shape Infer() const;

 private:
  Shape Elementwise() const;
  Shape Broadcast() const;
  Shape Concatenate() const;
  Shape DynamicSlice() const;
  Shape DynamicUpdateSlice() const;
  Shape Gather() const;
  Shape Scatter() const;
  Shape Sort() const;
  // Shared by gather and scatter: `dims` are distinct, in [0, rank), and in increasing order.
  void SortedDistinct(const std::vector<std::int64_t>& dims, std::size_t rank, std::string_view what) const;
  Shape Pad() const;
  Shape Slice() const;
  Shape Transpose() const;
  Shape Call() const;
  Shape While() const;
  Shape Conditional() const;
  // `callee` takes one parameter of `shape`; returns its root's shape.
  const Shape& CheckUnaryCallee(const Computation& callee, const Shape& shape, const std::string& role) const;
  Shape Convolution() const;
  Shape Dot() const;
  Shape Reduce() const;
  Shape ReduceWindow() const;
  Shape SelectAndScatter() const;  // shape_inference_indexed.cpp
  Shape BatchNorm() const;         // shape_inference_batch_norm.cpp
  // Output size of one windowed dimension (convolution, reduce-window).
  std::int64_t WindowedSize(std::int64_t input, const WindowDim& window) const;
  void CheckReducer(const Computation& reducer, const std::vector<ElementType>& types) const;
  // `predicate` takes scalars of `types` and returns pred[] (sort's comparator, select-and-
  // scatter's select); `role` names it in messages.
  void CheckPredicate(const Computation& predicate, const std::vector<ElementType>& types,
                      std::string_view role) const;

  const Instruction& i_;
};

}  // namespace systole::hlo::detail
