// Row patterns shared by the fused row kernels (row_patterns.hpp).
#include "toolchain/compiler/row_patterns.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace systole::compiler::detail {

using hlo::Instruction;
using hlo::Opcode;

// `reduce` is a max (init −∞) or sum (init 0) over the last dimension of its operand.
bool ReducesLastDimension(const Instruction& reduce, bool max) {
  if (reduce.opcode != Opcode::kReduce || reduce.operands.size() != 2 || reduce.called.size() != 1 ||
      reduce.called[0]->root == nullptr || reduce.dimensions.size() != 1) {
    return false;
  }
  const Instruction& data = *reduce.operands[0];
  if (data.shape.Rank() == 0 || reduce.dimensions[0] != static_cast<std::int64_t>(data.shape.Rank() - 1)) return false;
  const Instruction& combiner = *reduce.called[0]->root;
  if (combiner.opcode != (max ? Opcode::kMaximum : Opcode::kAdd) || combiner.operands.size() != 2 ||
      combiner.operands[0]->opcode != Opcode::kParameter || combiner.operands[1]->opcode != Opcode::kParameter ||
      combiner.operands[0] == combiner.operands[1]) {
    return false;
  }
  const std::optional<double> init = UniformConstant(*reduce.operands[1]);
  return init && (max ? *init == -INFINITY : *init == 0.0);
}

bool KeepsElementOrder(const Instruction& i) {
  if (i.opcode == Opcode::kReshape || i.opcode == Opcode::kBitcast || i.opcode == Opcode::kConvert) return true;
  // A broadcast that only adds unit dimensions: its dimensions increase.
  if (i.opcode != Opcode::kBroadcast || i.shape.Elements() != i.operands[0]->shape.Elements()) return false;
  for (std::size_t d = 1; d < i.dimensions.size(); ++d) {
    if (i.dimensions[d] <= i.dimensions[d - 1]) return false;
  }
  return true;
}

// The per-row value that `operand` (of x's shape) broadcasts along x's last dimension: walks
// back through one broadcast of x's leading dimensions and element-order-preserving copies of
// `rows` elements, appending them to `path`. nullptr when `operand` is not such a broadcast.
const Instruction* RowValueOf(const Instruction& operand, const hlo::Shape& x, std::vector<const Instruction*>& path) {
  const std::size_t rank = x.Rank();
  if (rank == 0 || x.dims.back() == 0) return nullptr;
  const std::int64_t rows = x.Elements() / x.dims.back();
  const Instruction* v = &operand;
  // The broadcast along the last dimension: [leading dims] -> x's shape, dimensions {0 … rank−2}.
  if (v->opcode != Opcode::kBroadcast || v->shape.dims != x.dims || v->operands[0]->shape.Elements() != rows ||
      v->dimensions.size() != rank - 1) {
    return nullptr;
  }
  for (std::size_t d = 0; d + 1 < rank; ++d) {
    if (v->dimensions[d] != static_cast<std::int64_t>(d) || v->operands[0]->shape.dims[d] != x.dims[d]) return nullptr;
  }
  path.push_back(v);
  v = v->operands[0];
  while (KeepsElementOrder(*v) && v->shape.Elements() == rows) {
    path.push_back(v);
    v = v->operands[0];
  }
  return v;
}

const Instruction* ColumnVectorOf(const Instruction& operand, const hlo::Shape& x) {
  const std::size_t rank = x.Rank();
  if (rank == 0) return nullptr;
  const std::int64_t n = x.dims.back();
  const Instruction* v = &operand;
  if (v->opcode != Opcode::kBroadcast || v->shape.dims != x.dims || v->operands[0]->shape.Elements() != n ||
      v->dimensions.size() != 1 || v->dimensions[0] != static_cast<std::int64_t>(rank - 1)) {
    return nullptr;
  }
  v = v->operands[0];
  while (KeepsElementOrder(*v) && v->opcode != Opcode::kConvert && v->operands[0]->shape.Elements() == n) {
    v = v->operands[0];
  }
  return v;
}

std::optional<ScaledRowSum> ScaledRowSumOf(const Instruction& value, std::vector<const Instruction*>& path) {
  ScaledRowSum sum;
  double scale = 1.0;
  bool scaled = false;
  const Instruction* v = &value;
  while (v->opcode != Opcode::kReduce) {
    path.push_back(v);
    if ((v->opcode == Opcode::kDivide || v->opcode == Opcode::kMultiply) && !scaled && v->operands.size() == 2) {
      const std::optional<double> c = UniformConstant(*v->operands[1]);
      if (!c || *c == 0.0) return std::nullopt;
      scale = v->opcode == Opcode::kDivide ? 1.0 / *c : *c;
      scaled = true;
    } else if (!KeepsElementOrder(*v) || v->operands.size() != 1) {
      return std::nullopt;
    }
    v = v->operands[0];
  }
  if (!ReducesLastDimension(*v, false)) return std::nullopt;
  path.push_back(v);
  sum.reduce = v;
  sum.summed = v->operands[0];
  if (sum.summed->opcode == Opcode::kConvert && sum.summed->shape.type == hlo::ElementType::kF32) {
    path.push_back(sum.summed);
    sum.summed = sum.summed->operands[0];
  }
  sum.scale_bits = std::bit_cast<std::uint32_t>(static_cast<float>(scale));
  return sum;
}

bool IntermediatesArePrivate(const std::vector<const Instruction*>& covers, const Instruction* result,
                             const Users& users, const Instruction* root) {
  for (const Instruction* i : covers) {
    if (i == result) continue;
    if (i == root) return false;
    const auto it = users.find(i);
    if (it == users.end()) return false;
    for (const Instruction* user : it->second) {
      if (std::find(covers.begin(), covers.end(), user) == covers.end()) return false;
    }
  }
  return true;
}

}  // namespace systole::compiler::detail
