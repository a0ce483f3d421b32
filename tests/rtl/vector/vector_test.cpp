// systole_vector_unit against the golden model (sim/model/vector_unit.cpp), bit for bit, in one
// configuration per executable (VECTOR_CONFIG, VECTOR_MODEL): directed ACTIVATE, VECTOR and
// POOL cases for every function, operation and option, overlapping source and destination
// rows, throughput with every grant given, and randomized instruction sequences under random
// grant throttling. Each check compares the whole unified buffer after each instruction.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <optional>
#include <random>

#include VECTOR_HEADER
#include "tests/rtl/vector/vector_bench.hpp"

namespace systole::rtl::vector_test {
namespace {

using Model = VECTOR_MODEL;
using isa::ActFunc;
using isa::VecOp;

constexpr std::uint64_t kWindow = 192;  // UB rows the tests fill and use

// One suite name per configuration (VECTOR_SUITE, e.g. VectorTiny), so test names stay unique.
class VECTOR_SUITE : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = test::Seed();
    wave_ = std::make_unique<test::Waveform>(true);
    bench_ = std::make_unique<Bench<Model>>(VECTOR_CONFIG, seed_, wave_->Path());
    bench_->RandomFill(0, kWindow);
  }
  void TearDown() override {
    if (!HasFailure()) bench_->CheckRam(0, kWindow);
    std::cout << "[ checked  ] " << bench_->instructions() << " instructions, "
              << bench_->writes() << " row writes, " << bench_->reads() << " row reads, "
              << bench_->sim().Cycle() << " cycles\n";
    bench_.reset();
    wave_.reset();
  }

  std::uint64_t R(std::uint64_t n) { return bench_->rng()() % n; }

  Grants RandomGrants() {
    static constexpr double kLevels[] = {1.0, 0.8, 0.5, 0.25};
    auto& rng = bench_->rng();
    return {kLevels[rng() % 4], kLevels[rng() % 4], kLevels[rng() % 4]};
  }

  std::uint64_t Scale() {
    auto& rng = bench_->rng();
    if (bench_->bf16()) {
      switch (rng() % 6) {
        case 0: return 0;
        case 1: return 0x3F800000;  // 1.0
        case 2: return 0x3E800000;  // 0.25
        case 3: return bench_->RandomF32();
        default: return 0x3C000000 | (rng() & 0x3FFFFFF);  // 2^-7 .. 2^0 roughly
      }
    }
    switch (rng() % 5) {
      case 0: return 0;
      case 1: return 1;
      case 2: return rng() % 2048;
      case 3: return static_cast<std::uint32_t>(static_cast<std::int32_t>(rng() % 4096) - 2048);
      default: return static_cast<std::uint32_t>(rng());
    }
  }
  std::uint64_t Shift(bool wide) {
    auto& rng = bench_->rng();
    if (rng() % 8 == 0) return 62;  // (bf16 ignores the shift: it varies all the same)
    return wide ? rng() % 40 : rng() % 10;
  }
  std::uint64_t Bound() {
    auto& rng = bench_->rng();
    if (bench_->bf16()) return bench_->RandomBf16();
    return static_cast<std::uint16_t>(rng() % 4 == 0 ? rng() : rng() % 256 - 128);
  }

  isa::Instruction Activate(ActFunc func, bool bias, std::uint64_t acc, std::uint64_t ub,
                            std::uint64_t rows) {
    auto& rng = bench_->rng();
    std::uint64_t lo = Bound(), hi = Bound();
    if (rng() % 2 && !bench_->bf16() && static_cast<std::int16_t>(lo) > static_cast<std::int16_t>(hi)) {
      std::swap(lo, hi);
    }
    return isa::MakeInstruction(
        Opcode::kActivate,
        {{Field::kAcc, acc}, {Field::kUb, ub}, {Field::kRows, rows},
         {Field::kFunc, static_cast<std::uint64_t>(func)}, {Field::kBias, bias ? 1u : 0u},
         {Field::kBiasRow, rng() % bench_->acc_rows()}, {Field::kScale, Scale()},
         {Field::kShift, Shift(true)},
         {Field::kZeroPoint, static_cast<std::uint64_t>(static_cast<std::int64_t>(rng() % 256) - 128)},
         {Field::kLo, lo}, {Field::kHi, hi}});
  }

