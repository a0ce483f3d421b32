// VECTOR's transcendental step, `pass` and `bcol`, and REDUCE, in both element types, with
// expectations computed here from docs/ISA.md. The functions themselves are pinned by
// math_accuracy_test.cpp (accuracy) and by the directed values below (bits).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "sim/model/transcendental.hpp"
#include "tests/model/model_test_util.hpp"

namespace systole::model {
namespace {

using namespace testing;  // NOLINT: test helpers
using isa::ActFunc;
using isa::MemSpace;
using isa::VecMath;
using isa::VecOp;

isa::Instruction VectorMath(VecOp op, VecMath math, std::uint64_t a, std::uint64_t b,
                            std::uint64_t dst, std::uint64_t rows, bool bcast, bool bcol,
                            ActFunc func = ActFunc::kNone) {
  return Insn(Opcode::kVector, {{Field::kOp, static_cast<std::uint64_t>(op)},
                                {Field::kMath, static_cast<std::uint64_t>(math)},
                                {Field::kA, a},
                                {Field::kB, b},
                                {Field::kDst, dst},
                                {Field::kRows, rows},
                                {Field::kBcast, bcast ? 1u : 0u},
                                {Field::kBcol, bcol ? 1u : 0u},
                                {Field::kFunc, static_cast<std::uint64_t>(func)}});
}

isa::Instruction Reduce(bool max, isa::ReduceOver over, std::uint64_t src, std::uint64_t dst,
                        std::uint64_t rows, std::uint64_t elems, std::uint64_t scale = 0,
                        std::uint64_t shift = 0) {
  return Insn(Opcode::kReduce, {{Field::kOp, max ? 0u : 1u},
                                {Field::kOver, static_cast<std::uint64_t>(over)},
                                {Field::kSrc, src},
                                {Field::kDst, dst},
                                {Field::kRows, rows},
                                {Field::kElems, elems},
                                {Field::kScale, scale},
                                {Field::kShift, shift}});
}

// Loads `values` (16 bf16 per row) into UB rows first.. of a `small` model.
void LoadBf16Rows(GoldenModel& model, const std::vector<std::uint16_t>& values,
                  std::uint64_t first, std::vector<isa::Instruction>& program,
                  std::uint64_t address) {
  WriteArray(model, address, values);
  program.push_back(Dma(Opcode::kLoad, MemSpace::kUb, address, 32, first, 0, values.size() / 16, 16));
}

// Directed values of every function, fixed bits: a change to an algorithm shows here first.
TEST(VectorMath, DirectedValues) {
  EXPECT_EQ(ExpF32(0x00000000), 0x3F800000u);             // e^0 = 1
  EXPECT_EQ(ExpF32(0x3F800000), 0x402DF854u);             // e
  EXPECT_EQ(ExpF32(0xFF800000), 0x00000000u);             // e^-inf = 0
  EXPECT_EQ(ExpF32(0x7F800000), 0x7F800000u);             // e^inf = inf
  EXPECT_EQ(ExpF32(0x42B20000), 0x7F800000u);             // e^89 overflows
  EXPECT_EQ(ExpF32(0xC2B00000), 0x00000000u);             // e^-88 < 2^-126 flushes
  EXPECT_EQ(ReciprocalF32(0x40000000), 0x3F000000u);      // 1/2
  EXPECT_EQ(ReciprocalF32(0x80000000), 0xFF800000u);      // 1/-0 = -inf
  EXPECT_EQ(ReciprocalF32(0x7F000000), 0x00000000u);      // 1/2^127 flushes
  EXPECT_EQ(RsqrtF32(0x40800000), 0x3EFFFFFFu);           // 1/sqrt(4): 1 ULP low (not exact)
  EXPECT_EQ(RsqrtF32(0x80000000), 0xFF800000u);           // 1/sqrt(-0) = -inf
  EXPECT_EQ(RsqrtF32(0xBF800000), 0x7FC00000u);           // negative: NaN
  EXPECT_EQ(TanhF32(0x80000000), 0x80000000u);            // tanh(-0) = -0
  EXPECT_EQ(TanhF32(0xFF800000), 0xBF800000u);            // tanh(-inf) = -1
  EXPECT_EQ(SigmoidF32(0x00000000), 0x3F000000u);         // 0.5
  EXPECT_EQ(GeluTanhF32(0x7F800000), 0x7F800000u);
  EXPECT_EQ(GeluErfF32(0xFF800000), 0x7FC00000u);         // -inf * 0, as JAX
  EXPECT_EQ(LogF32(0x3F800000), 0x00000000u);             // log 1 = +0
  EXPECT_EQ(LogF32(0x40000000), 0x3F317218u);             // log 2, correctly rounded
  EXPECT_EQ(LogF32(0x00000000), 0xFF800000u);             // log(+0) = -inf
  EXPECT_EQ(LogF32(0x80000000), 0xFF800000u);             // log(-0) = -inf
  EXPECT_EQ(LogF32(0x00000001), 0xFF800000u);             // a subnormal is a zero
  EXPECT_EQ(LogF32(0xBF800000), 0x7FC00000u);             // negative: NaN
  EXPECT_EQ(LogF32(0xFF800000), 0x7FC00000u);             // log(-inf): NaN
  EXPECT_EQ(LogF32(0x7F800000), 0x7F800000u);             // log(inf) = inf
  for (VecMath math : {VecMath::kExp, VecMath::kRecip, VecMath::kRsqrt, VecMath::kTanh,
                       VecMath::kSigmoid, VecMath::kGeluTanh, VecMath::kGeluErf, VecMath::kLog}) {
    EXPECT_EQ(ApplyMathF32(math, 0x7F812345), 0x7FC00000u) << "NaN in, canonical NaN out";
  }
  EXPECT_EQ(ApplyMathF32(VecMath::kNone, 0x12345678), 0x12345678u);
}

// VECTOR applies op, then math in fp32, then the function, then rounds: exp(x - y[0]) per row
// is softmax's numerator.
TEST(VectorMath, OpThenMathThenFunctionWithBroadcastColumn) {
  GoldenModel model(LoadConfig("small"));
  std::mt19937_64 rng(TestSeed());
  std::vector<std::uint16_t> a(16 * 3), b(16 * 3);
  for (auto& x : a) x = RandomBf16(rng, true);
  for (auto& x : b) x = RandomBf16(rng, true);
  for (VecMath math : {VecMath::kExp, VecMath::kRecip, VecMath::kRsqrt, VecMath::kTanh,
                       VecMath::kSigmoid, VecMath::kGeluTanh, VecMath::kGeluErf, VecMath::kLog}) {
    for (const auto& [bcast, bcol] : {std::pair{false, true}, std::pair{true, true},
                                      std::pair{true, false}, std::pair{false, false}}) {
      SCOPED_TRACE(fmt::format("math {} bcast {} bcol {}", static_cast<int>(math), bcast, bcol));
      std::vector<isa::Instruction> program;
      LoadBf16Rows(model, a, 0, program, kDataAddress);
      LoadBf16Rows(model, b, 10, program, kDataAddress + 0x1000);
      program.push_back(Sync());
      program.push_back(
          VectorMath(VecOp::kSub, math, 0, 10, 20, 3, bcast, bcol, ActFunc::kRelu6));
      program.push_back(Halt());
      RunOk(model, program);
      for (std::size_t i = 0; i < a.size(); ++i) {
        const std::size_t row = i / 16, col = i % 16;
        const std::uint16_t y = b[(bcast ? 0 : row) * 16 + (bcol ? 0 : col)];
        std::uint32_t v = ref::Add(ref::FromBf16(a[i]), ref::FromBf16(y) ^ 0x80000000u);
        v = ref::Min(ref::Max(ApplyMathF32(math, v), 0), 0x40C00000);
        ASSERT_EQ(model.UbBf16(20 + row, static_cast<std::uint32_t>(col)), ref::ToBf16(v))
            << "element " << i;
      }
    }
  }
}

TEST(VectorMath, PassReadsNoOperandB) {
  GoldenModel model(LoadConfig("small"));
  std::vector<isa::Instruction> program;
  LoadBf16Rows(model, std::vector<std::uint16_t>(16, 0x4000), 0, program, kDataAddress);  // 2
  program.push_back(Sync());
  // b is far outside the buffer: op=pass neither reads nor checks it.
  isa::Instruction pass = VectorMath(VecOp::kPass, VecMath::kRecip, 0, 0, 1, 1, false, false);
  pass[Field::kB] = 0xFFFFFF;
  program.push_back(pass);
  program.push_back(Halt());
  RunOk(model, program);
  for (std::uint32_t j = 0; j < 16; ++j) EXPECT_EQ(model.UbBf16(1, j), 0x3F00);  // 0.5
}

TEST(VectorMath, Int8ConfigurationsRefuseMathButPassAndBcolWork) {
  GoldenModel model(LoadConfig("tiny"));
  const LaunchResult refused = RunProgram(
      model, {VectorMath(VecOp::kPass, VecMath::kExp, 0, 0, 1, 1, false, false), Halt()});
  EXPECT_EQ(refused.error, ErrorCode::kIllegalField);
  EXPECT_NE(refused.message.find("math=exp needs a bf16 configuration"), std::string::npos)
      << refused.message;

  GoldenModel ok(LoadConfig("tiny"));
  WriteArray(ok, kDataAddress, std::vector<std::int8_t>{10, 20, -30, 40, 1, 2, 3, 4});
  RunOk(ok, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 2, 4), Sync(),
             VectorMath(VecOp::kSub, VecMath::kNone, 0, 0, 5, 2, false, true),  // x - x[0]
             VectorMath(VecOp::kPass, VecMath::kNone, 1, 99, 7, 1, false, false), Halt()});
  EXPECT_EQ(ok.UbInt8(5, 2), -40);
  EXPECT_EQ(ok.UbInt8(6, 3), 3);
  EXPECT_EQ(ok.UbInt8(7, 1), 2);
}

