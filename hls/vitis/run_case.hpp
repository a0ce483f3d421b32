// Runs one golden-vector case (golden_vectors.hpp) through the HLS top functions and returns
// what they wrote, as bytes to compare with the case's Y. Shared by the Vitis testbench and the
// GoogleTest C simulation, so both check the kernels the same way. Standard C++17.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "hls/tops/systole_kernels.hpp"
#include "hls/vitis/golden_vectors.hpp"

namespace systole::hls::vectors {

template <typename T>
std::vector<T> FromBytes(const std::vector<std::uint8_t>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

template <typename T>
std::vector<std::uint8_t> ToBytes(const std::vector<T>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Y = activate(X1·W, then += X2·W): systole_mxu twice, then systole_activate.
inline std::vector<std::uint8_t> RunTops(const MatmulActivateCase& c) {
  const auto x1 = FromBytes<Element>(c.x1), x2 = FromBytes<Element>(c.x2);
  const auto weights = FromBytes<Element>(c.weights);
  const auto bias = FromBytes<Accumulator>(c.bias_row);
  std::vector<Accumulator> acc(std::size_t{c.rows} * config::kCols);
  systole_mxu(x1.data(), weights.data(), acc.data(), c.rows, c.k, false);
  systole_mxu(x2.data(), weights.data(), acc.data(), c.rows, c.k, true);
  std::vector<Element> y(std::size_t{c.rows} * config::kCols);
  systole_activate(acc.data(), bias.data(), c.bias != 0, c.rows,
                   static_cast<std::uint8_t>(c.function), c.scale,
                   static_cast<std::uint8_t>(c.shift), static_cast<std::int8_t>(c.zero_point),
                   static_cast<std::uint16_t>(c.lo), static_cast<std::uint16_t>(c.hi), y.data());
  return ToBytes(y);
}

// Y = function(math(A op B)): systole_vector.
inline std::vector<std::uint8_t> RunTops(const VectorCase& c) {
  const auto a = FromBytes<Element>(c.a), b = FromBytes<Element>(c.b);
  std::vector<Element> y(std::size_t{c.rows} * config::kUbRowElems);
  systole_vector(a.data(), b.data(), c.broadcast != 0, c.bcol != 0, c.rows,
                 static_cast<std::uint8_t>(c.op), static_cast<std::uint8_t>(c.math),
                 static_cast<std::uint8_t>(c.function), static_cast<std::uint8_t>(c.shift),
                 static_cast<std::uint16_t>(c.lo), static_cast<std::uint16_t>(c.hi), y.data());
  return ToBytes(y);
}

// Y = max or sum of SRC over elements or rows: systole_reduce.
inline std::vector<std::uint8_t> RunTops(const ReduceCase& c) {
  const auto src = FromBytes<Element>(c.src);
  std::vector<Element> y(std::size_t{c.over_rows != 0 ? 1 : c.rows} * config::kUbRowElems);
  systole_reduce(src.data(), c.rows, c.elems, c.over_rows != 0, static_cast<std::uint8_t>(c.op),
                 c.scale, static_cast<std::uint8_t>(c.shift), y.data());
  return ToBytes(y);
}

}  // namespace systole::hls::vectors
