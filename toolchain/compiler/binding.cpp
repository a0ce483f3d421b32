// Column blocking of a binding's elements (model.hpp): the layout the compiler chose for a
// device tensor, applied by whoever moves values in and out of it (runtime/execute.cpp).
#include <stdexcept>

#include "toolchain/compiler/model.hpp"

namespace systole::compiler {

namespace {

// Calls f(plain index, blocked index) for every element of a column-blocked binding.
template <typename F>
void ForEachBlocked(const Binding& binding, const std::vector<std::uint64_t>& dims, F&& f) {
  std::uint64_t outer = 1, k = 1;
  for (std::size_t d = 0; d + 1 < dims.size(); ++d) (d < binding.block_outer ? outer : k) *= dims[d];
  const std::uint64_t n = dims.back(), cols = binding.block_columns, blocks = (n + cols - 1) / cols;
  for (std::uint64_t o = 0; o < outer; ++o) {
    for (std::uint64_t row = 0; row < k; ++row) {
      for (std::uint64_t col = 0; col < n; ++col) {
        f((o * k + row) * n + col, ((o * blocks + col / cols) * k + row) * cols + col % cols);
      }
    }
  }
}

std::uint64_t BlockedElements(const Binding& binding, const std::vector<std::uint64_t>& dims) {
  std::uint64_t rest = 1;
  for (std::size_t d = 0; d + 1 < dims.size(); ++d) rest *= dims[d];
  const std::uint64_t cols = binding.block_columns;
  return rest * ((dims.back() + cols - 1) / cols) * cols;
}

}  // namespace

std::vector<double> BlockColumns(const Binding& binding, std::vector<double> data,
                                 const std::vector<std::uint64_t>& dims) {
  if (binding.block_columns == 0 || dims.empty()) return data;
  std::vector<double> out(BlockedElements(binding, dims), 0.0);
  ForEachBlocked(binding, dims, [&](std::uint64_t plain, std::uint64_t blocked) { out[blocked] = data[plain]; });
  return out;
}

std::vector<double> UnblockColumns(const Binding& binding, std::vector<double> data,
                                   const std::vector<std::uint64_t>& dims) {
  if (binding.block_columns == 0 || dims.empty()) return data;
  if (data.size() != BlockedElements(binding, dims)) throw std::logic_error("column-blocked output of the wrong size");
  std::vector<double> out(data.size() / ((dims.back() + binding.block_columns - 1) / binding.block_columns) /
                          binding.block_columns * dims.back());
  ForEachBlocked(binding, dims, [&](std::uint64_t plain, std::uint64_t blocked) { out[plain] = data[blocked]; });
  return out;
}

}  // namespace systole::compiler
