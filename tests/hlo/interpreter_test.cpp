// The interpreter op by op against hand-computed values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/hlo/hlo_test_util.hpp"

namespace systole::hlo {
namespace {

using testing::F32;
using testing::RunText;

// Runs `ROOT r = <result> <op>(a)` on the given f32[4] input.
std::vector<double> Unary(const std::string& op, std::vector<double> x) {
  const std::string text = "ENTRY e {\n  a = f32[4] parameter(0)\n  ROOT r = f32[4] " + op + "(a)\n}\n";
  return RunText(text, {F32({4}, std::move(x))}).values;
}

std::vector<double> Binary(const std::string& op, std::vector<double> x, std::vector<double> y,
                           const std::string& type = "f32", const std::string& extra = "") {
  const std::string text = "ENTRY e {\n  a = " + type + "[4] parameter(0)\n  b = " + type + "[4] parameter(1)\n  ROOT r = " +
                           (op == "compare" ? std::string("pred") : type) + "[4] " + op + "(a, b)" + extra + "\n}\n";
  const ElementType element = *ElementTypeFromName(type);
  return RunText(text, {testing::Array(element, {4}, std::move(x)), testing::Array(element, {4}, std::move(y))}).values;
}

TEST(HloInterpreter, BinaryArithmetic) {
  EXPECT_EQ(Binary("add", {1, 2, 3, 4}, {10, 20, 30, 40}), (std::vector<double>{11, 22, 33, 44}));
  EXPECT_EQ(Binary("subtract", {1, 2, 3, 4}, {4, 3, 2, 1}), (std::vector<double>{-3, -1, 1, 3}));
  EXPECT_EQ(Binary("multiply", {1, -2, 3, 0.5}, {2, 2, -2, 4}), (std::vector<double>{2, -4, -6, 2}));
  EXPECT_EQ(Binary("divide", {1, -3, 3, 0}, {4, 2, 0, 1}), (std::vector<double>{0.25, -1.5, INFINITY, 0}));
  EXPECT_EQ(Binary("maximum", {1, -2, 3, 0}, {0, -1, 4, 0}), (std::vector<double>{1, -1, 4, 0}));
  EXPECT_EQ(Binary("minimum", {1, -2, 3, 0}, {0, -1, 4, 0}), (std::vector<double>{0, -2, 3, 0}));
  EXPECT_EQ(Binary("power", {2, 3, 4, 9}, {3, 2, 0.5, 0.5}), (std::vector<double>{8, 9, 2, 3}));
  EXPECT_EQ(Binary("remainder", {7, -7, 7.5, 6}, {3, 3, 2, 4}), (std::vector<double>{1, -1, 1.5, 2}));
  const std::vector<double> angles = Binary("atan2", {1, 1, -1, 0}, {1, -1, -1, 1});
  EXPECT_FLOAT_EQ(static_cast<float>(angles[0]), static_cast<float>(M_PI / 4));
  EXPECT_FLOAT_EQ(static_cast<float>(angles[1]), static_cast<float>(3 * M_PI / 4));
  EXPECT_FLOAT_EQ(static_cast<float>(angles[2]), static_cast<float>(-3 * M_PI / 4));
  EXPECT_EQ(angles[3], 0);
}

TEST(HloInterpreter, MaximumPropagatesNan) {
  const std::vector<double> r = Binary("maximum", {NAN, 1, 2, 3}, {1, NAN, 2, 3});
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_TRUE(std::isnan(r[1]));
}

TEST(HloInterpreter, IntegerArithmeticWrapsAndDividesLikeXla) {
  EXPECT_EQ(Binary("add", {2147483647, -5, 7, 0}, {1, 2, 1, 0}, "s32"), (std::vector<double>{-2147483648.0, -3, 8, 0}));
  EXPECT_EQ(Binary("divide", {7, -7, 5, -2147483648.0}, {2, 2, 0, -1}, "s32"),
            (std::vector<double>{3, -3, -1, -2147483648.0}));
  EXPECT_EQ(Binary("remainder", {7, -7, 5, 3}, {2, 2, 0, 5}, "s32"), (std::vector<double>{1, -1, 5, 3}));
  EXPECT_EQ(Binary("multiply", {100, 16, -2, 3}, {3, 16, 100, 3}, "s8"), (std::vector<double>{44, 0, 56, 9}));
  EXPECT_EQ(Binary("and", {12, 10, 0, 7}, {10, 6, 5, 7}, "s32"), (std::vector<double>{8, 2, 0, 7}));
  EXPECT_EQ(Binary("or", {12, 10, 0, 7}, {10, 6, 5, 7}, "s32"), (std::vector<double>{14, 14, 5, 7}));
  EXPECT_EQ(Binary("xor", {12, 10, 0, 7}, {10, 6, 5, 7}, "s32"), (std::vector<double>{6, 12, 5, 0}));
}

TEST(HloInterpreter, Unary) {
  EXPECT_EQ(Unary("negate", {1, -2, 0, 3}), (std::vector<double>{-1, 2, 0, -3}));
  EXPECT_EQ(Unary("abs", {1, -2, 0, -3.5}), (std::vector<double>{1, 2, 0, 3.5}));
  EXPECT_EQ(Unary("floor", {1.5, -1.5, 2, -0.25}), (std::vector<double>{1, -2, 2, -1}));
  EXPECT_EQ(Unary("ceil", {1.5, -1.5, 2, -0.25}), (std::vector<double>{2, -1, 2, -0.0}));
  EXPECT_EQ(Unary("sign", {3, -2, 0, -0.0}), (std::vector<double>{1, -1, 0, -0.0}));
  EXPECT_EQ(Unary("sqrt", {4, 9, 0, 2.25}), (std::vector<double>{2, 3, 0, 1.5}));
  EXPECT_EQ(Unary("rsqrt", {4, 16, 0.25, 1}), (std::vector<double>{0.5, 0.25, 2, 1}));
  EXPECT_EQ(Unary("round-nearest-even", {2.5, 3.5, -2.5, 0.4}), (std::vector<double>{2, 4, -2, 0}));
  EXPECT_EQ(Unary("round-nearest-afz", {2.5, 3.5, -2.5, 0.4}), (std::vector<double>{3, 4, -3, 0}));
  const auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  EXPECT_EQ(Unary("exponential", {0, 1, -1, 2}), (std::vector<double>{1, f32(M_E), f32(1 / M_E), f32(std::exp(2.0))}));
  EXPECT_EQ(Unary("log", {1, M_E, 0, 4}), (std::vector<double>{0, 1, -INFINITY, f32(std::log(4.0))}));
  EXPECT_EQ(Unary("tanh", {0, 1, -1, 20}), (std::vector<double>{0, f32(std::tanh(1.0)), f32(std::tanh(-1.0)), 1}));
  EXPECT_EQ(Unary("logistic", {0, 1, -1, 40}),
            (std::vector<double>{0.5, f32(1 / (1 + std::exp(-1.0))), f32(1 / (1 + std::exp(1.0))), 1}));
  EXPECT_EQ(Unary("cosine", {0, M_PI, 1, 2}), (std::vector<double>{1, -1, f32(std::cos(1.0)), f32(std::cos(2.0))}));
  EXPECT_EQ(Unary("sine", {0, 1, -1, 2}), (std::vector<double>{0, f32(std::sin(1.0)), f32(std::sin(-1.0)), f32(std::sin(2.0))}));
  EXPECT_EQ(Unary("exponential-minus-one", {0, 1e-10, 1, -1}),
            (std::vector<double>{0, f32(std::expm1(1e-10)), f32(std::expm1(1.0)), f32(std::expm1(-1.0))}));
  EXPECT_EQ(Unary("log-plus-one", {0, 1e-10, 1, 3}),
            (std::vector<double>{0, f32(std::log1p(1e-10)), f32(std::log1p(1.0)), f32(std::log1p(3.0))}));
  EXPECT_EQ(Unary("copy", {1, 2, 3, 4}), (std::vector<double>{1, 2, 3, 4}));
}

TEST(HloInterpreter, CompareSelectClampLogic) {
  EXPECT_EQ(Binary("compare", {1, 2, 3, NAN}, {2, 2, 2, 1}, "f32", ", direction=LT"), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(Binary("compare", {1, 2, 3, NAN}, {2, 2, 2, 1}, "f32", ", direction=GE"), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(Binary("compare", {1, 2, 3, NAN}, {2, 2, 2, NAN}, "f32", ", direction=NE"), (std::vector<double>{1, 0, 1, 1}));
  const Literal r = RunText(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  gt = pred[4] compare(a, b), direction=GT
  eq = pred[4] compare(a, b), direction=EQ
  either = pred[4] or(gt, eq)
  both = pred[4] and(gt, eq)
  neither = pred[4] not(either)
  sel = f32[4] select(either, a, b)
  lo = f32[] constant(-1)
  hi = f32[] constant(2)
  cl = f32[4] clamp(lo, sel, hi)
  ROOT t = (pred[4], pred[4], f32[4], f32[4]) tuple(neither, both, sel, cl)
})",
                            {F32({4}, {1, 5, -3, 2}), F32({4}, {2, 5, -4, 3})});
  EXPECT_EQ(r.elements[0].values, (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(r.elements[1].values, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(r.elements[2].values, (std::vector<double>{2, 5, -3, 3}));
  EXPECT_EQ(r.elements[3].values, (std::vector<double>{2, 2, -1, 2}));
}

TEST(HloInterpreter, ConvertRoundsToBf16NearestEvenAndFloatToIntTruncates) {
  const Literal r = RunText(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = bf16[4] convert(a)
  back = f32[4] convert(b)
  i = s32[4] convert(a)
  ROOT t = (f32[4], s32[4]) tuple(back, i)
})",
                            {F32({4}, {1.00390625, 1.01171875, -2.7, 3e9})});
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1. 1 + 3*2^-8 ties to 1 + 2^-6 (even).
  EXPECT_EQ(r.elements[0].values, (std::vector<double>{1.0, 1.015625, -2.703125, 3003121664.0}));
  EXPECT_EQ(r.elements[1].values, (std::vector<double>{1, 1, -2, 2147483647}));
}

TEST(HloInterpreter, Bf16ArithmeticRoundsEveryResult) {
  const Literal r = RunText(R"(
ENTRY e {
  a = bf16[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT s = bf16[2] add(a, b)
})",
                            {testing::Array(ElementType::kBf16, {2}, {1, 256}), testing::Array(ElementType::kBf16, {2}, {0.00390625, 1})});
  EXPECT_EQ(r.values, (std::vector<double>{1, 256}));  // 1 + 2^-8 and 257 are not bf16 values
}

TEST(HloInterpreter, BroadcastReshapeTransposeIota) {
  const Literal r = RunText(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,4,3] broadcast(a), dimensions={0,2}
  t = f32[3,2] transpose(a), dimensions={1,0}
  s = f32[3,2] reshape(a)
  bc = f32[6] bitcast(a)
  i = s32[2,3] iota(), iota_dimension=1
  ROOT tuple = (f32[2,4,3], f32[3,2], f32[3,2], f32[6], s32[2,3]) tuple(b, t, s, bc, i)
})",
                            {F32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_THAT(r.elements[0].values, ::testing::ElementsAre(1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6, 4, 5, 6));
  EXPECT_EQ(r.elements[1].values, (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(r.elements[2].values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r.elements[3].values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r.elements[4].values, (std::vector<double>{0, 1, 2, 0, 1, 2}));
}

TEST(HloInterpreter, SliceConcatenateDynamicSliceReverse) {
  const Literal r = RunText(R"(
ENTRY e {
  a = f32[3,4] parameter(0)
  s = f32[2,2] slice(a), slice={[1:3], [0:4:2]}
  s3 = f32[3,2] slice(a), slice={[0:3], [0:2]}
  c = f32[3,6] concatenate(a, s3), dimensions={1}
  c0 = f32[5,4] concatenate(a, s2), dimensions={0}
  s2 = f32[2,4] slice(a), slice={[0:2], [0:4]}
  i = s32[] constant(2)
  j = s32[] constant(5)
  d = f32[2,2] dynamic-slice(a, i, j), dynamic_slice_sizes={2,2}
  r = f32[3,4] reverse(a), dimensions={0,1}
  ROOT t = (f32[2,2], f32[3,6], f32[5,4], f32[2,2], f32[3,4]) tuple(s, c, c0, d, r)
})",
                            {F32({3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23})});
  EXPECT_EQ(r.elements[0].values, (std::vector<double>{10, 12, 20, 22}));
  EXPECT_THAT(r.elements[1].values, ::testing::ElementsAre(0, 1, 2, 3, 0, 1, 10, 11, 12, 13, 10, 11, 20, 21, 22, 23, 20, 21));
  EXPECT_THAT(r.elements[2].values, ::testing::ElementsAre(0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 0, 1, 2, 3, 10, 11, 12, 13));
  EXPECT_EQ(r.elements[3].values, (std::vector<double>{12, 13, 22, 23}));  // starts clamped to (1, 2)
  EXPECT_THAT(r.elements[4].values, ::testing::ElementsAre(23, 22, 21, 20, 13, 12, 11, 10, 3, 2, 1, 0));
}

TEST(HloInterpreter, PadWithNegativeAndInteriorPadding) {
  const Literal r = RunText(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  z = f32[] constant(-1)
  ROOT p = f32[3,4] pad(a, z), padding=1_0x-1_0_1
})",
                            {F32({2, 3}, {1, 2, 3, 4, 5, 6})});
  // Columns: 1 _ 2 _ 3 with interior 1 gives 5 wide; low -1 drops the first: _ 2 _ 3.
  EXPECT_THAT(r.values, ::testing::ElementsAre(-1, -1, -1, -1, -1, 2, -1, 3, -1, 5, -1, 6));
}

TEST(HloInterpreter, ReduceWithAnyReducer) {
  const Literal r = RunText(R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(y, x)
}
sum_of_squares {
  acc = f32[] parameter(0)
  v = f32[] parameter(1)
  sq = f32[] multiply(v, v)
  ROOT s = f32[] add(acc, sq)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ninf = f32[] constant(-inf)
  rows = f32[2] reduce(a, z), dimensions={1}, to_apply=add
  cols = f32[3] reduce(a, ninf), dimensions={0}, to_apply=max
  all = f32[] reduce(a, z), dimensions={0,1}, to_apply=sum_of_squares
  ROOT t = (f32[2], f32[3], f32[]) tuple(rows, cols, all)
})",
                            {F32({2, 3}, {1, 2, 3, -4, 5, -6})});
  EXPECT_EQ(r.elements[0].values, (std::vector<double>{6, -5}));
  EXPECT_EQ(r.elements[1].values, (std::vector<double>{1, 5, 3}));
  EXPECT_EQ(r.elements[2].values, (std::vector<double>{91}));
}

