// The activation forms real JAX / XLA dumps use fuse into the drain, and max pools run on the
// device where that is exact (docs/COMPILER.md, "Partitioning rules"). Each case checks the
// placement and the result against the interpreter on the golden model.
#include <gmock/gmock.h>

#include "compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::FindStep;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Ran {
  CompiledModel model;
  RunResult run;
  hlo::Literal expected;
  double error = 0;
};

// `matched`: compare with the interpreter on the module with dot / convolution operands
// rounded to bf16 as the MXU rounds them, so that only the drain's rounding and the
// accumulation order remain.
Ran CompileAndRun(const std::string& text, std::uint64_t seed = 3, bool matched = false) {
  Ran r;
  const Config config = LoadConfig("small");
  r.model = Compile(text, "test.hlo", config);
  const std::vector<hlo::Literal> inputs = hlo::RandomInputs(*r.model.module, seed);
  Device device = Device::Open("ref", config);
  r.run = Execute(r.model, device, inputs);
  const auto reference = PrepareModule(text, "test.hlo");
  if (matched) testing::RoundDotOperandsToBf16(*reference);
  r.expected = hlo::Interpreter(*reference).Run(inputs);
  r.error = testing::RelativeError(r.run.result, r.expected);
  return r;
}

bool OnDevice(const CompiledModel& model, const std::string& name) {
  const Step* step = FindStep(model, name);
  return step != nullptr && step->kind == Step::Kind::kDevice;
}

// examples/hlo/small_cnn_f32.hlo's form: maximum(a, broadcast(zero)) with `zero` shared by two
// broadcasts, the first ReLU feeding a 2x2 max pool (then a convolution), the second a reshape
// (then a dot). Rounding to bf16 is invisible to both: the pool is monotone, the reshape moves
// data, the convolution and the dot round their operands to bf16 anyway.
TEST(ActivationFusion, ReluBeforePoolOrReshapeFusesWithSharedZero) {
  const Ran r = CompileAndRun(testing::ReadText(testing::ExampleFile("small_cnn_f32.hlo")));
  EXPECT_THAT(FindStep(r.model, "r1")->device->covers, ElementsAre("c1", "a1", "r1"));
  EXPECT_THAT(FindStep(r.model, "r2")->device->covers, ElementsAre("c2", "a2", "r2"));
  EXPECT_TRUE(OnDevice(r.model, "p1")) << "max of bf16 values a device step produced: exact";
  EXPECT_EQ(r.model.DeviceStepCount(), 4u);
  for (const Step& step : r.model.steps) {
    if (step.kind == Step::Kind::kHost) {
      EXPECT_THAT(step.instruction, ::testing::AnyOf("zero", "ninf", "f"));
    }
  }
  EXPECT_LT(r.error, 1.0 / 64);
}

