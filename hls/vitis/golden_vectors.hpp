// The file of golden vectors the Vitis testbench (systole_kernels_tb.cpp) checks the kernels
// against: cases produced by the golden model (tests/hls/golden_vectors.cpp writes them) for one
// configuration. Standard C++17 only, so that Vitis HLS's C simulation compiles it as is.
//
// Layout, all little-endian uint32 unless said otherwise:
//   "SYHV" magic, version 2, R, C, W, bf16 (0/1), element bytes, case count
//   each case: kind (1 = matmul+activate, 2 = vector, 3 = reduce), then
//     kind 1: rows k bias function scale shift zero_point lo hi,
//             X1 (rows x R elements), X2 (rows x R), WEIGHTS (R x C), BIAS (C accumulators),
//             Y (rows x C elements): Y = activate(X1·W, then += X2·W)
//     kind 2: rows broadcast bcol op math function shift lo hi,
//             A (rows x W), B (1 or rows x W), Y (rows x W)
//     kind 3: rows elems over_rows op scale shift,
//             SRC (rows x W), Y (rows x W over elements, 1 x W over rows)
//   elements take `element bytes` each (int8 or bf16 bits), accumulators 4.
#pragma once

#include <cstdint>
#include <cstring>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace systole::hls::vectors {

inline constexpr char kMagic[4] = {'S', 'Y', 'H', 'V'};
inline constexpr std::uint32_t kVersion = 2;
enum Kind : std::uint32_t { kMatmulActivate = 1, kVector = 2, kReduce = 3 };

struct Header {
  std::uint32_t rows = 0, cols = 0, width = 0, bf16 = 0, element_bytes = 0, cases = 0;
};

struct MatmulActivateCase {
  std::uint32_t rows = 0, k = 0, bias = 0, function = 0, scale = 0, shift = 0;
  std::int32_t zero_point = 0;
  std::uint32_t lo = 0, hi = 0;
  std::vector<std::uint8_t> x1, x2, weights, bias_row, y;  // raw little-endian bytes
};

struct VectorCase {
  std::uint32_t rows = 0, broadcast = 0, bcol = 0, op = 0, math = 0, function = 0, shift = 0, lo = 0, hi = 0;
  std::vector<std::uint8_t> a, b, y;
};

struct ReduceCase {
  std::uint32_t rows = 0, elems = 0, over_rows = 0, op = 0, scale = 0, shift = 0;
  std::vector<std::uint8_t> src, y;
};

inline void PutWord(std::ostream& out, std::uint32_t value) {
  const char bytes[4] = {static_cast<char>(value), static_cast<char>(value >> 8),
                         static_cast<char>(value >> 16), static_cast<char>(value >> 24)};
  out.write(bytes, 4);
}

inline void PutBytes(std::ostream& out, const std::vector<std::uint8_t>& bytes) {
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline std::uint32_t GetWord(std::istream& in) {
  unsigned char bytes[4];
  if (!in.read(reinterpret_cast<char*>(bytes), 4)) throw std::runtime_error("golden vectors: file ends early");
  return std::uint32_t{bytes[0]} | std::uint32_t{bytes[1]} << 8 | std::uint32_t{bytes[2]} << 16 |
         std::uint32_t{bytes[3]} << 24;
}

inline std::vector<std::uint8_t> GetBytes(std::istream& in, std::size_t count) {
  std::vector<std::uint8_t> bytes(count);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(count))) {
    throw std::runtime_error("golden vectors: file ends early");
  }
  return bytes;
}

inline void WriteHeader(std::ostream& out, const Header& header) {
  out.write(kMagic, 4);
  for (std::uint32_t word : {kVersion, header.rows, header.cols, header.width, header.bf16,
                             header.element_bytes, header.cases}) {
    PutWord(out, word);
  }
}