TEST(HloInterpreter, VariadicReduceArgmax) {
  const Literal r = RunText(R"(
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  v = f32[] select(gt, bv, av)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  idx = s32[2,3] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(a, idx, ninf, zero), dimensions={1}, to_apply=argmax
})",
                            {F32({2, 3}, {1, 7, 3, 9, -4, 2})});
  EXPECT_EQ(r.elements[0].values, (std::vector<double>{7, 9}));
  EXPECT_EQ(r.elements[1].values, (std::vector<double>{1, 0}));
}

TEST(HloInterpreter, ReduceWindowMaxPoolWithPadding) {
  const Literal r = RunText(R"(
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] add(x, y)
}
ENTRY e {
  a = f32[1,4,4,1] parameter(0)
  ninf = f32[] constant(-inf)
  one = f32[] constant(1)
  pool = f32[1,2,2,1] reduce-window(a, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_0x1_0x0_0}
      , to_apply=max
  sum = f32[1,2,2,1] reduce-window(a, one), window={size=1x2x2x1 stride=1x2x2x1 pad=0_0x1_0x1_0x0_0}, to_apply=add
  ROOT t = (f32[1,2,2,1], f32[1,2,2,1]) tuple(pool, sum)
})",
                            {F32({1, 4, 4, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})});
  EXPECT_EQ(r.elements[0].values, (std::vector<double>{6, 8, 14, 16}));
  // Padded taps contribute the initial value (1) once each, plus the initial value itself.
  EXPECT_EQ(r.elements[1].values, (std::vector<double>{1 + 3 + 1, 1 + 2 + 2 + 3, 1 + 2 + 5 + 9, 1 + 6 + 7 + 10 + 11}));
}