TEST(ActivationFusion, ReluWithTheZeroFirstFuses) {
  const Ran r = CompileAndRun(R"(HloModule m
ENTRY e {
  x = f32[1,8,8,16] parameter(0)
  w = f32[3,3,16,32] parameter(1)
  c = f32[1,8,8,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  k0 = f32[] constant(0)
  z = f32[1,8,8,32] broadcast(k0), dimensions={}
  relu = f32[1,8,8,32] maximum(z, c)
  w2 = f32[1,1,32,8] parameter(2)
  ROOT c2 = f32[1,8,8,8] convolution(relu, w2), window={size=1x1}, dim_labels=b01f_01io->b01f
})");
  EXPECT_THAT(FindStep(r.model, "relu")->device->covers, ElementsAre("c", "relu"));
  EXPECT_EQ(r.model.DeviceStepCount(), 2u);
  EXPECT_LT(r.error, 1.0 / 64);
}

// ReLU6 as XLA writes jax.nn.relu6 (clamp) and as min(max(x, 0), 6), bf16 end to end.
TEST(ActivationFusion, Relu6AsClampOrMinimumOfMaximumFuses) {
  for (const char* relu6 : {"mx = bf16[1,8,8,32] maximum(zero, c)\n  ROOT r6 = bf16[1,8,8,32] clamp(zero, mx, six)",
                            "mx = bf16[1,8,8,32] maximum(c, zero)\n  ROOT r6 = bf16[1,8,8,32] minimum(mx, six)",
                            "ROOT r6 = bf16[1,8,8,32] clamp(zero, c, six)"}) {
    const std::string text = std::string(R"(HloModule m
ENTRY e {
  x = bf16[1,8,8,16] parameter(0)
  w = bf16[3,3,16,32] parameter(1)
  c = bf16[1,8,8,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  k0 = bf16[] constant(0)
  k6 = bf16[] constant(6)
  zero = bf16[1,8,8,32] broadcast(k0), dimensions={}
  six = bf16[1,8,8,32] broadcast(k6), dimensions={}
  )") + relu6 + "\n}";
    const Ran r = CompileAndRun(text, 4);
    ASSERT_TRUE(OnDevice(r.model, "r6")) << relu6;
    EXPECT_EQ(r.model.DeviceStepCount(), 1u) << relu6;
    EXPECT_EQ(FindStep(r.model, "r6")->device->output.dtype, assembly::DataType::kBf16);
    EXPECT_LT(r.error, 1.0 / 64) << relu6;
  }
}

// Mixed precision: f32 accumulation, bias and ReLU6 in f32, then a convert to bf16 (the root).
// The 6 must bite: the inputs are scaled so that some outputs exceed it.
TEST(ActivationFusion, F32ChainEndingInAConvertToBf16Fuses) {
  const Ran r = CompileAndRun(R"(HloModule m
ENTRY e {
  a = f32[32,64] parameter(0)
  b = f32[64,24] parameter(1)
  bias = f32[24] parameter(2)
  k8 = f32[] constant(8)
  s = f32[32,64] broadcast(k8), dimensions={}
  as = f32[32,64] multiply(a, s)
  d = f32[32,24] dot(as, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[32,24] broadcast(bias), dimensions={1}
  add = f32[32,24] add(bb, d)
  zero = f32[] constant(0)
  six = f32[] constant(6)
  z = f32[32,24] broadcast(zero), dimensions={}
  mx = f32[32,24] maximum(add, z)
  s6 = f32[32,24] broadcast(six), dimensions={}
  mn = f32[32,24] minimum(s6, mx)
  ROOT y = bf16[32,24] convert(mn)
})", 3, /*matched=*/true);
  EXPECT_THAT(FindStep(r.model, "y")->device->covers, ElementsAre("d", "add", "mx", "mn", "y"));
  double max = 0;
  for (double v : r.expected.values) max = std::max(max, v);
  EXPECT_EQ(max, 6.0) << "the clamp at 6 is exercised";
  EXPECT_LT(r.error, 1.0 / 256) << "one bf16 rounding of the result, as the convert does";
}

// A convert to bf16 directly after the dot, the ReLU in bf16.
TEST(ActivationFusion, ConvertThenBf16ReluFuses) {
  const Ran r = CompileAndRun(R"(HloModule m
ENTRY e {
  a = f32[16,32] parameter(0)
  b = f32[32,48] parameter(1)
  d = f32[16,48] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h = bf16[16,48] convert(d)
  k0 = bf16[] constant(0)
  z = bf16[16,48] broadcast(k0), dimensions={}
  ROOT r = bf16[16,48] maximum(h, z)
})");
  EXPECT_THAT(FindStep(r.model, "r")->device->covers, ElementsAre("d", "h", "r"));
  EXPECT_LT(r.error, 1.0 / 64);
}

// A bf16 max pool (NCHW, 3x3 stride 2 with -inf padding) of a parameter: exact on the device.
TEST(PoolPlacement, Bf16MaxPoolRunsOnTheDeviceBitExactly) {
  const Ran r = CompileAndRun(R"(HloModule m
max_fn {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
ENTRY e {
  x = bf16[2,24,17,15] parameter(0)
  ninf = bf16[] constant(-inf)
  ROOT p = bf16[2,24,9,8] reduce-window(x, ninf), window={size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1}, to_apply=max_fn
})");
  ASSERT_TRUE(OnDevice(r.model, "p"));
  EXPECT_THAT(FindStep(r.model, "p")->device->kernel, HasSubstr("pool"));
  EXPECT_EQ(testing::FirstBitDifference(r.run.result, r.expected), "");
}

// ResNet's stem pool: an explicit -inf pad whose only user is the pool becomes its padding.
TEST(PoolPlacement, MinusInfinityPadBeforeAPoolIsAbsorbed) {
  const Ran r = CompileAndRun(R"(HloModule m
max_fn {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
ENTRY e {
  x = bf16[1,14,14,40] parameter(0)
  ninf = bf16[] constant(-inf)
  padded = bf16[1,16,16,40] pad(x, ninf), padding=0_0x1_1x1_1x0_0
  ROOT p = bf16[1,7,7,40] reduce-window(padded, ninf), window={size=1x3x3x1 stride=1x2x2x1}, to_apply=max_fn
})");
  ASSERT_TRUE(OnDevice(r.model, "p"));
  EXPECT_THAT(FindStep(r.model, "p")->device->covers, ElementsAre("padded", "p"));
  EXPECT_EQ(r.model.steps.size(), 1u) << "neither the pad nor its constant run on the host";
  EXPECT_EQ(testing::FirstBitDifference(r.run.result, r.expected), "");
}

// ResNet-50's stem as JAX writes it: conv + ReLU, a *zero* pad, a 3x3/2 max pool, a conv. The
// ReLU's values are >= 0 and no window lies wholly in the padding, so the zero pad is the
// POOL's -inf padding; without the ReLU the zero pad would change maxima and stays.
TEST(PoolPlacement, ZeroPadOfReluValuesBeforeAPoolIsAbsorbed) {
  for (const bool relu : {true, false}) {
    const std::string act = relu ? "maximum(c, z)" : "add(c, z)";
    const Ran r = CompileAndRun(R"(HloModule m
max_fn {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[1,12,12,8] parameter(0)
  w = f32[3,3,8,16] parameter(1)
  c = f32[1,12,12,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  k0 = f32[] constant(0)
  z = f32[1,12,12,16] broadcast(k0), dimensions={}
  r = f32[1,12,12,16] )" + act + R"(
  padded = f32[1,14,14,16] pad(r, k0), padding=0_0x1_1x1_1x0_0
  ninf = f32[] constant(-inf)
  p = f32[1,6,6,16] reduce-window(padded, ninf), window={size=1x3x3x1 stride=1x2x2x1}, to_apply=max_fn
  w2 = f32[1,1,16,8] parameter(2)
  ROOT c2 = f32[1,6,6,8] convolution(p, w2), window={size=1x1}, dim_labels=b01f_01io->b01f
})");
    ASSERT_TRUE(OnDevice(r.model, "p")) << "the pool's result only feeds a convolution";
    if (relu) {
      EXPECT_THAT(FindStep(r.model, "p")->device->covers, ElementsAre("padded", "p"));
      EXPECT_EQ(r.model.steps.size(), 3u) << "conv + ReLU, pool, conv";
    } else {
      EXPECT_EQ(FindStep(r.model, "padded")->kind, Step::Kind::kHost);
    }
    EXPECT_LT(r.error, 1.0 / 64) << (relu ? "relu" : "add");
  }
}

// An f32 pool of f32 host values whose result is the root would lose precision on the device
// (its element type is bf16): it stays on the host and says why. An average pool has no exact
// device form and stays on the host too.
TEST(PoolPlacement, InexactPoolsStayOnTheHost) {
  const CompiledModel model = Compile(R"(HloModule m
max_fn {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_fn {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1,8,8,16] parameter(0)
  ninf = f32[] constant(-inf)
  k0 = f32[] constant(0)
  p = f32[1,4,4,16] reduce-window(x, ninf), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max_fn
  s = f32[1,4,4,16] reduce-window(x, k0), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=add_fn
  ROOT t = (f32[1,4,4,16], f32[1,4,4,16]) tuple(p, s)
})", "m.hlo", LoadConfig("small"));
  ASSERT_FALSE(OnDevice(model, "p"));
  EXPECT_THAT(FindStep(model, "p")->reason, HasSubstr("bf16"));
  EXPECT_FALSE(OnDevice(model, "s"));
}

// An f32 pool of host values that only a convolution reads: max commutes with the rounding
// the convolution applies to its operand, so the device's bf16 pool changes nothing.
TEST(PoolPlacement, F32PoolFeedingOnlyAConvolutionRunsOnTheDevice) {
  const Ran r = CompileAndRun(R"(HloModule m
max_fn {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[1,16,16,8] parameter(0)
  ninf = f32[] constant(-inf)
  p = f32[1,8,8,8] reduce-window(x, ninf), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max_fn
  w = f32[3,3,8,16] parameter(1)
  ROOT c = f32[1,8,8,16] convolution(p, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  EXPECT_TRUE(OnDevice(r.model, "p"));
  EXPECT_EQ(r.model.DeviceStepCount(), 2u);
  EXPECT_LT(r.error, 1.0 / 64);
}

}  // namespace
}  // namespace systole::compiler