// ---- REDUCE --------------------------------------------------------------------------------

TEST(ReduceBf16, AlongRowsInElementOrderWithScaleAndZeroedRest) {
  GoldenModel model(LoadConfig("small"));
  // Row 0: 2^25, 1, -2^25, then zeros: in order, (2^25 + 1) rounds to 2^25, so the sum is 0
  // (any other order could give 1). Row 1: 1..16 (sum 136, max 16; elems=4: 10 and 4).
  std::vector<std::uint16_t> rows(32, 0);
  rows[0] = 0x4C00;
  rows[1] = 0x3F80;
  rows[2] = 0xCC00;
  for (std::uint32_t j = 0; j < 16; ++j) rows[16 + j] = ref::ToBf16(ref::Bits(float(j + 1)));
  std::vector<isa::Instruction> program;
  LoadBf16Rows(model, rows, 0, program, kDataAddress);
  program.push_back(Sync());
  program.push_back(Reduce(false, isa::ReduceOver::kElems, 0, 10, 2, 16));
  program.push_back(Reduce(true, isa::ReduceOver::kElems, 0, 12, 2, 4));
  program.push_back(Reduce(false, isa::ReduceOver::kElems, 1, 14, 1, 4, ref::Bits(0.25f)));
  program.push_back(Halt());
  RunOk(model, program);
  EXPECT_EQ(model.UbBf16(10, 0), 0x0000);  // (2^25 + 1) - 2^25 in order
  EXPECT_EQ(model.UbBf16(11, 0), ref::ToBf16(ref::Bits(136.0f)));
  EXPECT_EQ(model.UbBf16(12, 0), 0x4C00);  // max of 2^25, 1, -2^25, 0
  EXPECT_EQ(model.UbBf16(13, 0), ref::ToBf16(ref::Bits(4.0f)));
  EXPECT_EQ(model.UbBf16(14, 0), ref::ToBf16(ref::Bits(2.5f)));  // mean of 1..4
  for (std::uint32_t j = 1; j < 16; ++j) EXPECT_EQ(model.UbBf16(11, j), 0) << j;
}