TEST(HloInterpreter, CallAndGetTupleElement) {
  const Literal r = RunText(R"(
pair {
  x = f32[2] parameter(0)
  n = f32[2] negate(x)
  ROOT t = (f32[2], f32[2]) tuple(x, n)
}
ENTRY e {
  a = f32[2] parameter(0)
  c = (f32[2], f32[2]) call(a), to_apply=pair
  ROOT g = f32[2] get-tuple-element(c), index=1
})",
                            {F32({2}, {1, -2})});
  EXPECT_EQ(r.values, (std::vector<double>{-1, 2}));
}

TEST(HloInterpreter, ReducePrecisionToHalf) {
  const Literal r = RunText("ENTRY e {\n  a = f32[3] parameter(0)\n  ROOT r = f32[3] reduce-precision(a), exponent_bits=5, mantissa_bits=10\n}\n",
                            {F32({3}, {1.0 + 1.0 / 4096, 70000, 1e-8})});
  EXPECT_EQ(r.values, (std::vector<double>{1.0, INFINITY, 0.0}));
}

TEST(HloInterpreter, ElidedConstantCannotRun) {
  EXPECT_THAT(testing::ErrorOf([] { RunText("ENTRY e {\n  ROOT c = f32[4] constant({...})\n}\n"); }),
              ::testing::HasSubstr("instruction 'c' (constant) was printed as {...}"));
}

TEST(HloInterpreter, ArgumentShapesAreChecked) {
  EXPECT_THAT(testing::ErrorOf([] { RunText("ENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n", {F32({3}, {1, 2, 3})}); }),
              ::testing::HasSubstr("argument for parameter 0 ('a') is f32[3] but the parameter is f32[2]"));
}

}  // namespace
}  // namespace systole::hlo