  isa::Instruction Vector(VecOp op, ActFunc func, bool bcast, std::uint64_t a, std::uint64_t b,
                          std::uint64_t dst, std::uint64_t rows, bool bcol = false,
                          isa::VecMath math = isa::VecMath::kNone) {
    return isa::MakeInstruction(
        Opcode::kVector,
        {{Field::kOp, static_cast<std::uint64_t>(op)}, {Field::kFunc, static_cast<std::uint64_t>(func)},
         {Field::kBcast, bcast ? 1u : 0u}, {Field::kA, a}, {Field::kB, b}, {Field::kDst, dst},
         {Field::kRows, rows}, {Field::kShift, Shift(false)}, {Field::kLo, Bound()},
         {Field::kHi, Bound()}, {Field::kBcol, bcol ? 1u : 0u},
         {Field::kMath, static_cast<std::uint64_t>(math)}});
  }

  isa::Instruction Pool(bool sum, std::uint64_t src, std::uint64_t dst, std::uint64_t in_w,
                        std::uint64_t out_h, std::uint64_t out_w, std::uint64_t win_h,
                        std::uint64_t win_w, std::uint64_t stride_h, std::uint64_t stride_w) {
    return isa::MakeInstruction(
        Opcode::kPool,
        {{Field::kOp, sum ? 1u : 0u}, {Field::kSrc, src}, {Field::kDst, dst}, {Field::kInW, in_w},
         {Field::kOutH, out_h}, {Field::kOutW, out_w}, {Field::kWinH, win_h},
         {Field::kWinW, win_w}, {Field::kStrideH, stride_h}, {Field::kStrideW, stride_w},
         {Field::kScale, Scale()}, {Field::kShift, Shift(true)}});
  }

  isa::Instruction Reduce(bool sum, bool over_rows, std::uint64_t src, std::uint64_t dst,
                          std::uint64_t rows, std::uint64_t elems) {
    return isa::MakeInstruction(
        Opcode::kReduce,
        {{Field::kOp, sum ? 1u : 0u}, {Field::kOver, over_rows ? 1u : 0u}, {Field::kSrc, src},
         {Field::kDst, dst}, {Field::kRows, rows}, {Field::kElems, elems},
         {Field::kScale, Scale()}, {Field::kShift, Shift(true)}});
  }

  // A random legal instruction of any kind, mostly inside the filled window, often with
  // overlapping operands and destination.
  isa::Instruction RandomInstruction() {
    auto& rng = bench_->rng();
    const auto pick = [&](std::uint64_t limit) { return rng() % limit; };
    switch (rng() % 4) {
      case 3: {  // REDUCE, its destination often over its source
        const std::uint64_t rows = 1 + pick(24);
        const std::uint64_t src = pick(kWindow - rows + 1);
        const std::uint64_t dst = pick(3) == 0 ? src + pick(rows) : pick(kWindow - rows + 1);
        return Reduce(pick(2) != 0, pick(2) != 0, src, dst, rows, 1 + pick(bench_->width()));
      }
      case 0: {
        const std::uint64_t rows = 1 + pick(std::min<std::uint64_t>(24, bench_->acc_rows()));
        return Activate(static_cast<ActFunc>(pick(4)), pick(2) != 0,
                        pick(bench_->acc_rows() - rows + 1), pick(kWindow - rows + 1), rows);
      }
      case 1: {
        const std::uint64_t rows = 1 + pick(24);
        const bool bcast = pick(4) == 0;
        const std::uint64_t a = pick(kWindow - rows + 1);
        const std::uint64_t b = pick(kWindow - rows + 1);
        std::uint64_t dst = pick(kWindow - rows + 1);
        switch (pick(4)) {  // overlap: in place, or shifted by one row either way
          case 0: dst = std::min(a + pick(3), kWindow - rows) - (a > 0 ? pick(2) : 0); break;
          case 1: dst = std::min(b + pick(3), kWindow - rows) - (b > 0 ? pick(2) : 0); break;
          default: break;
        }
        // A transcendental function now and then (bf16: a row takes up to ~75 cycles).
        const auto math = bench_->bf16() && pick(4) == 0
                              ? static_cast<isa::VecMath>(1 + pick(isa::kNumVecMath - 1))
                              : isa::VecMath::kNone;
        return Vector(static_cast<VecOp>(pick(6)), static_cast<ActFunc>(pick(4)), bcast, a, b,
                      dst, rows, pick(4) == 0, math);
      }
      default: {
        const std::uint64_t win_h = 1 + pick(3), win_w = 1 + pick(3);
        const std::uint64_t stride_h = 1 + pick(3), stride_w = 1 + pick(3);
        const std::uint64_t out_h = 1 + pick(3), out_w = 1 + pick(4);
        const std::uint64_t in_w = (out_w - 1) * stride_w + win_w + pick(3);
        const std::uint64_t span = ((out_h - 1) * stride_h + win_h - 1) * in_w + in_w;
        const std::uint64_t src = pick(kWindow - span);
        const std::uint64_t dst = pick(3) == 0 ? src + pick(span) : pick(kWindow - out_h * out_w);
        return Pool(pick(2) != 0, src, std::min(dst, kWindow - out_h * out_w), in_w, out_h, out_w,
                    win_h, win_w, stride_h, stride_w);
      }
    }
  }

