#include "cli/tensor_text.hpp"

#include <fmt/core.h>

namespace systole::cli {
namespace {

void Format(const std::vector<double>& values, const std::vector<std::uint64_t>& shape,
            std::size_t dim, std::uint64_t offset, unsigned edge_items, unsigned indent,
            std::string& out) {
  if (dim == shape.size()) {
    out += fmt::format("{:g}", values[offset]);
    return;
  }
  std::uint64_t stride = 1;
  for (std::size_t d = dim + 1; d < shape.size(); ++d) stride *= shape[d];
  const std::uint64_t n = shape[dim];
  const bool elide = n > 2u * edge_items;
  const bool innermost = dim + 1 == shape.size();
  out += "[";
  for (std::uint64_t i = 0; i < n; ++i) {
    if (elide && i == edge_items) {
      out += innermost ? "..., " : fmt::format("...,\n{:{}}", "", indent + 1);
      i = n - edge_items;
    }
    Format(values, shape, dim + 1, offset + i * stride, edge_items, indent + 1, out);
    if (i + 1 < n) out += innermost ? ", " : fmt::format(",\n{:{}}", "", indent + 1);
  }
  out += "]";
}

}  // namespace

std::string FormatTensor(const std::vector<double>& values, const std::vector<std::uint64_t>& shape,
                         unsigned edge_items) {
  std::uint64_t count = 1;
  for (std::uint64_t dim : shape) count *= dim;
  if (count == 0) return "[]\n";
  std::string out;
  Format(values, shape, 0, 0, edge_items, 0, out);
  return out + "\n";
}

}  // namespace systole::cli
