// MATMUL: directed cases (pop and reuse, accumulate and overwrite, K masking, accumulation
// order, wrapping) and randomized GEMMs tiled like a compiler would, checked against naive loops
// written here from docs/NUMERICS.md.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "tests/model/model_test_util.hpp"

namespace systole::model {
namespace {

using namespace testing;  // NOLINT: test helpers
using isa::MemSpace;

// ---- int8 ----------------------------------------------------------------------------------

TEST(MatmulInt8, PopReuseAccumulateOverwrite) {
  GoldenModel model(LoadConfig("tiny"));  // 4 x 4
  const std::vector<std::int8_t> x = {1, -2, 3, -4, 5, 6, -7, 8};  // two input rows
  const std::vector<std::int8_t> w1 = {1, 2, 3, 4, -1, -2, -3, -4, 5, 6, 7, 8, 0, 1, 0, -1};
  const std::vector<std::int8_t> w2 = {-128, 127, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
  WriteArray(model, kDataAddress, x);
  WriteArray(model, kDataAddress + 0x100, w1);
  WriteArray(model, kDataAddress + 0x200, w2);
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 2, 4),
                LoadWeights(kDataAddress + 0x100, 4, 4, 4),
                LoadWeights(kDataAddress + 0x200, 4, 4, 4), Sync(),
                Matmul(0, 0, 2, 4, /*pop=*/true, /*accumulate=*/false),   // x W1
                Matmul(0, 2, 2, 4, /*pop=*/false, /*accumulate=*/false),  // x W1 again
                Matmul(0, 2, 2, 4, /*pop=*/false, /*accumulate=*/true),   // + x W1
                Matmul(0, 4, 2, 4, /*pop=*/true, /*accumulate=*/false),   // x W2
                Halt()});
  auto product = [&](const std::vector<std::int8_t>& w, std::uint32_t i, std::uint32_t j) {
    std::int32_t sum = 0;
    for (std::uint32_t t = 0; t < 4; ++t) sum += x[i * 4 + t] * w[t * 4 + j];
    return sum;
  };
  for (std::uint32_t i = 0; i < 2; ++i) {
    for (std::uint32_t j = 0; j < 4; ++j) {
      EXPECT_EQ(static_cast<std::int32_t>(model.AccRow(i)[j]), product(w1, i, j));
      EXPECT_EQ(static_cast<std::int32_t>(model.AccRow(2 + i)[j]), 2 * product(w1, i, j));
      EXPECT_EQ(static_cast<std::int32_t>(model.AccRow(4 + i)[j]), product(w2, i, j));
    }
  }
  EXPECT_EQ(model.Counter("MACS"), 4u * 2 * 4 * 4);
  EXPECT_EQ(model.WeightFifoOccupancy(), 0u);
}

TEST(MatmulInt8, KMasksGarbageAndAccumulationWraps) {
  GoldenModel model(LoadConfig("tiny"));
  WriteArray<std::int8_t>(model, kDataAddress, {2, 3, 99, -99});  // elements 2, 3 are beyond K
  WriteArray<std::int8_t>(model, kDataAddress + 0x100, std::vector<std::int8_t>(16, 100));
  WriteArray<std::int32_t>(model, kDataAddress + 0x200, {INT32_MAX, INT32_MIN, 0, -1});
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4),
                Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress + 0x200, 16, 0, 0, 1, 4),
                LoadWeights(kDataAddress + 0x100, 4, 4, 4), Sync(),
                Matmul(0, 0, 1, 2, true, true), Halt()});
  const auto row = model.AccRow(0);
  EXPECT_EQ(static_cast<std::int32_t>(row[0]), INT32_MIN + 499);  // INT32_MAX + 500 wraps
  EXPECT_EQ(static_cast<std::int32_t>(row[1]), INT32_MIN + 500);
  EXPECT_EQ(static_cast<std::int32_t>(row[2]), 500);
  EXPECT_EQ(static_cast<std::int32_t>(row[3]), 499);
  EXPECT_EQ(model.Counter("MACS"), 1u * 2 * 4);
}

// ---- bf16 ----------------------------------------------------------------------------------

// One input row through one tile on `small` (16 x 16); returns ACC row 0 after the MATMUL.
std::vector<std::uint32_t> Bf16RowTimesTile(const std::vector<std::uint16_t>& x,
                                            const std::vector<std::uint16_t>& tile,
                                            std::uint64_t k, bool accumulate = false,
                                            std::uint32_t initial = 0) {
  GoldenModel model(LoadConfig("small"));
  WriteArray(model, kDataAddress, x);
  WriteArray(model, kDataAddress + 0x1000, tile);
  WriteArray(model, kDataAddress + 0x2000, std::vector<std::uint32_t>(16, initial));
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 32, 0, 0, 1, 16),
                Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress + 0x2000, 64, 0, 0, 1, 16),
                LoadWeights(kDataAddress + 0x1000, 32, 16, 16), Sync(),
                Matmul(0, 0, 1, k, true, accumulate), Halt()});
  const auto row = model.AccRow(0);
  return {row.begin(), row.end()};
}