TEST(ReduceBf16, AcrossRowsElementwiseInRowOrder) {
  GoldenModel model(LoadConfig("small"));
  std::mt19937_64 rng(TestSeed());
  std::vector<std::uint16_t> rows(16 * 5);
  for (auto& x : rows) x = RandomBf16(rng, true);
  std::vector<isa::Instruction> program;
  LoadBf16Rows(model, rows, 0, program, kDataAddress);
  program.push_back(Sync());
  program.push_back(Reduce(false, isa::ReduceOver::kRows, 0, 8, 5, 12, ref::Bits(3.0f)));
  program.push_back(Reduce(true, isa::ReduceOver::kRows, 0, 9, 5, 16));
  program.push_back(Halt());
  RunOk(model, program);
  for (std::uint32_t j = 0; j < 16; ++j) {
    std::uint32_t sum = 0, max = ref::FromBf16(rows[j]);
    for (std::size_t i = 0; i < 5; ++i) {
      sum = ref::Add(sum, ref::FromBf16(rows[i * 16 + j]));
      if (i > 0) max = ref::Max(max, ref::FromBf16(rows[i * 16 + j]));
    }
    EXPECT_EQ(model.UbBf16(8, j), j < 12 ? ref::ToBf16(ref::Mul(sum, ref::Bits(3.0f))) : 0) << j;
    EXPECT_EQ(model.UbBf16(9, j), ref::ToBf16(max)) << j;
  }
}

