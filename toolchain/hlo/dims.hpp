#pragma once
// Dimension-number helpers shared by the interpreter's kernels and shape inference.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace systole::hlo::detail {

// A dimension number or extent, already checked to be non-negative, as an index.
inline std::size_t U(std::int64_t value) { return static_cast<std::size_t>(value); }

// Whether dimension number d is one of dims.
inline bool Contains(const std::vector<std::int64_t>& dims, std::int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

}  // namespace systole::hlo::detail
