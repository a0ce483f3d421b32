// Prints an array for people: nested brackets like NumPy, long dimensions elided.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace systole::cli {

// `values` are row-major with `shape`. Dimensions longer than `edge_items * 2` show their first
// and last `edge_items` entries around "...".
std::string FormatTensor(const std::vector<double>& values, const std::vector<std::uint64_t>& shape,
                         unsigned edge_items = 4);

}  // namespace systole::cli
