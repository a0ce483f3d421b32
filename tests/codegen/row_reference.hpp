// REDUCE along one row as docs/ISA.md defines it, for the references of the row kernels
// (softmax_test.cpp, layer_norm_test.cpp): a row of n values laid out as k = ⌈n / W⌉ UB rows.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/codegen/codegen_test_util.hpp"

namespace systole::codegen::testing {

// REDUCE over values in order: max from the first, sum from +0 (fp32); then the sum's scale
// (fp32 bits, 0 means 1) and the rounding to bf16, widened back to fp32 bits.
inline std::uint32_t Combine(bool max, const std::vector<std::uint32_t>& values, std::uint32_t scale_bits = 0) {
  std::uint32_t acc = max ? values.front() : 0u;
  for (std::size_t j = max ? 1 : 0; j < values.size(); ++j) {
    acc = max ? model::MaxF32(acc, values[j]) : model::AddF32(acc, values[j]);
  }
  if (!max) acc = model::MulF32(acc, model::EffectiveScale(scale_bits, true));
  return Widen(numerics::F32ToBf16(acc));
}

// A row of fp32-widened bf16 values reduced as the row kernels do: directly when it fits one UB
// row, else over its k UB rows into W partials (missing elements `identity`, each partial
// rounded to bf16, no scale), then over those with the scale.
inline std::uint32_t ReduceRow(bool max, const std::vector<std::uint32_t>& row, std::uint64_t width,
                               std::uint32_t identity, std::uint32_t scale_bits = 0) {
  const std::uint64_t n = row.size(), k = (n + width - 1) / width;
  if (k == 1) return Combine(max, row, scale_bits);
  std::vector<std::uint32_t> partials;
  for (std::uint64_t j = 0; j < width; ++j) {
    std::vector<std::uint32_t> column;
    for (std::uint64_t u = 0; u < k; ++u) column.push_back(u * width + j < n ? row[u * width + j] : identity);
    partials.push_back(Combine(max, column));
  }
  return Combine(max, partials, scale_bits);
}

}  // namespace systole::codegen::testing
