// Random cases for the HLS tops of one configuration (-DSYSTOLE_HLS_CONFIG=NAME), each with the
// golden model's answer: a program of LOAD, MATMUL (overwrite, then accumulate), ACTIVATE and
// STORE, of LOAD, VECTOR and STORE, or of LOAD, REDUCE and STORE, run on the ref device. tops_test.cpp checks the kernels'
// C simulation against them; golden_vectors.cpp writes them for the Vitis testbench.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hls/tops/systole_kernels.hpp"
#include "hls/vitis/golden_vectors.hpp"
#include "systole/device.hpp"
#include "tests/util/fp32_operands.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::hls::test_cases {

inline constexpr unsigned R = config::kRows, C = config::kCols, W = config::kUbRowElems;
inline constexpr unsigned kElementBytes = sizeof(Element);
inline constexpr const char* kDtype = config::kBf16 ? "bf16" : "int8";
inline constexpr const char* kAccDtype = config::kBf16 ? "fp32" : "int32";
inline const std::vector<std::string> kFunctionNames = {"none", "relu", "relu6", "clamp"};
inline const std::vector<std::string> kOpNames = {"add", "sub", "mul", "max", "min", "pass"};
inline const std::vector<std::string> kMathNames = {"none", "exp", "recip", "rsqrt", "tanh",
                                                    "sigmoid", "gelu_tanh", "gelu_erf", "log"};

inline vectors::Header HeaderOfThisConfig(std::uint32_t cases) {
  return {R, C, W, config::kBf16 ? 1u : 0u, kElementBytes, cases};
}

// Random operands: int8 anywhere; bf16 mostly of ordinary magnitude, sometimes from the fp32
// mix (boundary values, nearby exponents, raw patterns: NaN, infinity, subnormals).
class Operands {
 public:
  explicit Operands(std::uint64_t seed) : rng_(seed) {}
  std::mt19937_64& rng() { return rng_; }
  std::uint32_t Below(std::uint32_t limit) { return static_cast<std::uint32_t>(rng_() % limit); }
  std::uint32_t Element() {
    if constexpr (!config::kBf16) return static_cast<std::uint8_t>(rng_());
    if (rng_() % 4 != 0) {
      // |x| in [2^-12, 2^12), either sign.
      const auto exponent = static_cast<std::uint32_t>(127 - 12 + rng_() % 24);
      return static_cast<std::uint32_t>((rng_() % 2) << 15 | exponent << 7 | (rng_() & 0x7F));
    }
    return test::RandomOperand(rng_, 0x3F800000) >> 16;
  }
  std::uint32_t Accumulator() {
    if constexpr (config::kBf16) return test::RandomOperand(rng_, 0x42000000);
    return static_cast<std::uint32_t>(rng_());
  }
  // `count` elements as little-endian bytes.
  std::vector<std::uint8_t> Elements(std::size_t count) {
    std::vector<std::uint8_t> bytes;
    for (std::size_t i = 0; i < count; ++i) Append(bytes, Element(), kElementBytes);
    return bytes;
  }
  static void Append(std::vector<std::uint8_t>& bytes, std::uint32_t value, unsigned width) {
    for (unsigned b = 0; b < width; ++b) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * b)));
  }

 private:
  std::mt19937_64 rng_;
};

inline std::vector<std::uint8_t> RunOnRef(const std::string& source,
                                          const std::vector<std::vector<std::uint8_t>>& inputs) {
  static Device device = Device::Open("ref", LoadConfig(config::kName));
  Program program = device.Load(assembly::Assemble(source, "hls_case.s"));
  for (std::size_t i = 0; i < inputs.size(); ++i) program.WriteInput(i, inputs[i]);
  if (!program.Launch().Wait(std::chrono::milliseconds(60000))) {
    throw std::runtime_error("ref device: no interrupt within 60 s");
  }
  return program.ReadOutput(0);
}

inline void SetElement(std::vector<std::uint8_t>& bytes, std::size_t index, std::uint32_t value) {
  for (unsigned b = 0; b < kElementBytes; ++b) {
    bytes[index * kElementBytes + b] = static_cast<std::uint8_t>(value >> (8 * b));
  }
}