TEST(MatmulBf16, SumsInRowOrder) {
  // Column 0: 2^24 + 1 - 2^24. In order t = 0, 1, 2 the 1 is lost to rounding: result 0.
  // Column 1 holds the same products in order 2^24 - 2^24 + 1: result 1.
  std::vector<std::uint16_t> x(16, 0x3F80);  // all ones
  std::vector<std::uint16_t> tile(256, 0);
  tile[0 * 16 + 0] = 0x4B80;  // 2^24
  tile[1 * 16 + 0] = 0x3F80;  // 1
  tile[2 * 16 + 0] = 0xCB80;  // -2^24
  tile[0 * 16 + 1] = 0x4B80;
  tile[1 * 16 + 1] = 0xCB80;
  tile[2 * 16 + 1] = 0x3F80;
  const auto acc = Bf16RowTimesTile(x, tile, 16);
  EXPECT_EQ(acc[0], 0x00000000u);
  EXPECT_EQ(acc[1], 0x3F800000u);
}

TEST(MatmulBf16, KMaskingReplacesInputsButNotTheTile) {
  std::vector<std::uint16_t> x(16, 0x7FC0);  // NaN garbage beyond K must not leak
  x[0] = 0x4000;                             // 2
  std::vector<std::uint16_t> tile(256, 0);
  tile[0 * 16 + 0] = 0x3F80;  // column 0: 2 * 1, then +0 * 0 ... = 2
  tile[0 * 16 + 1] = 0x3F80;
  tile[5 * 16 + 1] = 0x7F80;  // column 1: beyond K, +0 * inf = NaN still takes part
  tile[0 * 16 + 2] = 0xBF80;  // column 2: -2, then +0 * -1 = -0 changes nothing
  tile[7 * 16 + 2] = 0xBF80;
  const auto acc = Bf16RowTimesTile(x, tile, 1);
  EXPECT_EQ(acc[0], 0x40000000u);
  EXPECT_EQ(acc[1], 0x7FC00000u);
  EXPECT_EQ(acc[2], 0xC0000000u);
  EXPECT_EQ(acc[3], 0x00000000u);
}

TEST(MatmulBf16, SignedZerosFlushAndAccumulate) {
  std::vector<std::uint16_t> x(16, 0);
  x[0] = 0x0080;  // 2^-126, the smallest normal
  x[1] = 0x8080;
  std::vector<std::uint16_t> tile(256, 0);
  // Column 0: 2^-126 * 1.5 + (-2^-126) * 1 = 0.5 * 2^-126, a subnormal: flushed to +0.
  tile[0 * 16 + 0] = 0x3FC0;
  tile[1 * 16 + 0] = 0x3F80;
  // Column 1: 2^-126 * -1.5 + (-2^-126) * -1 = -0.5 * 2^-126 -> -0, then t = 2..15 add
  // +0 * +0 = +0, and (-0) + (+0) = +0.
  tile[0 * 16 + 1] = 0xBFC0;
  tile[1 * 16 + 1] = 0xBF80;
  // Column 2: the product 2^-126 * 0.5 underflows and is flushed before it is added.
  tile[0 * 16 + 2] = 0x3F00;
  // Column 4: 2^-126 * 1 + (-2^-126) * (-0.5): the subnormal product 2^-127 is flushed before
  // it is added, so the sum stays 2^-126 (it would be 1.5 * 2^-126 otherwise).
  tile[0 * 16 + 4] = 0x3F80;
  tile[1 * 16 + 4] = 0xBF00;
  const auto acc = Bf16RowTimesTile(x, tile, 16, /*accumulate=*/true, /*initial=*/0x00000001);
  // The accumulator's subnormal initial value is an input of the final add: flushed too.
  EXPECT_EQ(acc[0], 0x00000000u);
  EXPECT_EQ(acc[1], 0x00000000u);
  EXPECT_EQ(acc[2], 0x00000000u);
  EXPECT_EQ(acc[4], 0x00800000u);
  const auto overwritten = Bf16RowTimesTile(x, tile, 16, /*accumulate=*/false, 0x3F800000);
  EXPECT_EQ(overwritten[0], 0x00000000u);
  // Column 1's sum is -0 after t = 1 but +0 after the (+0) products of t = 2..15; only then does
  // adding it to a -0 accumulator give +0. Skipping zero products would leave -0 here.
  EXPECT_EQ(overwritten[1], 0x00000000u);
  const auto accumulated = Bf16RowTimesTile(x, tile, 16, /*accumulate=*/true, 0x80000000);
  EXPECT_EQ(accumulated[1], 0x00000000u);
  EXPECT_EQ(accumulated[3], 0x00000000u);
}

