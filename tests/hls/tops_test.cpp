// The HLS top functions of one configuration (built with -DSYSTOLE_HLS_CONFIG=NAME) against
// the golden model on the same configuration, through the ref device: random programs of
// LOAD, MATMUL (overwrite, then accumulate), ACTIVATE (every function, bias or not, random
// scale, shift, zero point and clamp bounds) and STORE, and of VECTOR (every op, broadcast or
// not), each compared byte for byte with the kernels' C simulation. Seeds are printed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hls/tops/systole_kernels.hpp"
#include "systole/device.hpp"
#include "toolchain/asm/assembler.hpp"
#include "tests/util/fp32_operands.hpp"
#include "tests/util/test_seed.hpp"

namespace systole::hls {
namespace {

constexpr unsigned R = config::kRows, C = config::kCols, W = config::kUbRowElems;
constexpr unsigned kElementBytes = sizeof(Element);
constexpr const char* kDtype = config::kBf16 ? "bf16" : "int8";
constexpr const char* kAccDtype = config::kBf16 ? "fp32" : "int32";

template <typename T>
std::vector<std::uint8_t> Bytes(const std::vector<T>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> Values(const std::vector<std::uint8_t>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// Random operands: int8 anywhere; bf16 from the fp32 mix (boundary values, nearby exponents,
// raw patterns) most of the time, with ordinary magnitudes often enough that most sums are
// finite.
class Operands {
 public:
  explicit Operands(std::uint64_t seed) : rng_(seed) {}
  std::mt19937_64& rng() { return rng_; }
  Element NextElement() {
    if constexpr (config::kBf16) {
      if (rng_() % 4 != 0) {
        // |x| in [2^-12, 2^12), either sign: sums of such products cancel and lose low bits,
        // so a wrong order of additions shows through the final rounding to bf16.
        const auto exponent = static_cast<std::uint32_t>(127 - 12 + rng_() % 24);
        return static_cast<Element>((rng_() % 2) << 15 | exponent << 7 | (rng_() & 0x7F));
      }
      return static_cast<Element>(test::RandomOperand(rng_, 0x3F800000) >> 16);
    } else {
      return static_cast<Element>(rng_());
    }
  }
  Accumulator NextAccumulator() {
    if constexpr (config::kBf16) return test::RandomOperand(rng_, 0x42000000);
    else return static_cast<Accumulator>(rng_());
  }
  std::vector<Element> Elements(std::size_t count) {
    std::vector<Element> values(count);
    for (Element& value : values) value = NextElement();
    return values;
  }
  std::uint32_t Below(std::uint32_t limit) { return static_cast<std::uint32_t>(rng_() % limit); }

 private:
  std::mt19937_64 rng_;
};


std::vector<std::uint8_t> RunOnRef(const std::string& source,
                                   const std::vector<std::vector<std::uint8_t>>& inputs) {
  static Device device = Device::Open("ref", LoadConfig(config::kName));
  const image::Program image = assembly::Assemble(source, "hls_tops_test.s");
  Program program = device.Load(image);
  for (std::size_t i = 0; i < inputs.size(); ++i) program.WriteInput(i, inputs[i]);
  EXPECT_TRUE(program.Launch().Wait(std::chrono::milliseconds(60000)));
  return program.ReadOutput(0);
}

TEST(HlsTops, MatmulAndActivateMatchTheGoldenModel) {
  Operands rand(test::Seed());
  for (int trial = 0; trial < 60; ++trial) {
    const unsigned rows = 1 + rand.Below(std::min(config::kAccRows / 2, 24u));
    const unsigned k = 1 + rand.Below(R);
    const bool bias = rand.Below(2) != 0;
    const auto function = static_cast<std::uint8_t>(rand.Below(4));
    std::uint32_t scale = 0;
    std::uint8_t shift = 0;
    std::int8_t zero_point = 0;
    std::uint16_t lo, hi;
    if constexpr (config::kBf16) {
      // Mostly scales near 1 and wide clamp bounds, so that most outputs stay finite and
      // unclamped and show every bit of the sums; sometimes any fp32 at all.
      const std::uint32_t choice = rand.Below(8);
      scale = choice == 0   ? 0u
              : choice == 1 ? test::RandomOperand(rand.rng(), 0x3F800000)
                            : (127 - 3 + rand.Below(7)) << 23 | rand.Below(1u << 23);
      lo = static_cast<std::uint16_t>(0xC000 | rand.Below(0x400));  // -2 .. -2^9
      hi = static_cast<std::uint16_t>(0x4000 | rand.Below(0x400));  // 2 .. 2^9
    } else {
      scale = rand.Below(4) == 0 ? 0u : static_cast<std::uint32_t>(static_cast<std::int32_t>(rand.Below(1u << 16)) - (1 << 15));
      shift = static_cast<std::uint8_t>(rand.Below(24));
      zero_point = static_cast<std::int8_t>(rand.Below(256));
      lo = static_cast<std::uint16_t>(-static_cast<int>(rand.Below(200)));
      hi = static_cast<std::uint16_t>(rand.Below(200));
    }
    SCOPED_TRACE(fmt::format("trial {}: rows {} k {} bias {} function {} scale 0x{:x} shift {} zp {}",
                             trial, rows, k, bias, function, scale, shift, zero_point));
    std::vector<Element> x1 = rand.Elements(std::size_t{rows} * R);
    const std::vector<Element> x2 = rand.Elements(std::size_t{rows} * R);
    std::vector<Element> weights = rand.Elements(std::size_t{R} * C);
    if (config::kBf16 && k >= 3 && trial % 3 == 0) {
      // Cancellation: products +B and -B at t = 0 and 1, small ones after them. Added in the
      // array's order the two cancel exactly before the small terms arrive; in any other order
      // the small terms are rounded against B, and the difference survives the bf16 output.
      for (unsigned i = 0; i < rows; ++i) {
        const auto big = static_cast<Element>(0x4480 | rand.Below(0x80));  // 1024 .. 2048
        x1[i * R] = x1[i * R + 1] = big;
        for (unsigned t = 2; t < R; ++t) x1[i * R + t] = static_cast<Element>(0x3D80 | rand.Below(0x200));
      }
      for (unsigned j = 0; j < C; ++j) {
        weights[j] = static_cast<Element>(0x3F80);       // +1
        weights[C + j] = static_cast<Element>(0xBF80);   // -1
      }
    }
    std::vector<Accumulator> bias_row(C);
    for (Accumulator& value : bias_row) value = rand.NextAccumulator();

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
        fmt::arg("rows", rows), fmt::arg("r", R), fmt::arg("c", C), fmt::arg("k", k),
        fmt::arg("xs", R * kElementBytes), fmt::arg("ws", C * kElementBytes),
        fmt::arg("bs", C * 4), fmt::arg("ys", C * kElementBytes), fmt::arg("brow", bias_acc_row),
        fmt::arg("yrow", 2 * rows),
        fmt::arg("bias", bias ? fmt::format(", bias, bias_row={}", bias_acc_row) : ""),
        fmt::arg("func", std::vector<std::string>{"none", "relu", "relu6", "clamp"}[function]),
        fmt::arg("scale", scale), fmt::arg("shift", shift), fmt::arg("zp", zero_point),
        fmt::arg("lo", lo), fmt::arg("hi", hi));
    const std::vector<Element> want = Values<Element>(
        RunOnRef(source, {Bytes(x1), Bytes(x2), Bytes(weights), Bytes(bias_row)}));

    std::vector<Accumulator> acc(std::size_t{rows} * C);
    systole_mxu(x1.data(), weights.data(), acc.data(), rows, k, false);
    systole_mxu(x2.data(), weights.data(), acc.data(), rows, k, true);
    std::vector<Element> got(std::size_t{rows} * C);
    systole_activate(acc.data(), bias_row.data(), bias, rows, function, scale, shift, zero_point,
                     lo, hi, got.data());
    ASSERT_EQ(got, want);
  }
}

TEST(HlsTops, VectorMatchesTheGoldenModel) {
  Operands rand(test::Seed());
  for (int trial = 0; trial < 60; ++trial) {
    const unsigned rows = 1 + rand.Below(24);
    const bool broadcast = rand.Below(2) != 0;
    const auto op = static_cast<std::uint8_t>(rand.Below(5));
    const auto function = static_cast<std::uint8_t>(rand.Below(4));
    const auto shift = static_cast<std::uint8_t>(config::kBf16 ? 0 : rand.Below(10));
    const auto lo = static_cast<std::uint16_t>(config::kBf16 ? 0xC000 | rand.Below(0x100)
                                                             : 0x10000 - rand.Below(100));
    const auto hi = static_cast<std::uint16_t>(config::kBf16 ? 0x4000 | rand.Below(0x100)
                                                             : rand.Below(100));
    SCOPED_TRACE(fmt::format("trial {}: rows {} op {} function {} bcast {}", trial, rows, op,
                             function, broadcast));
    const unsigned b_rows = broadcast ? 1 : rows;
    const std::vector<Element> a = rand.Elements(std::size_t{rows} * W);
    const std::vector<Element> b = rand.Elements(std::size_t{b_rows} * W);
    const std::string source = fmt::format(
        R"(.config {cfg}
.input  A, at=0x10000, dtype={dt}, shape={rows}x{w}
.input  B, at=0x20000, dtype={dt}, shape={brows}x{w}
.output Y, at=0x40000, dtype={dt}, shape={rows}x{w}
load mem=ub, dram=A, stride={s}, row=0, rows={rows}, elems={w}
load mem=ub, dram=B, stride={s}, row={rows}, rows={brows}, elems={w}, signal=vector
vector op={op}, a=0, b={rows}, dst={dst}, rows={rows}{bcast}, func={func}, shift={shift}, lo={lo}, hi={hi}, wait=load, signal=store
store mem=ub, dram=Y, stride={s}, row={dst}, rows={rows}, elems={w}, wait=vector
halt
)",
        fmt::arg("cfg", config::kName), fmt::arg("dt", kDtype), fmt::arg("rows", rows),
        fmt::arg("brows", b_rows), fmt::arg("w", W), fmt::arg("s", W * kElementBytes),
        fmt::arg("dst", rows + b_rows), fmt::arg("bcast", broadcast ? ", bcast" : ""),
        fmt::arg("op", std::vector<std::string>{"add", "sub", "mul", "max", "min"}[op]),
        fmt::arg("func", std::vector<std::string>{"none", "relu", "relu6", "clamp"}[function]),
        fmt::arg("shift", shift), fmt::arg("lo", lo), fmt::arg("hi", hi));
    const std::vector<Element> want = Values<Element>(RunOnRef(source, {Bytes(a), Bytes(b)}));
    std::vector<Element> got(std::size_t{rows} * W);
    systole_vector(a.data(), b.data(), broadcast, rows, op, function, shift, lo, hi, got.data());
    ASSERT_EQ(got, want);
  }
}

}  // namespace
}  // namespace systole::hls