// A MATMUL, MATMUL accumulate, ACTIVATE case with random fields and the golden model's Y.
inline vectors::MatmulActivateCase MatmulActivate(Operands& rand, int trial) {
  vectors::MatmulActivateCase c;
  c.rows = 1 + rand.Below(std::min(config::kAccRows / 2, 24u));
  c.k = 1 + rand.Below(R);
  c.bias = rand.Below(2);
  c.function = rand.Below(4);
  if constexpr (config::kBf16) {
    // Mostly scales near 1 and wide clamp bounds, so that most outputs stay finite and
    // unclamped and show every bit of the sums; sometimes any fp32 at all.
    const std::uint32_t choice = rand.Below(8);
    c.scale = choice == 0   ? 0u
              : choice == 1 ? test::RandomOperand(rand.rng(), 0x3F800000)
                            : (127 - 3 + rand.Below(7)) << 23 | rand.Below(1u << 23);
    c.lo = 0xC000 | rand.Below(0x400);  // -2 .. -2^9
    c.hi = 0x4000 | rand.Below(0x400);  // 2 .. 2^9
  } else {
    c.scale = rand.Below(4) == 0 ? 0u : static_cast<std::uint32_t>(static_cast<std::int32_t>(rand.Below(1u << 16)) - (1 << 15));
    c.shift = rand.Below(24);
    c.zero_point = static_cast<std::int8_t>(rand.Below(256));
    c.lo = static_cast<std::uint16_t>(-static_cast<int>(rand.Below(200)));
    c.hi = rand.Below(200);
  }
  c.x1 = rand.Elements(std::size_t{c.rows} * R);
  c.x2 = rand.Elements(std::size_t{c.rows} * R);
  c.weights = rand.Elements(std::size_t{R} * C);
  if (config::kBf16 && c.k >= 3 && trial % 3 == 0) {
    // Cancellation: products +B and -B at t = 0 and 1, small ones after them. Added in the
    // array's order the two cancel exactly before the small terms arrive; in any other order
    // the small terms are rounded against B, and the difference survives the bf16 output.
    for (std::size_t i = 0; i < c.rows; ++i) {
      const std::uint32_t big = 0x4480 | rand.Below(0x80);  // 1024 .. 2048
      SetElement(c.x1, i * R, big);
      SetElement(c.x1, i * R + 1, big);
      for (unsigned t = 2; t < R; ++t) SetElement(c.x1, i * R + t, 0x3D80 | rand.Below(0x200));
    }
    for (unsigned j = 0; j < C; ++j) {
      SetElement(c.weights, j, 0x3F80);      // +1
      SetElement(c.weights, C + j, 0xBF80);  // -1
    }
  }
  for (unsigned j = 0; j < C; ++j) Operands::Append(c.bias_row, rand.Accumulator(), 4);

  const unsigned bias_acc_row = config::kAccRows - 1;
  const std::string source = fmt::format(
      R"(.config {cfg}
.input  X1, at=0x10000, dtype={dt}, shape={rows}x{r}
.input  X2, at=0x20000, dtype={dt}, shape={rows}x{r}
.input  WT, at=0x30000, dtype={dt}, shape={r}x{c}
.input  B,  at=0x38000, dtype={adt}, shape=1x{c}
.output Y,  at=0x40000, dtype={dt}, shape={rows}x{c}
load mem=ub, dram=X1, stride={xs}, row=0, rows={rows}, elems={r}, signal=mxu
load mem=ub, dram=X2, stride={xs}, row={rows}, rows={rows}, elems={r}, signal=mxu
load mem=acc, dram=B, stride={bs}, row={brow}, rows=1, elems={c}, signal=vector
load_weights dram=WT, stride={ws}, rows={r}, cols={c}
matmul ub=0, acc=0, rows={rows}, k={k}, pop, wait=load
matmul ub={rows}, acc=0, rows={rows}, k={k}, accumulate, wait=load, signal=vector
activate acc=0, ub={yrow}, rows={rows}{bias}, func={func}, scale={scale}, shift={shift}, zp={zp}, lo={lo}, hi={hi}, wait=mxu|load, signal=store
store mem=ub, dram=Y, stride={ys}, row={yrow}, rows={rows}, elems={c}, wait=vector
halt
)",
      fmt::arg("cfg", config::kName), fmt::arg("dt", kDtype), fmt::arg("adt", kAccDtype),
      fmt::arg("rows", c.rows), fmt::arg("r", R), fmt::arg("c", C), fmt::arg("k", c.k),
      fmt::arg("xs", R * kElementBytes), fmt::arg("ws", C * kElementBytes), fmt::arg("bs", C * 4),
      fmt::arg("ys", C * kElementBytes), fmt::arg("brow", bias_acc_row),
      fmt::arg("yrow", 2 * c.rows),
      fmt::arg("bias", c.bias != 0 ? fmt::format(", bias, bias_row={}", bias_acc_row) : ""),
      fmt::arg("func", kFunctionNames[c.function]), fmt::arg("scale", c.scale),
      fmt::arg("shift", c.shift), fmt::arg("zp", c.zero_point), fmt::arg("lo", c.lo),
      fmt::arg("hi", c.hi));
  c.y = RunOnRef(source, {c.x1, c.x2, c.weights, c.bias_row});
  return c;
}

