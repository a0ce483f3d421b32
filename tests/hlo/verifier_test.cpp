// The verifier: shape inference against printed shapes, and the structural rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/hlo_test_util.hpp"

namespace systole::hlo {
namespace {

using ::testing::HasSubstr;

std::string VerifyError(std::string_view text) {
  return testing::ErrorOf([&] { testing::ParseAndVerify(text); });
}

TEST(HloVerifier, ShapeMismatchNamesInstructionAndBothShapes) {
  EXPECT_EQ(VerifyError("ENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT t = f32[2,3] transpose(a), dimensions={1,0}\n}\n"),
            "test.hlo:3:8: instruction 't': printed shape f32[2,3] differs from the inferred shape f32[3,2]");
}

TEST(HloVerifier, ElementwiseOperandsMustAgree) {
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[3] parameter(1)\n  ROOT c = f32[2] add(a, b)\n}\n"),
              HasSubstr("4:8: instruction 'c' (add): operands differ: f32[2] and f32[3]"));
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT c = f32[2] compare(a, a), direction=LT\n}\n"),
              HasSubstr("printed shape f32[2] differs from the inferred shape pred[2]"));
}

TEST(HloVerifier, BroadcastDimensions) {
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[3] parameter(0)\n  ROOT b = f32[3,4] broadcast(a), dimensions={1}\n}\n"),
              HasSubstr("operand dimension 0 (size 3) cannot broadcast to output dimension 1 (size 4)"));
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[3] parameter(0)\n  ROOT b = f32[3,4] broadcast(a), dimensions={}\n}\n"),
              HasSubstr("must list one output dimension per operand dimension"));
}

TEST(HloVerifier, DotContractingSizes) {
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n"
                          "  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"),
              HasSubstr("contracting dimension sizes differ: 3 (f32[2,3]) and 4 (f32[4,5])"));
}

TEST(HloVerifier, ConvolutionOutputShape) {
  EXPECT_EQ(VerifyError("ENTRY e {\n  x = f32[1,8,8,3] parameter(0)\n  k = f32[3,3,3,4] parameter(1)\n"
                        "  ROOT c = f32[1,8,8,4] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, "
                        "dim_labels=b01f_01io->b01f\n}\n"),
            "test.hlo:4:8: instruction 'c': printed shape f32[1,8,8,4] differs from the inferred shape f32[1,4,4,4]");
  EXPECT_THAT(VerifyError("ENTRY e {\n  x = f32[1,8,8,4] parameter(0)\n  k = f32[3,3,3,4] parameter(1)\n"
                          "  ROOT c = f32[1,8,8,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
                          "dim_labels=b01f_01io->b01f\n}\n"),
              HasSubstr("input features (4) must equal kernel input features (3) x feature_group_count (1)"));
}

TEST(HloVerifier, ReduceNeedsAMatchingReducer) {
  EXPECT_THAT(VerifyError(R"(
r {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
ENTRY e {
  x = f32[4,5] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[4] reduce(x, z), dimensions={1}, to_apply=r
})"),
              HasSubstr("reducer 'r' must take 2 scalar parameters, takes 1"));
}

TEST(HloVerifier, SliceAndPadBounds) {
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[4] parameter(0)\n  ROOT s = f32[2] slice(a), slice={[3:5]}\n}\n"),
              HasSubstr("slice [3:5:1] is invalid for dimension 0 of size 4"));
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                          "  ROOT p = f32[0] pad(a, z), padding=-3_-3\n}\n"),
              HasSubstr("dimension 0 would have negative size -2"));
}

TEST(HloVerifier, ParameterNumbersMustBeDenseAndUnique) {
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(2)\n  ROOT c = f32[] add(a, b)\n}\n"),
              HasSubstr("instruction 'b': parameter number 2 leaves a gap"));
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(0)\n  ROOT c = f32[] add(a, b)\n}\n"),
              HasSubstr("instruction 'b': parameter number 0 is also used by 'a'"));
}

TEST(HloVerifier, CyclesAreRejected) {
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = f32[] add(b, b)\n  b = f32[] negate(a)\n  ROOT c = f32[] negate(b)\n}\n"),
              HasSubstr("is part of a cycle"));
}

TEST(HloVerifier, RecursionIsRejected) {
  EXPECT_THAT(VerifyError(R"(
f {
  a = f32[] parameter(0)
  ROOT c = f32[] call(a), to_apply=f
}
ENTRY e {
  a = f32[] parameter(0)
  ROOT c = f32[] call(a), to_apply=f
})"),
              HasSubstr("computation 'f' calls itself"));
}

TEST(HloVerifier, CallArgumentsMatchCalleeParameters) {
  EXPECT_THAT(VerifyError(R"(
f {
  ROOT a = f32[2] parameter(0)
}
ENTRY e {
  a = f32[3] parameter(0)
  ROOT c = f32[2] call(a), to_apply=f
})"),
              HasSubstr("operand 0 is f32[3] but parameter 0 of 'f' is f32[2]"));
}

TEST(HloVerifier, GetTupleElementIndex) {
  EXPECT_THAT(VerifyError("ENTRY e {\n  a = (f32[], s32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(a), index=2\n}\n"),
              HasSubstr("index 2 is out of range for (f32[], s32[])"));
}

TEST(HloVerifier, EveryOpOfTheCorpusVerifies) {
  testing::ParseAndVerify(R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  i = s32[] parameter(1)
  z = f32[] constant(0)
  c = f32[2,3] convert(a)
  b = f32[2,3,4] broadcast(a), dimensions={0,1}
  r = f32[6] reshape(a)
  bc = f32[3,2] bitcast(a)
  t = f32[3,2] transpose(a), dimensions={1,0}
  s = f32[1,3] slice(a), slice={[1:2], [0:3]}
  ds = f32[1,2] dynamic-slice(a, i, i), dynamic_slice_sizes={1,2}
  cc = f32[3,3] concatenate(a, s), dimensions={0}
  p = f32[4,7] pad(a, z), padding=1_1x2_2
  rd = f32[2] reduce(a, z), dimensions={1}, to_apply=add
  rw = f32[1,2] reduce-window(a, z), window={size=2x2 stride=1x1}, to_apply=add
  cmp = pred[2,3] compare(a, a), direction=GE
  sel = f32[2,3] select(cmp, a, c)
  cl = f32[2,3] clamp(z, sel, z)
  ROOT tup = (f32[2], f32[1,2]) tuple(rd, rw)
})");
}

}  // namespace
}  // namespace systole::hlo