  std::uint64_t seed_ = 0;
  std::unique_ptr<test::Waveform> wave_;
  std::unique_ptr<Bench<Model>> bench_;
};

TEST_F(VECTOR_SUITE, ActivateEveryFunctionWithAndWithoutBias) {
  for (int func = 0; func < 4; ++func) {
    for (int bias = 0; bias < 2; ++bias) {
      for (int rep = 0; rep < 3; ++rep) {
        const std::uint64_t rows = 1 + R(12);
        bench_->Run(Activate(static_cast<ActFunc>(func), bias != 0, R(16),
                             R(100), rows),
                    RandomGrants());
      }
    }
  }
}

TEST_F(VECTOR_SUITE, VectorEveryOperationAndFunction) {
  for (int op = 0; op < 5; ++op) {
    for (int func = 0; func < 4; ++func) {
      for (int bcast = 0; bcast < 2; ++bcast) {
        bench_->Run(Vector(static_cast<VecOp>(op), static_cast<ActFunc>(func), bcast != 0, 0, 40,
                           100 + R(50), 1 + R(20)),
                    RandomGrants());
      }
    }
  }
}

// op=pass (b not read: its row may lie outside the buffer), bcol (element 0 of b's row for
// every element) alone and with bcast, and — bf16 — every transcendental function after each
// kind of operation, in place and shifted over its operand.
TEST_F(VECTOR_SUITE, VectorPassBroadcastColumnAndMath) {
  for (int op = 0; op < 6; ++op) {
    for (int mode = 0; mode < 3; ++mode) {
      bench_->Run(Vector(static_cast<VecOp>(op), static_cast<ActFunc>(R(4)), mode == 2, 0, 40,
                         100 + R(50), 1 + R(12), mode != 0),
                  RandomGrants());
    }
  }
  bench_->Run(Vector(VecOp::kPass, ActFunc::kNone, false, 3, 0xFFFFFF, 120, 5));
  if (!bench_->bf16()) return;  // int8 has no math (the sequencer faults it)
  for (unsigned math = 1; math < isa::kNumVecMath; ++math) {
    for (const VecOp op : {VecOp::kSub, VecOp::kMul, VecOp::kPass, VecOp::kMax}) {
      bench_->Run(Vector(op, static_cast<ActFunc>(R(4)), false, R(20), 40 + R(20), 100 + R(50),
                         1 + R(6), op == VecOp::kSub, static_cast<isa::VecMath>(math)),
                  RandomGrants());
    }
    bench_->Run(Vector(VecOp::kPass, ActFunc::kNone, false, 60, 0, 61, 8, false,
                       static_cast<isa::VecMath>(math)),
                RandomGrants());
  }
}

// REDUCE along rows (one element per cycle, element order) and across rows (a POOL window),
// max and sum with a scale, every element count from 1 to W, in place too.
TEST_F(VECTOR_SUITE, ReduceAlongAndAcrossRows) {
  for (int sum = 0; sum < 2; ++sum) {
    for (int over_rows = 0; over_rows < 2; ++over_rows) {
      for (std::uint64_t elems = 1; elems <= bench_->width(); elems += 1 + R(3)) {
        bench_->Run(Reduce(sum != 0, over_rows != 0, R(40), 100 + R(40), 1 + R(20), elems),
                    RandomGrants());
      }
      bench_->Run(Reduce(sum != 0, over_rows != 0, 10, 10, 12, bench_->width()), RandomGrants());
    }
  }
}

