// ACCVEC in the golden model (sim/model/accvec.cpp, AccOpF32 in numerics.hpp) against its
// reference, the host HLO interpreter's f32 elementwise ops (toolchain/hlo, which its own tests
// hold bit-identical to JAX on the CPU): every op on special operand pairs and on random bit
// patterns, compared bit for bit — NaN payloads and signs included; whole instructions (row,
// bcast, bcol and immediate forms, in place) against the same interpreter results; the faults
// in docs/ISA.md's order; the cycle estimate's formula.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <bit>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>

#include "sim/model/numerics.hpp"
#include "tests/model/model_test_util.hpp"
#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/npy/npy.hpp"
#include "toolchain/hlo/parser.hpp"

namespace systole::model::testing {
namespace {

using isa::AccOp;
using ref::Bits;
using ref::F;

constexpr AccOp kOps[] = {AccOp::kAdd, AccOp::kSub, AccOp::kMul, AccOp::kMax,
                          AccOp::kMin, AccOp::kDiv, AccOp::kSqrt};

std::string_view HloName(AccOp op) {
  switch (op) {
    case AccOp::kAdd: return "add";
    case AccOp::kSub: return "subtract";
    case AccOp::kMul: return "multiply";
    case AccOp::kMax: return "maximum";
    case AccOp::kMin: return "minimum";
    case AccOp::kDiv: return "divide";
    case AccOp::kSqrt: return "sqrt";
  }
  return "";
}

// The interpreter's result of `op` on f32 arrays given as bit patterns (b unused for sqrt).
std::vector<std::uint32_t> Interpreter(AccOp op, const std::vector<std::uint32_t>& a,
                                       const std::vector<std::uint32_t>& b) {
  const std::size_t n = a.size();
  const bool unary = op == AccOp::kSqrt;
  const std::string text =
      unary ? fmt::format("HloModule accvec\nENTRY main {{\n  a = f32[{0}] parameter(0)\n"
                          "  ROOT r = f32[{0}] sqrt(a)\n}}\n", n)
            : fmt::format("HloModule accvec\nENTRY main {{\n  a = f32[{0}] parameter(0)\n"
                          "  b = f32[{0}] parameter(1)\n  ROOT r = f32[{0}] {1}(a, b)\n}}\n",
                          n, HloName(op));
  const hlo::Module module = hlo::ParseModule(text);
  std::vector<hlo::Literal> arguments;
  for (const auto* bits : {&a, &b}) {
    if (unary && bits == &b) break;
    hlo::Literal literal(module.entry->instructions[arguments.size()]->shape);
    for (std::size_t i = 0; i < n; ++i) literal.values[i] = static_cast<double>(F((*bits)[i]));
    arguments.push_back(std::move(literal));
  }
  const hlo::Literal result = hlo::Interpreter(module).Run(arguments);
  std::vector<std::uint32_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = Bits(static_cast<float>(result.values[i]));
  return out;
}

// Operands that reach every rule: specials, subnormals, under- and overflowing magnitudes,
// NaNs with payloads, ties, random bits.
std::uint32_t Operand(std::mt19937_64& rng) {
  static constexpr std::uint32_t kSpecial[] = {
      0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
      0x80800000, 0x3F800000, 0xBF800000, 0x3F800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
      0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFF812345, 0x7F800001};
  const auto sign = static_cast<std::uint32_t>(rng() & 1) << 31;
  switch (rng() % 6) {
    case 0: return kSpecial[rng() % std::size(kSpecial)];
    case 1: return static_cast<std::uint32_t>(rng());
    case 2: return sign | (static_cast<std::uint32_t>(rng()) & 0x007FFFFF);
    case 3: {
      const auto exponent = static_cast<std::uint32_t>(rng() % 2 ? 1 + rng() % 40 : 214 + rng() % 40);
      return sign | exponent << 23 | (static_cast<std::uint32_t>(rng()) & 0x7FFFFF);
    }
    default: {
      const auto exponent = static_cast<std::uint32_t>(120 + rng() % 16);
      return sign | exponent << 23 | (static_cast<std::uint32_t>(rng()) & 0x7FFFFF);
    }
  }
}

TEST(AccVecNumerics, SpecialPairsMatchTheInterpreter) {
  std::vector<std::uint32_t> values;
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    for (std::uint32_t magnitude : {0x00000000u, 0x00000001u, 0x00000002u, 0x003FFFFFu, 0x00400000u,
                                    0x007FFFFFu, 0x00800000u, 0x00800001u, 0x0B800000u, 0x1F800000u,
                                    0x3F000000u, 0x3F800000u, 0x3F800001u, 0x3FC00000u, 0x40000000u,
                                    0x5F800000u, 0x7F000000u, 0x7F7FFFFFu, 0x7F800000u, 0x7F800001u,
                                    0x7FA00000u, 0x7FC00000u, 0x7FC00001u, 0x7FFFFFFFu}) {
      values.push_back(sign | magnitude);
    }
  }
  std::vector<std::uint32_t> a, b;
  for (std::uint32_t x : values) {
    for (std::uint32_t y : values) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  for (AccOp op : kOps) {
    const std::vector<std::uint32_t> want = Interpreter(op, a, b);
    int reported = 0;
    for (std::size_t i = 0; i < a.size() && reported < 8; ++i) {
      const std::uint32_t got = AccOpF32(op, a[i], b[i]);
      if (got == want[i]) continue;
      ++reported;
      ADD_FAILURE() << fmt::format("{}(0x{:08x}, 0x{:08x}): model 0x{:08x}, interpreter 0x{:08x}",
                                   HloName(op), a[i], b[i], got, want[i]);
    }
  }
}

TEST(AccVecNumerics, RandomBitPatternsMatchTheInterpreter) {
  const std::uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  constexpr std::size_t kPairs = 200000;
  for (AccOp op : kOps) {
    std::vector<std::uint32_t> a(kPairs), b(kPairs);
    for (std::size_t i = 0; i < kPairs; ++i) {
      a[i] = Operand(rng);
      b[i] = Operand(rng);
    }
    const std::vector<std::uint32_t> want = Interpreter(op, a, b);
    int reported = 0;
    for (std::size_t i = 0; i < kPairs && reported < 8; ++i) {
      const std::uint32_t got = AccOpF32(op, a[i], b[i]);
      if (got == want[i]) continue;
      ++reported;
      ADD_FAILURE() << fmt::format("{}(0x{:08x}, 0x{:08x}): model 0x{:08x}, interpreter 0x{:08x}",
                                   HloName(op), a[i], b[i], got, want[i]);
    }
  }
}

// ---- against JAX itself ------------------------------------------------------------------
// tests/model/data/accvec_jax.npz (accvec_jax.py): JAX's float32 results on the CPU for every
// pair of 48 special values and 2 000 random pairs. ACCVEC follows the interpreter, and JAX's
// CPU backend differs from it in two documented ways (docs/NUMERICS.md, "ACCVEC"): it flushes
// subnormal inputs and results to zero (FTZ/DAZ), and its maximum/minimum return a NaN operand
// itself (payload kept, not quieted) and prefer +0 (max) / −0 (min) of two zeros. Every other
// pair must be bit-identical, NaN payloads and default NaNs included; the counts of the two
// exceptions are printed.
TEST(AccVecJax, BitIdenticalOutsideFlushingAndMaxMinRules) {
  const std::vector<npy::Array> arrays =
      npy::ReadNpz(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests/model/data/accvec_jax.npz");
  ASSERT_EQ(arrays.size(), 2 + std::size(kOps));
  const auto bits = [](const npy::Array& array, std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(array.values[i]));
  };
  const auto subnormal = [](std::uint32_t x) { return (x & 0x7F800000u) == 0 && (x & 0x7FFFFFu) != 0; };
  const std::size_t n = arrays[0].values.size();
  for (std::size_t k = 0; k < std::size(kOps); ++k) {
    const AccOp op = kOps[k];
    const bool minmax = op == AccOp::kMax || op == AccOp::kMin;
    std::size_t same = 0, flushed = 0, minmax_nan = 0, minmax_zeros = 0;
    int reported = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t a = bits(arrays[0], i), b = bits(arrays[1], i), jax = bits(arrays[2 + k], i);
      const std::uint32_t got = AccOpF32(op, a, b);
      const bool reads_b = op != AccOp::kSqrt;
      if (subnormal(a) || (reads_b && subnormal(b)) || subnormal(got)) {
        ++flushed;  // JAX's FTZ/DAZ: no claim
        continue;
      }
      if (minmax && (IsNanF32(a) || IsNanF32(b))) {
        EXPECT_TRUE(IsNanF32(jax) && got == kCanonicalNanF32) << std::hex << a << " " << b;
        ++minmax_nan;
        continue;
      }
      if (minmax && (a & 0x7FFFFFFFu) == 0 && (b & 0x7FFFFFFFu) == 0 && a != b) {
        EXPECT_EQ(got, b);  // the interpreter's a > b ? a : b
        EXPECT_EQ(jax, op == AccOp::kMax ? 0u : kF32SignBit);
        ++minmax_zeros;
        continue;
      }
      if (got == jax) {
        ++same;
      } else if (reported++ < 8) {
        ADD_FAILURE() << fmt::format("{}(0x{:08x}, 0x{:08x}): model 0x{:08x}, JAX 0x{:08x}", HloName(op), a, b,
                                     got, jax);
      }
    }
    std::cout << fmt::format("[ jax      ] {}: {} bit-identical, {} with a subnormal (JAX flushes), "
                             "{} NaN max/min, {} signed-zero max/min\n",
                             HloName(op), same, flushed, minmax_nan, minmax_zeros);
    EXPECT_GT(same, n / 3);
  }
}

// ---- whole instructions ------------------------------------------------------------------

isa::Instruction AccVec(AccOp op, std::uint64_t a, std::uint64_t b, std::uint64_t dst,
                        std::uint64_t rows, bool bcast, bool bcol, bool scalar = false,
                        std::uint32_t imm = 0) {
  return Insn(Opcode::kAccVec, {{Field::kOp, static_cast<std::uint64_t>(op)}, {Field::kA, a},
                                {Field::kB, b}, {Field::kDst, dst}, {Field::kRows, rows},
                                {Field::kBcast, bcast ? 1u : 0u}, {Field::kBcol, bcol ? 1u : 0u},
                                {Field::kScalar, scalar ? 1u : 0u}, {Field::kImm, imm}});
}

// LOAD rows 0..2n-1 of the accumulators, run `insn`, STORE `rows` rows from its destination.
std::vector<std::uint32_t> RunOnAccumulators(GoldenModel& model, const std::vector<std::uint32_t>& data,
                                             const isa::Instruction& insn) {
  const std::uint32_t cols = model.config().cols;
  const std::uint64_t rows = data.size() / cols, out = kDataAddress + 0x100000;
  WriteArray(model, kDataAddress, data);
  RunOk(model, {Dma(Opcode::kLoad, isa::MemSpace::kAcc, kDataAddress, 4 * cols, 0, 0, rows, cols),
                Sync(), insn, Sync(),
                Dma(Opcode::kStore, isa::MemSpace::kAcc, out, 4 * cols, insn[Field::kDst], 0,
                    insn[Field::kRows], cols),
                Halt()});
  return ReadArray<std::uint32_t>(model, out, insn[Field::kRows] * cols);
}

TEST(AccVecInstruction, EveryFormOfOperandBMatchesTheInterpreter) {
  const std::uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  GoldenModel model(LoadConfig("small"));
  const std::uint32_t cols = model.config().cols;
  constexpr std::uint64_t kRows = 6;
  for (AccOp op : kOps) {
    for (int form = 0; form < 5; ++form) {  // row, bcast, bcol, bcast + bcol, immediate
      SCOPED_TRACE(fmt::format("{} form {}", HloName(op), form));
      std::vector<std::uint32_t> data(2 * kRows * cols);
      for (auto& v : data) v = Operand(rng);
      const std::uint32_t imm = Operand(rng);
      const bool bcast = form == 1 || form == 3, bcol = form == 2 || form == 3;
      // In place on a (dst = a = 0), b from row kRows on.
      const isa::Instruction insn = AccVec(op, 0, kRows, 0, kRows, bcast, bcol, form == 4, imm);
      const std::vector<std::uint32_t> got = RunOnAccumulators(model, data, insn);
      std::vector<std::uint32_t> a(kRows * cols), b(kRows * cols);
      for (std::uint64_t i = 0; i < kRows; ++i) {
        for (std::uint32_t j = 0; j < cols; ++j) {
          a[i * cols + j] = data[i * cols + j];
          const std::uint64_t row = kRows + (bcast ? 0 : i);
          b[i * cols + j] = form == 4 ? imm : data[row * cols + (bcol ? 0 : j)];
        }
      }
      EXPECT_EQ(got, Interpreter(op, a, b));
    }
  }
}

// Rows in order, each read before it is written: with dst one row above a, every row sees the
// result of the row before (a running sum down the rows).
TEST(AccVecInstruction, RowsRunInOrderSoOverlapsChain) {
  GoldenModel model(LoadConfig("small"));
  const std::uint32_t cols = model.config().cols;
  std::vector<std::uint32_t> data(4 * cols, Bits(1.0f));
  const std::vector<std::uint32_t> got =
      RunOnAccumulators(model, data, AccVec(AccOp::kAdd, 0, 0, 1, 3, true, false));
  for (std::uint32_t j = 0; j < cols; ++j) {
    EXPECT_EQ(F(got[0 * cols + j]), 2.0f);  // row 1 = row 0 + row 0
    EXPECT_EQ(F(got[1 * cols + j]), 3.0f);  // row 2 = row 1 (just written) + row 0
    EXPECT_EQ(F(got[2 * cols + j]), 4.0f);
  }
}

// SGD with momentum in two instructions per term: m' = mu·m + g, w' = w − lr·m'.
TEST(AccVecInstruction, SgdMomentumStepMatchesFloat32) {
  GoldenModel model(LoadConfig("small"));
  const std::uint32_t cols = model.config().cols;
  const float mu = 0.9f, lr = 0.05f;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<std::uint32_t> data(3 * cols);  // rows: w, m, g
  for (auto& v : data) v = Bits(dist(rng));
  WriteArray(model, kDataAddress, data);
  RunOk(model, {Dma(Opcode::kLoad, isa::MemSpace::kAcc, kDataAddress, 4 * cols, 0, 0, 3, cols), Sync(),
                AccVec(AccOp::kMul, 1, 0, 1, 1, false, false, true, Bits(mu)), Sync(),   // m = mu·m
                AccVec(AccOp::kAdd, 1, 2, 1, 1, false, false), Sync(),                  // m += g
                AccVec(AccOp::kMul, 1, 0, 3, 1, false, false, true, Bits(lr)), Sync(),  // t = lr·m
                AccVec(AccOp::kSub, 0, 3, 0, 1, false, false), Sync(),                  // w -= t
                Dma(Opcode::kStore, isa::MemSpace::kAcc, kDataAddress + 0x1000, 4 * cols, 0, 0, 2, cols),
                Halt()});
  const auto got = ReadArray<std::uint32_t>(model, kDataAddress + 0x1000, 2 * cols);
  for (std::uint32_t j = 0; j < cols; ++j) {
    volatile float m = F(data[cols + j]) * mu;  // volatile: one rounding per operation
    m = m + F(data[2 * cols + j]);
    volatile float t = lr * m;
    volatile float w = F(data[j]) - t;
    EXPECT_EQ(got[cols + j], Bits(m));
    EXPECT_EQ(got[j], Bits(w));
  }
}

// ---- faults, in docs/ISA.md's order ------------------------------------------------------

TEST(AccVecFaults, InTheDocumentedOrder) {
  struct Case {
    const char* config;
    isa::Instruction insn;
    ErrorCode code;
  };
  GoldenModel small(LoadConfig("small"));
  const std::uint64_t acc_rows = small.AccRows();
  const Case cases[] = {
      // int8 accumulators first, even with every row out of range.
      {"tiny", AccVec(AccOp::kAdd, 0, 0, 0, 1, false, false), ErrorCode::kIllegalField},
      {"small-int8", AccVec(AccOp::kAdd, acc_rows, acc_rows, acc_rows, 1, false, false), ErrorCode::kIllegalField},
      // then scalar with bcast or bcol, before the ranges
      {"small", AccVec(AccOp::kMul, acc_rows, 0, 0, 1, true, false, true), ErrorCode::kIllegalField},
      {"small", AccVec(AccOp::kMul, 0, 0, 0, 1, false, true, true), ErrorCode::kIllegalField},
      // then a, b, dst
      {"small", AccVec(AccOp::kAdd, acc_rows - 1, 0, 0, 2, false, false), ErrorCode::kAccRange},
      {"small", AccVec(AccOp::kAdd, 0, acc_rows - 1, 0, 2, false, false), ErrorCode::kAccRange},
      {"small", AccVec(AccOp::kAdd, 0, 0, acc_rows - 1, 2, false, false), ErrorCode::kAccRange},
      // bcast reads one b row; scalar and sqrt none
      {"small", AccVec(AccOp::kAdd, 0, acc_rows - 1, 0, 2, true, false), ErrorCode::kNone},
      {"small", AccVec(AccOp::kAdd, 0, acc_rows, 0, 2, false, false, true), ErrorCode::kNone},
      {"small", AccVec(AccOp::kSqrt, 0, acc_rows, 0, 2, true, true), ErrorCode::kNone},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{}: a={} b={} dst={} rows={}", c.config, c.insn[Field::kA],
                             c.insn[Field::kB], c.insn[Field::kDst], c.insn[Field::kRows]));
    GoldenModel model(LoadConfig(c.config));
    const LaunchResult result = RunProgram(model, {c.insn, Halt()});
    EXPECT_EQ(result.error, c.code) << result.message;
    if (c.code != ErrorCode::kNone) EXPECT_EQ(result.fault_pc, kProgramAddress);
  }
}