TEST(ReduceInt8, SumRequantizesAndSaturatesMaxIsExact) {
  GoldenModel model(LoadConfig("tiny"));
  WriteArray(model, kDataAddress, std::vector<std::int8_t>{100, 100, 100, -7, -1, -2, -3, -4});
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 2, 4), Sync(),
                Reduce(false, isa::ReduceOver::kElems, 0, 4, 2, 4),        // 293 -> 127, -10
                Reduce(false, isa::ReduceOver::kElems, 0, 6, 2, 4, 1, 2),  // (v + 2) >> 2
                Reduce(true, isa::ReduceOver::kRows, 0, 8, 2, 3), Halt()});
  EXPECT_EQ(model.UbInt8(4, 0), 127);
  EXPECT_EQ(model.UbInt8(5, 0), -10);
  EXPECT_EQ(model.UbInt8(5, 1), 0);
  EXPECT_EQ(model.UbInt8(6, 0), 73);  // (293 + 2) >> 2
  EXPECT_EQ(model.UbInt8(7, 0), -2);  // (-10 + 2) >> 2
  EXPECT_EQ(model.UbInt8(8, 0), 100);
  EXPECT_EQ(model.UbInt8(8, 2), 100);
  EXPECT_EQ(model.UbInt8(8, 3), 0);  // beyond elems
}

TEST(ReduceErrors, ShapeThenSourceThenDestination) {
  const auto error = [&](const isa::Instruction& insn) {
    GoldenModel fresh(LoadConfig("small"));
    return RunProgram(fresh, {insn, Halt()}).error;
  };
  EXPECT_EQ(error(Reduce(true, isa::ReduceOver::kElems, 16383, 16384, 2, 17)),
            ErrorCode::kShape);
  EXPECT_EQ(error(Reduce(true, isa::ReduceOver::kElems, 16383, 16384, 2, 16)),
            ErrorCode::kUbRange);
  EXPECT_EQ(error(Reduce(true, isa::ReduceOver::kElems, 0, 16383, 2, 16)),
            ErrorCode::kUbRange);
  EXPECT_EQ(error(Reduce(true, isa::ReduceOver::kRows, 0, 16383, 2, 16)),
            ErrorCode::kNone);
}

}  // namespace
}  // namespace systole::model