TEST_F(VECTOR_SUITE, VectorOverlappingDestination) {
  // In place, and shifted one row forward or back over either operand: each row must read the
  // rows the earlier rows of the same instruction wrote.
  for (const auto& [a, b, dst, bcast] :
       {std::tuple{10, 60, 10, false}, std::tuple{10, 60, 11, false}, std::tuple{10, 60, 9, false},
        std::tuple{10, 60, 61, false}, std::tuple{10, 60, 59, false}, std::tuple{10, 60, 60, false},
        std::tuple{10, 20, 11, true}, std::tuple{10, 20, 19, true}, std::tuple{10, 10, 11, false},
        std::tuple{30, 30, 29, false}}) {
    for (int op : {0, 2}) {
      bench_->Run(Vector(static_cast<VecOp>(op), ActFunc::kNone, bcast, a, b, dst, 16),
                  RandomGrants());
      bench_->Run(Vector(static_cast<VecOp>(op), ActFunc::kNone, bcast, a, b, dst, 16));
    }
  }
}

TEST_F(VECTOR_SUITE, PoolMaxAndSumShapes) {
  struct Shape { int in_w, out_h, out_w, win_h, win_w, stride_h, stride_w; };
  for (const Shape& s : {Shape{1, 1, 1, 1, 1, 1, 1}, Shape{4, 2, 2, 2, 2, 2, 2},
                         Shape{5, 3, 3, 3, 3, 1, 1}, Shape{7, 2, 3, 3, 2, 2, 3},
                         Shape{8, 1, 8, 1, 1, 1, 1}, Shape{3, 4, 1, 1, 3, 1, 1}}) {
    for (int sum = 0; sum < 2; ++sum) {
      bench_->Run(Pool(sum != 0, 5, 120, s.in_w, s.out_h, s.out_w, s.win_h, s.win_w, s.stride_h,
                       s.stride_w),
                  RandomGrants());
      // Destination overlapping the source: later windows read earlier outputs.
      bench_->Run(Pool(sum != 0, 5, 6, s.in_w, s.out_h, s.out_w, s.win_h, s.win_w, s.stride_h,
                       s.stride_w),
                  RandomGrants());
    }
  }
}

TEST_F(VECTOR_SUITE, ThroughputWithEveryGrant) {
  const std::uint64_t rows = std::min<std::uint64_t>(64, bench_->acc_rows());
  const std::uint64_t act = bench_->Run(Activate(ActFunc::kRelu, true, 0, 0, rows));
  const std::uint64_t vec = bench_->Run(Vector(VecOp::kAdd, ActFunc::kNone, false, 0, 64, 128, 64));
  const std::uint64_t pool = bench_->Run(Pool(true, 0, 100, 8, 4, 4, 2, 2, 2, 2));
  std::cout << "[ cycles   ] activate " << rows << " rows: " << act << ", vector 64 rows: " << vec
            << ", pool 64 reads: " << pool << "\n";
  EXPECT_LE(act, rows + 8);     // one row per cycle
  EXPECT_LE(vec, 2 * 64 + 8);   // two reads per row on one port
  EXPECT_LE(pool, 64 + 8);      // one read per window element
}

// ---- ACCVEC: fp32 on accumulator rows (bf16 configurations) --------------------------------