inline Header ReadHeader(std::istream& in) {
  char magic[4];
  if (!in.read(magic, 4) || std::memcmp(magic, kMagic, 4) != 0) {
    throw std::runtime_error("golden vectors: not a Systole vector file (magic)");
  }
  if (const std::uint32_t version = GetWord(in); version != kVersion) {
    throw std::runtime_error("golden vectors: version " + std::to_string(version) + ", expected " +
                             std::to_string(kVersion));
  }
  Header header;
  header.rows = GetWord(in);
  header.cols = GetWord(in);
  header.width = GetWord(in);
  header.bf16 = GetWord(in);
  header.element_bytes = GetWord(in);
  header.cases = GetWord(in);
  return header;
}

inline void Write(std::ostream& out, const MatmulActivateCase& c) {
  for (std::uint32_t word : {std::uint32_t{kMatmulActivate}, c.rows, c.k, c.bias, c.function,
                             c.scale, c.shift, static_cast<std::uint32_t>(c.zero_point), c.lo, c.hi}) {
    PutWord(out, word);
  }
  for (const auto* bytes : {&c.x1, &c.x2, &c.weights, &c.bias_row, &c.y}) PutBytes(out, *bytes);
}

inline void Write(std::ostream& out, const VectorCase& c) {
  for (std::uint32_t word : {std::uint32_t{kVector}, c.rows, c.broadcast, c.bcol, c.op, c.math,
                             c.function, c.shift, c.lo, c.hi}) {
    PutWord(out, word);
  }
  for (const auto* bytes : {&c.a, &c.b, &c.y}) PutBytes(out, *bytes);
}

inline void Write(std::ostream& out, const ReduceCase& c) {
  for (std::uint32_t word : {std::uint32_t{kReduce}, c.rows, c.elems, c.over_rows, c.op, c.scale, c.shift}) {
    PutWord(out, word);
  }
  for (const auto* bytes : {&c.src, &c.y}) PutBytes(out, *bytes);
}

// Reads the body of a kind-1 case (the kind word already read).
inline MatmulActivateCase ReadMatmulActivate(std::istream& in, const Header& h) {
  MatmulActivateCase c;
  c.rows = GetWord(in);
  c.k = GetWord(in);
  c.bias = GetWord(in);
  c.function = GetWord(in);
  c.scale = GetWord(in);
  c.shift = GetWord(in);
  c.zero_point = static_cast<std::int32_t>(GetWord(in));
  c.lo = GetWord(in);
  c.hi = GetWord(in);
  const std::size_t e = h.element_bytes;
  c.x1 = GetBytes(in, c.rows * h.rows * e);
  c.x2 = GetBytes(in, c.rows * h.rows * e);
  c.weights = GetBytes(in, std::size_t{h.rows} * h.cols * e);
  c.bias_row = GetBytes(in, std::size_t{h.cols} * 4);
  c.y = GetBytes(in, c.rows * h.cols * e);
  return c;
}

// Reads the body of a kind-2 case (the kind word already read).
inline VectorCase ReadVector(std::istream& in, const Header& h) {
  VectorCase c;
  c.rows = GetWord(in);
  c.broadcast = GetWord(in);
  c.bcol = GetWord(in);
  c.op = GetWord(in);
  c.math = GetWord(in);
  c.function = GetWord(in);
  c.shift = GetWord(in);
  c.lo = GetWord(in);
  c.hi = GetWord(in);
  const std::size_t e = h.element_bytes;
  c.a = GetBytes(in, c.rows * h.width * e);
  c.b = GetBytes(in, (c.broadcast != 0 ? 1 : c.rows) * h.width * e);
  c.y = GetBytes(in, c.rows * h.width * e);
  return c;
}

// Reads the body of a kind-3 case (the kind word already read).
inline ReduceCase ReadReduce(std::istream& in, const Header& h) {
  ReduceCase c;
  c.rows = GetWord(in);
  c.elems = GetWord(in);
  c.over_rows = GetWord(in);
  c.op = GetWord(in);
  c.scale = GetWord(in);
  c.shift = GetWord(in);
  const std::size_t e = h.element_bytes;
  c.src = GetBytes(in, c.rows * h.width * e);
  c.y = GetBytes(in, (c.over_rows != 0 ? 1 : c.rows) * h.width * e);
  return c;
}

}  // namespace systole::hls::vectors
