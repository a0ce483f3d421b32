// Unified-buffer elements and row-range checks shared by the vector unit's instructions
// (vector_unit.cpp, reduce.cpp): rows are little-endian arrays of bf16 bits or int8.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>

namespace systole::model {

inline std::uint16_t LoadBf16(const std::uint8_t* row, std::uint64_t element) {
  return static_cast<std::uint16_t>(row[2 * element] | row[2 * element + 1] << 8);
}

inline void StoreBf16(std::uint8_t* row, std::uint64_t element, std::uint16_t bits) {
  row[2 * element] = static_cast<std::uint8_t>(bits);
  row[2 * element + 1] = static_cast<std::uint8_t>(bits >> 8);
}

inline std::int32_t LoadInt8(const std::uint8_t* row, std::uint64_t element) {
  return static_cast<std::int8_t>(row[element]);
}

inline void StoreInt8(std::uint8_t* row, std::uint64_t element, std::int8_t value) {
  row[element] = static_cast<std::uint8_t>(value);
}

// "what rows first..first+count are outside the limit rows", or nothing when they fit.
inline std::optional<std::string> RowsOutside(const char* what, std::uint64_t first,
                                              std::uint64_t count, std::uint64_t limit) {
  if (first + count <= limit) return std::nullopt;
  return fmt::format("{} rows {}..{} are outside the {} rows", what, first, first + count, limit);
}

}  // namespace systole::model