// fp32 operands that reach every path of the IEEE units: the special values, subnormals of
// every size, products and quotients that underflow or overflow, NaNs with payloads (quiet and
// signalling), values one rounding step apart, and plain random bit patterns.
std::uint32_t IeeeOperand(std::mt19937_64& rng) {
  static constexpr std::uint32_t kSpecial[] = {
      0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,
      0x00800000, 0x80800000, 0x00800001, 0x3F800000, 0xBF800000, 0x3F800001, 0x3FFFFFFF,
      0x40000000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000, 0x7F800000, 0xFF800000, 0x7FC00000,
      0xFFC00000, 0x7FC12345, 0xFF812345, 0x7F800001, 0x34000000, 0x33800000, 0x0B000000};
  const auto sign = static_cast<std::uint32_t>(rng() & 1) << 31;
  switch (rng() % 8) {
    case 0: return kSpecial[rng() % std::size(kSpecial)];
    case 1: return static_cast<std::uint32_t>(rng());
    case 2: return sign | (static_cast<std::uint32_t>(rng()) & 0x007FFFFF);  // subnormal
    case 3: {  // tiny or huge normals: underflow and overflow of products and quotients
      const auto exponent = static_cast<std::uint32_t>(rng() % 2 ? 1 + rng() % 40 : 214 + rng() % 40);
      return sign | exponent << 23 | (static_cast<std::uint32_t>(rng()) & 0x7FFFFF);
    }
    case 4: return sign | 0x3F800000 | (static_cast<std::uint32_t>(rng()) & 0x3);  // ties in sums
    default: {  // moderate values, where sums cancel and round
      const auto exponent = static_cast<std::uint32_t>(120 + rng() % 16);
      return sign | exponent << 23 | (static_cast<std::uint32_t>(rng()) & 0x7FFFFF);
    }
  }
}

class AccVecTest : public VECTOR_SUITE {
 protected:
  void SetUp() override {
    VECTOR_SUITE::SetUp();
    if (!bench_->bf16()) GTEST_SKIP() << "ACCVEC faults in int8 configurations (the model's tests cover it)";
  }
  void FillIeee(std::uint64_t first, std::uint64_t count) {
    std::vector<std::vector<std::uint32_t>> rows(count, std::vector<std::uint32_t>(bench_->cols()));
    for (auto& row : rows) {
      for (auto& v : row) v = IeeeOperand(bench_->rng());
    }
    bench_->FillAcc(first, rows);
  }
  static isa::Instruction AccVec(isa::AccOp op, std::uint64_t a, std::uint64_t b, std::uint64_t dst,
                                 std::uint64_t rows, bool bcast = false, bool bcol = false,
                                 std::optional<std::uint32_t> imm = std::nullopt) {
    return isa::MakeInstruction(Opcode::kAccVec,
                                {{Field::kOp, static_cast<std::uint64_t>(op)}, {Field::kA, a},
                                 {Field::kB, b}, {Field::kDst, dst}, {Field::kRows, rows},
                                 {Field::kBcast, bcast ? 1u : 0u}, {Field::kBcol, bcol ? 1u : 0u},
                                 {Field::kScalar, imm ? 1u : 0u}, {Field::kImm, imm.value_or(0)}});
  }
  static constexpr isa::AccOp kOps[] = {isa::AccOp::kAdd, isa::AccOp::kSub, isa::AccOp::kMul,
                                        isa::AccOp::kMax, isa::AccOp::kMin, isa::AccOp::kDiv,
                                        isa::AccOp::kSqrt};
};

// Every pair of special operands (the table of IeeeOperand's case 0 against itself) through
// every op, with all grants given: bit-exact, and the cycles the model's estimate gives.
TEST_F(AccVecTest, SpecialOperandPairsAndCycleEstimate) {
  const std::uint32_t cols = bench_->cols();
  static constexpr std::uint32_t kValues[] = {
      0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
      0x80800000, 0x3F800000, 0xBF800000, 0x3F800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
      0xFF800000, 0x7FC00000, 0xFFC12345, 0x7F800001, 0x34000000, 0x40400000};
  constexpr std::uint64_t n = std::size(kValues);
  std::vector<std::uint32_t> as, bs;
  for (std::uint32_t x : kValues) {
    for (std::uint32_t y : kValues) {
      as.push_back(x);
      bs.push_back(y);
    }
  }
  // In chunks of rows that fit three times into the accumulators (a, b, result).
  const std::uint64_t chunk = std::min<std::uint64_t>(bench_->acc_rows() / 3, 64) * cols;
  for (std::uint64_t first = 0; first < n * n; first += chunk) {
    const std::uint64_t count = std::min(chunk, n * n - first), rows = (count + cols - 1) / cols;
    std::vector<std::vector<std::uint32_t>> ra(rows, std::vector<std::uint32_t>(cols)), rb = ra;
    for (std::uint64_t k = 0; k < count; ++k) {
      ra[k / cols][k % cols] = as[first + k];
      rb[k / cols][k % cols] = bs[first + k];
    }
    for (isa::AccOp op : kOps) {
      bench_->FillAcc(0, ra);
      bench_->FillAcc(rows, rb);
      const isa::Instruction insn = AccVec(op, 0, rows, 2 * rows, rows);
      const std::uint64_t cycles = bench_->Run(insn);
      EXPECT_EQ(cycles, model::TimingModel::AccVecCycles(insn))
          << "op " << static_cast<int>(op) << ": RTL cycles vs the model's estimate";
      if (first == 0) {
        std::cout << "[ cycles   ] accvec op " << static_cast<int>(op) << ", " << rows << " rows: " << cycles
                  << " (model " << model::TimingModel::AccVecCycles(insn) << ")\n";
      }
    }
  }
}