// A VECTOR case with random fields (every op, broadcast, bcol, and on bf16 every math function)
// and the golden model's Y.
inline vectors::VectorCase Vector(Operands& rand) {
  vectors::VectorCase c;
  c.rows = 1 + rand.Below(24);
  c.broadcast = rand.Below(2);
  c.bcol = rand.Below(3) == 0 ? 1 : 0;
  c.op = rand.Below(static_cast<std::uint32_t>(kOpNames.size()));
  c.math = config::kBf16 && rand.Below(2) == 0 ? rand.Below(static_cast<std::uint32_t>(kMathNames.size())) : 0;
  c.function = rand.Below(4);
  c.shift = config::kBf16 ? 0 : rand.Below(10);
  c.lo = config::kBf16 ? 0xC000 | rand.Below(0x100) : (0x10000 - rand.Below(100)) & 0xFFFF;  // int16 -99..0
  c.hi = config::kBf16 ? 0x4000 | rand.Below(0x100) : rand.Below(100);
  const unsigned b_rows = c.broadcast != 0 ? 1 : c.rows;
  c.a = rand.Elements(std::size_t{c.rows} * W);
  c.b = rand.Elements(std::size_t{b_rows} * W);
  const std::string source = fmt::format(
      R"(.config {cfg}
.input  A, at=0x10000, dtype={dt}, shape={rows}x{w}
.input  B, at=0x20000, dtype={dt}, shape={brows}x{w}
.output Y, at=0x40000, dtype={dt}, shape={rows}x{w}
load mem=ub, dram=A, stride={s}, row=0, rows={rows}, elems={w}
load mem=ub, dram=B, stride={s}, row={rows}, rows={brows}, elems={w}, signal=vector
vector op={op}, a=0, b={rows}, dst={dst}, rows={rows}{bcast}{bcol}, math={math}, func={func}, shift={shift}, lo={lo}, hi={hi}, wait=load, signal=store
store mem=ub, dram=Y, stride={s}, row={dst}, rows={rows}, elems={w}, wait=vector
halt
)",
      fmt::arg("cfg", config::kName), fmt::arg("dt", kDtype), fmt::arg("rows", c.rows),
      fmt::arg("brows", b_rows), fmt::arg("w", W), fmt::arg("s", W * kElementBytes),
      fmt::arg("dst", c.rows + b_rows), fmt::arg("bcast", c.broadcast != 0 ? ", bcast" : ""),
      fmt::arg("bcol", c.bcol != 0 ? ", bcol" : ""), fmt::arg("math", kMathNames[c.math]),
      fmt::arg("op", kOpNames[c.op]), fmt::arg("func", kFunctionNames[c.function]),
      fmt::arg("shift", c.shift), fmt::arg("lo", c.lo), fmt::arg("hi", c.hi));
  c.y = RunOnRef(source, {c.a, c.b});
  return c;
}

// A REDUCE case with random fields (max and sum, over elements and over rows, any element
// count, random scale and shift) and the golden model's Y.
inline vectors::ReduceCase Reduce(Operands& rand) {
  vectors::ReduceCase c;
  c.rows = 1 + rand.Below(24);
  c.elems = 1 + rand.Below(W);
  c.over_rows = rand.Below(2);
  c.op = rand.Below(2);
  if constexpr (config::kBf16) {
    c.scale = rand.Below(4) == 0 ? 0u : (127 - 5 + rand.Below(6)) << 23 | rand.Below(1u << 23);
  } else {
    c.scale = rand.Below(4) == 0 ? 0u : rand.Below(1u << 15);
    c.shift = rand.Below(16);
  }
  c.src = rand.Elements(std::size_t{c.rows} * W);
  const unsigned y_rows = c.over_rows != 0 ? 1 : c.rows;
  const std::string source = fmt::format(
      R"(.config {cfg}
.input  S, at=0x10000, dtype={dt}, shape={rows}x{w}
.output Y, at=0x40000, dtype={dt}, shape={yrows}x{w}
load mem=ub, dram=S, stride={s}, row=0, rows={rows}, elems={w}, signal=vector
reduce op={op}, over={over}, src=0, dst={dst}, rows={rows}, elems={elems}, scale={scale}, shift={shift}, wait=load, signal=store
store mem=ub, dram=Y, stride={s}, row={dst}, rows={yrows}, elems={w}, wait=vector
halt
)",
      fmt::arg("cfg", config::kName), fmt::arg("dt", kDtype), fmt::arg("rows", c.rows),
      fmt::arg("yrows", y_rows), fmt::arg("w", W), fmt::arg("s", W * kElementBytes),
      fmt::arg("dst", c.rows), fmt::arg("op", c.op == 0 ? "max" : "sum"),
      fmt::arg("over", c.over_rows != 0 ? "rows" : "elems"), fmt::arg("elems", c.elems),
      fmt::arg("scale", c.scale), fmt::arg("shift", c.shift));
  c.y = RunOnRef(source, {c.src});
  return c;
}

}  // namespace systole::hls::test_cases
