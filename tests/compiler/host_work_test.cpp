// What each host step does (toolchain/compiler/host_work.cpp) and the residual add + ReLU on
// the vector unit (docs/COMPILER.md, "Host steps" and "Residual adds"). Each case checks the
// classification or the placement, and the result against the interpreter on the golden model.
#include <gmock/gmock.h>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::CompileAndRun;
using testing::FindStep;
using testing::OnDevice;
using testing::Ran;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A convolution with batch norm as JAX writes it for inference: the scale and shift are
// computed from the parameters (var + eps, rsqrt, gamma * ..., beta - mean * ...) and reach
// the convolution's drain as per-channel vectors. `BN_PARAMS` declares gamma, beta, mean, var.
std::string ConvBatchNorm(const std::string& bn_params, const std::string& tail = "") {
  return R"(HloModule m
ENTRY e {
  x = f32[1,8,8,16] parameter(0)
  w = f32[3,3,16,32] parameter(1)
)" + bn_params + R"(
  c = f32[1,8,8,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  eps = f32[] constant(1e-05)
  epsv = f32[32] broadcast(eps), dimensions={}
  ve = f32[32] add(var, epsv)
  rs = f32[32] rsqrt(ve)
  scale = f32[32] multiply(rs, gamma)
  nm = f32[32] negate(mean)
  ms = f32[32] multiply(nm, scale)
  shift = f32[32] add(ms, beta)
  scaleb = f32[1,8,8,32] broadcast(scale), dimensions={3}
  shiftb = f32[1,8,8,32] broadcast(shift), dimensions={3}
  sc = f32[1,8,8,32] multiply(c, scaleb)
  ROOT bn = f32[1,8,8,32] add(sc, shiftb)
)" + tail + "}\n";
}

std::vector<std::string> HostSteps(const CompiledModel& model, HostWork work) {
  std::vector<std::string> names;
  for (const Step& step : model.steps) {
    if (step.kind == Step::Kind::kHost && step.work == work) names.push_back(step.instruction);
  }
  return names;
}