// Random operands, every op and form of operand b (row, bcast, bcol, both, the immediate),
// overlapping rows (in place, dst on b), under random grants of both accumulator ports.
TEST_F(AccVecTest, RandomOperandsFormsAndOverlaps) {
  constexpr std::uint64_t kRows = 48;
  auto& rng = bench_->rng();
  int ran = 0;
  for (int i = 0; i < 120 && !HasFailure(); ++i) {
    if (i % 10 == 0) FillIeee(0, kRows);
    const isa::AccOp op = kOps[rng() % std::size(kOps)];
    const std::uint64_t rows = 1 + rng() % 8;
    const std::uint64_t a = rng() % (kRows - rows), b = rng() % (kRows - rows);
    std::uint64_t dst = rng() % (kRows - rows);
    if (rng() % 4 == 0) dst = a;
    if (rng() % 6 == 0) dst = b;
    const unsigned form = static_cast<unsigned>(rng() % 5);
    const isa::Instruction insn =
        form == 4 ? AccVec(op, a, b, dst, rows, false, false, IeeeOperand(rng))
                  : AccVec(op, a, b, dst, rows, (form & 1) != 0, (form & 2) != 0);
    Grants grants = RandomGrants();
    grants.acc_wr = (rng() % 2) ? 1.0 : 0.4;
    const std::uint64_t cycles = bench_->Run(insn, grants);
    if (grants.acc_rd == 1.0 && grants.acc_wr == 1.0) {
      EXPECT_EQ(cycles, model::TimingModel::AccVecCycles(insn)) << Describe(insn);
    }
    ++ran;
  }
  EXPECT_EQ(ran, 120);
}

// Rows overlap unless a row in flight writes what a later row reads: dst running 0–5 rows ahead
// of a and of b, a bcast b row below and inside dst's rows, every op; bit-exact, and with all
// grants given the cycles of the model's estimate (overlapped or one row at a time).
TEST_F(AccVecTest, WritesRunningAheadOfReads) {
  constexpr std::uint64_t kRows = 12;
  FillIeee(0, 64);
  for (isa::AccOp op : kOps) {
    for (std::uint64_t ahead = 0; ahead <= 5; ++ahead) {
      const isa::Instruction cases[] = {
          AccVec(op, 8, 40, 8 + ahead, kRows),                      // dst ahead of a
          AccVec(op, 40, 8, 8 + ahead, kRows),                      // dst ahead of b
          AccVec(op, 8, 15 + 2 * ahead, 20, kRows, true, ahead % 2 == 1),  // bcast b below, in dst
          AccVec(op, 8, 8, 8 + ahead, kRows, false, false, IeeeOperand(bench_->rng())),
      };
      for (const isa::Instruction& insn : cases) {
        const std::uint64_t cycles = bench_->Run(insn);
        EXPECT_EQ(cycles, model::TimingModel::AccVecCycles(insn))
            << Describe(insn) << (model::TimingModel::AccVecRowsOverlap(insn) ? " (overlapped)" : " (one row at a time)");
        if (HasFailure()) return;
      }
      FillIeee(0, 64);
    }
  }
}

TEST_F(VECTOR_SUITE, RandomInstructionSequences) {
  int ran = 0;
  for (int i = 0; i < 400 && !HasFailure(); ++i) {
    const isa::Instruction insn = RandomInstruction();
    bench_->Run(insn, RandomGrants());  // legal by construction (Run checks with the model)
    ++ran;
    if (i % 97 == 0) {  // new data now and then, NaNs and all
      bench_->RandomFill(0, kWindow);
    }
  }
  EXPECT_EQ(ran, 400);
}

}  // namespace
}  // namespace systole::rtl::vector_test