TEST(AccVecTiming, EstimateFollowsTheRowSchedule) {
  // Overlapped rows: a row every read (two with a b row, one for scalar), then the last row's
  // data, operation and write; done one cycle after the last write.
  EXPECT_EQ(TimingModel::AccVecCycles(AccVec(AccOp::kAdd, 0, 0, 0, 10, false, false)), 10u * 2 + 4);
  EXPECT_EQ(TimingModel::AccVecCycles(AccVec(AccOp::kMul, 0, 0, 0, 10, false, false, true)), 10u * 1 + 4);
  EXPECT_EQ(TimingModel::AccVecCycles(AccVec(AccOp::kSub, 20, 40, 0, 10, true, true)), 10u * 2 + 4);
  // One row at a time: read a, read b, data, operation, write; div and sqrt take 29 cycles to
  // compute and never overlap.
  EXPECT_EQ(TimingModel::AccVecCycles(AccVec(AccOp::kDiv, 0, 0, 0, 3, false, false)), 3u * 33 + 1);
  EXPECT_EQ(TimingModel::AccVecCycles(AccVec(AccOp::kSqrt, 0, 0, 0, 3, false, false)), 3u * 32 + 1);
}

TEST(AccVecTiming, RowsOverlapUnlessAWriteRunsAheadOfAReadOrTheOpIterates) {
  using M = TimingModel;
  EXPECT_TRUE(M::AccVecRowsOverlap(AccVec(AccOp::kAdd, 8, 16, 8, 8, false, false)));   // in place
  EXPECT_TRUE(M::AccVecRowsOverlap(AccVec(AccOp::kAdd, 8, 16, 4, 8, false, false)));   // dst below a
  EXPECT_TRUE(M::AccVecRowsOverlap(AccVec(AccOp::kAdd, 8, 16, 12, 4, false, false)));  // dst − a = 4
  for (std::uint64_t ahead = 1; ahead < 4; ++ahead) {
    SCOPED_TRACE(ahead);
    EXPECT_FALSE(M::AccVecRowsOverlap(AccVec(AccOp::kAdd, 8, 32, 8 + ahead, 8, false, false)));  // on a
    EXPECT_FALSE(M::AccVecRowsOverlap(AccVec(AccOp::kAdd, 0, 8, 8 + ahead, 8, false, false)));   // on b
    EXPECT_TRUE(M::AccVecRowsOverlap(AccVec(AccOp::kMul, 0, 8, 8 + ahead, 8, false, false, true)));  // b unread
    EXPECT_EQ(M::AccVecCycles(AccVec(AccOp::kAdd, 8, 32, 8 + ahead, 8, false, false)), 8u * 5 + 1);
  }
  // A bcast b row inside dst's rows is rewritten while later rows read it.
  EXPECT_FALSE(M::AccVecRowsOverlap(AccVec(AccOp::kMul, 0, 20, 16, 8, true, true)));
  EXPECT_TRUE(M::AccVecRowsOverlap(AccVec(AccOp::kMul, 0, 24, 16, 8, true, true)));
  EXPECT_FALSE(M::AccVecRowsOverlap(AccVec(AccOp::kDiv, 0, 8, 16, 8, false, false)));
  EXPECT_FALSE(M::AccVecRowsOverlap(AccVec(AccOp::kSqrt, 0, 8, 16, 8, false, false)));
}

}  // namespace
}  // namespace systole::model::testing