TEST(HostWork, BatchNormArithmeticOnParametersIsParameterWorkNotCompute) {
  const Ran r = CompileAndRun(ConvBatchNorm(R"(  gamma = f32[32] parameter(2)
  beta = f32[32] parameter(3)
  mean = f32[32] parameter(4)
  var = f32[32] parameter(5))"));
  EXPECT_THAT(FindStep(r.model, "bn")->device->covers, ElementsAre("c", "sc", "bn"));
  EXPECT_THAT(HostSteps(r.model, HostWork::kParameters), ElementsAre("ve", "rs", "scale", "nm", "ms", "shift"));
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  EXPECT_THAT(FindStep(r.model, "rs")->reason, HasSubstr("parameters only"));
  EXPECT_LT(r.error, 1.0 / 64);
}

TEST(HostWork, BatchNormOfConstantParametersFoldsAtCompileTime) {
  const Ran r = CompileAndRun(ConvBatchNorm(R"(  gamma = f32[32] constant({1.5, 0.5, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.25})
  half = f32[] constant(0.5)
  beta = f32[32] broadcast(half), dimensions={}
  minus1 = f32[] constant(-1)
  mean = f32[32] broadcast(minus1), dimensions={}
  four = f32[] constant(4)
  var = f32[32] broadcast(four), dimensions={})"));
  EXPECT_TRUE(HostSteps(r.model, HostWork::kParameters).empty());
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  EXPECT_EQ(r.model.DeviceStepCount(), 1u);
  EXPECT_LT(r.error, 1.0 / 64);
}

// The same arithmetic on an activation is compute, and so is anything the root reads.
// (`abs`: the vector unit has none; `exponential` of an activation runs on the vector unit,
// default_precision_test.cpp.)
TEST(HostWork, ArithmeticOnActivationsIsCompute) {
  const Ran r = CompileAndRun(R"(HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT e = f32[8,16] abs(d)
})");
  EXPECT_THAT(HostSteps(r.model, HostWork::kCompute), ElementsAre("e"));
  EXPECT_THAT(testing::FindStep(r.model, "e")->reason, HasSubstr("no device kernel"));
  EXPECT_LT(r.error, 1.0 / 64);
}

// A parameter-only computation that is not a drain vector (here: a weight matrix the host
// exponentiates before the dot) is not batch-norm-like folding either: compute.
TEST(HostWork, ParameterArithmeticReadAsDataIsCompute) {
  const Ran r = CompileAndRun(R"(HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  n = f32[8,32] negate(x)
  ROOT d = f32[8,16] dot(n, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_THAT(HostSteps(r.model, HostWork::kCompute), ElementsAre("n"));
}

// A bottleneck block's tail: conv + batch norm, the residual add of the shortcut (an earlier
// convolution's activation) and the ReLU after it, in f32. Fused, the add joins the
// convolution's drain: the shortcut is the accumulators' starting tensor, ACTIVATE adds the
// bias, applies the ReLU and rounds the sum to bf16.
constexpr const char* kResidualBlock = R"(HloModule m
ENTRY e {
  x = f32[1,8,8,32] parameter(0)
  w0 = f32[1,1,32,32] parameter(1)
  w1 = f32[3,3,32,32] parameter(2)
  s = f32[32] parameter(3)
  b = f32[32] parameter(4)
  c0 = f32[1,8,8,32] convolution(x, w0), window={size=1x1}, dim_labels=b01f_01io->b01f
  zero = f32[] constant(0)
  z = f32[1,8,8,32] broadcast(zero), dimensions={}
  shortcut = f32[1,8,8,32] maximum(c0, z)
  c1 = f32[1,8,8,32] convolution(shortcut, w1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  sb = f32[1,8,8,32] broadcast(s), dimensions={3}
  m = f32[1,8,8,32] multiply(c1, sb)
  bb = f32[1,8,8,32] broadcast(b), dimensions={3}
  bn = f32[1,8,8,32] add(m, bb)
  sum = f32[1,8,8,32] add(bn, shortcut)
  ROOT out = f32[1,8,8,32] maximum(sum, z)
})";

TEST(ResidualAdd, AddAndReluJoinTheConvolutionsDrain) {
  const Ran r = CompileAndRun(kResidualBlock);
  const Step* block = FindStep(r.model, "out");
  ASSERT_TRUE(block != nullptr && block->kind == Step::Kind::kDevice);
  EXPECT_THAT(block->device->covers, ElementsAre("c1", "m", "bn", "sum", "out"));
  EXPECT_EQ(block->device->output.dtype, image::DataType::kBf16);
  // The shortcut is bound as the starting tensor, laid out like the output: in bf16, as the
  // step that computes it stores it (exact there; `load mem=acc widen` widens it).
  const Binding& start = block->device->inputs.back();
  EXPECT_EQ(start.value, "shortcut");
  EXPECT_EQ(FindStep(r.model, "shortcut")->device->output.dtype, image::DataType::kBf16);
  EXPECT_EQ(start.dtype, image::DataType::kBf16);
  EXPECT_EQ(start.shape, block->device->output.shape);
  EXPECT_EQ(r.model.DeviceStepCount(), 2u);
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  EXPECT_THAT(FindStep(r.model, "shortcut")->device->covers, ElementsAre("c0", "shortcut"));
  // bf16 roundings of the shortcut and the sum (and the MXU's operand roundings).
  EXPECT_LT(r.error, 1.0 / 128);
}

// Both operands computed by convolutions (a projection shortcut): one of them joins the add,
// the other is its starting tensor, stored in bf16 like the rest of the residual stream.
TEST(ResidualAdd, ProjectionShortcutJoinsOneOfTheTwoConvolutions) {
  const Ran r = CompileAndRun(R"(HloModule m
ENTRY e {
  x = f32[1,8,8,16] parameter(0)
  w0 = f32[1,1,16,32] parameter(1)
  w1 = f32[3,3,16,32] parameter(2)
  c0 = f32[1,8,8,32] convolution(x, w0), window={size=1x1}, dim_labels=b01f_01io->b01f
  c1 = f32[1,8,8,32] convolution(x, w1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  sum = f32[1,8,8,32] add(c1, c0)
  zero = f32[] constant(0)
  z = f32[1,8,8,32] broadcast(zero), dimensions={}
  ROOT out = f32[1,8,8,32] maximum(sum, z)
})");
  EXPECT_EQ(r.model.DeviceStepCount(), 2u);
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  const Step* block = FindStep(r.model, "out");
  ASSERT_TRUE(block != nullptr && block->kind == Step::Kind::kDevice);
  const std::string& shortcut = block->device->inputs.back().value;
  ASSERT_THAT(shortcut, ::testing::AnyOf("c0", "c1"));
  EXPECT_EQ(FindStep(r.model, shortcut)->device->output.dtype, image::DataType::kBf16);
  EXPECT_LT(r.error, 1.0 / 128);
}

// A residual add of two dots (no convolution's drain to join) runs on the vector unit, the
// ReLU after it as the VECTOR function.
TEST(ResidualAdd, AddOfTwoDotsRunsOnTheVectorUnit) {
  const Ran r = CompileAndRun(R"(HloModule m
ENTRY e {
  x = f32[32,32] parameter(0)
  w0 = f32[32,32] parameter(1)
  w1 = f32[32,32] parameter(2)
  d0 = f32[32,32] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[32,32] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  sum = f32[32,32] add(d0, d1)
  zero = f32[] constant(0)
  z = f32[32,32] broadcast(zero), dimensions={}
  ROOT out = f32[32,32] maximum(sum, z)
})");
  const Step* add = FindStep(r.model, "out");
  ASSERT_TRUE(add != nullptr && add->kind == Step::Kind::kDevice);
  EXPECT_THAT(add->device->covers, ElementsAre("sum", "out"));
  EXPECT_THAT(add->device->kernel, HasSubstr("vector add + maximum"));
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  // Three bf16 roundings: both operands and the sum.
  EXPECT_LT(r.error, 1.0 / 64);
}

TEST(ResidualAdd, StaysOnTheHostWithoutFusion) {
  CompileOptions options;
  options.fuse = false;
  const CompiledModel model = Compile(kResidualBlock, "test.hlo", LoadConfig("small"), options);
  EXPECT_FALSE(OnDevice(model, "sum"));
  EXPECT_EQ(FindStep(model, "sum")->work, HostWork::kCompute);
}

// An f32 add of an activation and a parameter is not a residual add: the parameter was never
// rounded to bf16, so the host keeps it exact.
TEST(ResidualAdd, AddOfAParameterStaysOnTheHost) {
  const Ran r = CompileAndRun(R"(HloModule m
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  y = f32[8,16] parameter(2)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT a = f32[8,16] add(d, y)
})");
  EXPECT_FALSE(OnDevice(r.model, "a"));
  EXPECT_LT(r.error, 1.0 / 64);
}

}  // namespace
}  // namespace systole::compiler