TEST(MatmulBf16, OverflowAndNanAreCanonical) {
  std::vector<std::uint16_t> x(16, 0);
  x[0] = 0x7F00;  // 2^127
  x[1] = 0x7F00;
  std::vector<std::uint16_t> tile(256, 0);
  tile[0 * 16 + 0] = 0x4000;  // 2^128: inf
  tile[0 * 16 + 1] = 0x3F80;  // 2^127 + 2^127 = inf
  tile[1 * 16 + 1] = 0x3F80;
  tile[0 * 16 + 2] = 0x4000;  // inf - inf = NaN
  tile[1 * 16 + 2] = 0xC000;
  tile[0 * 16 + 3] = 0xFFC1;  // a NaN weight with a payload
  const auto acc = Bf16RowTimesTile(x, tile, 16);
  EXPECT_EQ(acc[0], 0x7F800000u);
  EXPECT_EQ(acc[1], 0x7F800000u);
  EXPECT_EQ(acc[2], 0x7FC00000u);
  EXPECT_EQ(acc[3], 0x7FC00000u);
}

// ---- randomized GEMMs ----------------------------------------------------------------------

// C = A (M x K) x B (K x N), tiled the way a compiler would: the K blocks of A side by side in
// the UB, one accumulator block per N block, one weight tile per (K block, N block).
class GemmProgram {
 public:
  GemmProgram(const Config& config, std::uint32_t m, std::uint32_t k, std::uint32_t n)
      : r_(config.rows), c_(config.cols), e_(config.dtype == DType::kInt8 ? 1 : 2),
        m_(m), k_(k), n_(n) {}

  static constexpr std::uint64_t kA = 0x10000, kB = 0x40000, kC = 0x80000, kGarbage = 0xC0000;

  std::vector<isa::Instruction> Build() const {
    std::vector<isa::Instruction> program;
    const std::uint32_t k_blocks = (k_ + r_ - 1) / r_, n_blocks = (n_ + c_ - 1) / c_;
    // Garbage first, so that every element beyond K in the UB is junk that must be masked.
    program.push_back(
        Dma(Opcode::kLoad, MemSpace::kUb, kGarbage, 0, 0, 0, k_blocks * m_, std::max(r_, c_)));
    for (std::uint32_t kb = 0; kb < k_blocks; ++kb) {
      program.push_back(Dma(Opcode::kLoad, MemSpace::kUb, kA + kb * r_ * e_, k_ * e_, kb * m_, 0,
                            m_, std::min(r_, k_ - kb * r_)));
    }
    program.push_back(Sync());
    for (std::uint32_t nb = 0; nb < n_blocks; ++nb) {
      for (std::uint32_t kb = 0; kb < k_blocks; ++kb) {
        const std::uint32_t rows = std::min(r_, k_ - kb * r_), cols = std::min(c_, n_ - nb * c_);
        program.push_back(
            LoadWeights(kB + (std::uint64_t{kb} * r_ * n_ + nb * c_) * e_, n_ * e_, rows, cols));
        program.push_back(Matmul(kb * m_, nb * m_, m_, rows, true, kb > 0));
      }
    }
    program.push_back(Sync());
    for (std::uint32_t nb = 0; nb < n_blocks; ++nb) {
      program.push_back(Dma(Opcode::kStore, MemSpace::kAcc, kC + nb * c_ * 4, n_ * 4, nb * m_, 0,
                            m_, std::min(c_, n_ - nb * c_)));
    }
    program.push_back(Halt());
    return program;
  }

 private:
  std::uint32_t r_, c_, e_, m_, k_, n_;
};

// The definition, one output element at a time: per K block a column sum over all R tile rows
// (zero padded), then added to the previous blocks' result.
std::uint32_t ReferenceBf16(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b,
                            std::uint32_t r, std::uint32_t k, std::uint32_t n, std::uint32_t i,
                            std::uint32_t j) {
  std::uint32_t acc = 0;
  for (std::uint32_t kb = 0; kb * r < k; ++kb) {
    std::uint32_t psum = 0;
    for (std::uint32_t t = 0; t < r; ++t) {
      const std::uint32_t kk = kb * r + t;
      const std::uint32_t x = kk < k ? ref::FromBf16(a[i * k + kk]) : 0;
      const std::uint32_t w = kk < k ? ref::FromBf16(b[kk * n + j]) : 0;
      psum = ref::Add(psum, ref::Mul(x, w));
    }
    acc = kb == 0 ? psum : ref::Add(acc, psum);
  }
  return acc;
}

void RandomGemms(const Config& config, std::uint32_t cases, bool with_specials, std::uint32_t max_dim = 40) {
  std::mt19937_64 rng(TestSeed());
  const bool bf16 = config.dtype == DType::kBf16;
  for (std::uint32_t c = 0; c < cases; ++c) {
    const auto m = static_cast<std::uint32_t>(1 + rng() % max_dim);
    const auto k = static_cast<std::uint32_t>(1 + rng() % max_dim);
    const auto n = static_cast<std::uint32_t>(1 + rng() % max_dim);
    SCOPED_TRACE(fmt::format("case {}: M={} K={} N={}", c, m, k, n));
    GoldenModel model(config);
    std::vector<std::uint16_t> a16(m * k), b16(k * n), garbage16(64);
    std::vector<std::int8_t> a8(m * k), b8(k * n), garbage8(64);
    for (auto& v : garbage16) v = static_cast<std::uint16_t>(rng());
    for (auto& v : garbage8) v = static_cast<std::int8_t>(rng());
    if (bf16) {
      for (auto& v : a16) v = RandomBf16(rng, with_specials);
      for (auto& v : b16) v = RandomBf16(rng, with_specials);
      WriteArray(model, GemmProgram::kA, a16);
      WriteArray(model, GemmProgram::kB, b16);
      WriteArray(model, GemmProgram::kGarbage, garbage16);
    } else {
      for (auto& v : a8) v = static_cast<std::int8_t>(rng());
      for (auto& v : b8) v = static_cast<std::int8_t>(rng());
      WriteArray(model, GemmProgram::kA, a8);
      WriteArray(model, GemmProgram::kB, b8);
      WriteArray(model, GemmProgram::kGarbage, garbage8);
    }
    const LaunchResult result = RunProgram(model, GemmProgram(config, m, k, n).Build(), 0x1000);
    ASSERT_TRUE(result.Ok()) << result.message;
    const auto out = ReadArray<std::uint32_t>(model, GemmProgram::kC, std::size_t{m} * n);
    for (std::uint32_t i = 0; i < m; ++i) {
      for (std::uint32_t j = 0; j < n; ++j) {
        std::uint32_t expected = 0;
        if (bf16) {
          expected = ReferenceBf16(a16, b16, config.rows, k, n, i, j);
        } else {
          for (std::uint32_t t = 0; t < k; ++t) {
            expected += static_cast<std::uint32_t>(a8[i * k + t] * b8[t * n + j]);
          }
        }
        ASSERT_EQ(out[i * n + j], expected) << "C[" << i << "][" << j << "]";
      }
    }
    const std::uint64_t k_blocks = (k + config.rows - 1) / config.rows;
    const std::uint64_t n_blocks = (n + config.cols - 1) / config.cols;
    std::uint64_t macs = 0;  // rows x k x C per MATMUL
    for (std::uint64_t kb = 0; kb < k_blocks; ++kb) {
      macs += n_blocks * m * std::min<std::uint64_t>(config.rows, k - kb * config.rows) * config.cols;
    }
    EXPECT_EQ(model.Counter("MACS"), macs);
  }
}

TEST(RandomGemm, Int8) { RandomGemms(LoadConfig("small-int8"), 25, false); }
// tiny has only 64 accumulator rows: smaller shapes.
TEST(RandomGemm, Int8Tiny) { RandomGemms(LoadConfig("tiny"), 15, false, 8); }
TEST(RandomGemm, Bf16) { RandomGemms(LoadConfig("small"), 25, false); }
TEST(RandomGemm, Bf16WithSpecialValues) { RandomGemms(LoadConfig("small"), 25, true); }

// Non-square arrays: the UB row is max(R, C) wide, MATMUL reads the first R elements.
Config NonSquare(const char* base, std::uint32_t rows, std::uint32_t cols) {
  Config config = LoadConfig(base);
  config.name = fmt::format("{}-{}x{}", base, rows, cols);
  config.rows = rows;
  config.cols = cols;
  config.Validate();
  return config;
}
TEST(RandomGemm, Int8TallArray) { RandomGemms(NonSquare("small-int8", 16, 8), 10, false); }
TEST(RandomGemm, Bf16WideArray) { RandomGemms(NonSquare("small", 8, 16), 10, true); }

}  // namespace
}  // namespace systole::model
