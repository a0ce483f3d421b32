// The activation forms real JAX / XLA dumps use fuse into the drain wherever rounding to bf16
// is invisible (docs/COMPILER.md, "Output precision"). Each case checks the placement and the
// result against the interpreter on the golden model.
#include <gmock/gmock.h>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::CompileAndRun;
using testing::FindStep;
using testing::OnDevice;
using testing::Ran;
using ::testing::ElementsAre;

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
    EXPECT_EQ(FindStep(r.model, "r6")->device->output.dtype, image::DataType::kBf16);
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

// A convolution the MXU cannot run (1-D) is evaluated on the host at full precision, so the
// value it reads must stay f32: the ReLU before it stays on the host.
TEST(ActivationFusion, ReluFeedingAHostConvolutionStaysF32) {
  const CompiledModel model = Compile(R"(HloModule m
ENTRY e {
  a = f32[8,32] parameter(0)
  b = f32[32,16] parameter(1)
  d = f32[8,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  k0 = f32[] constant(0)
  z = f32[8,16] broadcast(k0), dimensions={}
  r = f32[8,16] maximum(d, z)
  x = f32[1,8,16] reshape(r)
  w = f32[3,16,4] parameter(2)
  ROOT c = f32[1,6,4] convolution(x, w), window={size=3}, dim_labels=b0f_0io->b0f
})", "m.hlo", LoadConfig("small"));
  ASSERT_TRUE(OnDevice(model, "d"));
  EXPECT_FALSE(OnDevice(model, "c"));
  EXPECT_FALSE(OnDevice(model, "r"));
  EXPECT_EQ(FindStep(model, "d")->device->output.dtype, image::DataType::kFp32);
}

// bf16 elementwise op + activation on the vector unit: one VECTOR step with the function, no
// host broadcast of the bound; the same bits as one step per instruction (rounding is monotone,
// so the function commutes with the op's rounding to bf16). Forms: ReLU after a residual add,
// ReLU6 as min(max(0, x), 6) after a subtract, a clamp alone (an activation of a parameter).
TEST(VectorFusion, ElementwiseOpAndActivationAreOneStepAndBitIdentical) {
  struct Form {
    const char* body;
    std::vector<std::string> covers;
  };
  const std::vector<Form> forms = {
      {"s = bf16[4,8,8,40] add(a, b)\n  ROOT r = bf16[4,8,8,40] maximum(s, zero)", {"s", "r"}},
      {"s = bf16[4,8,8,40] subtract(a, b)\n  m = bf16[4,8,8,40] maximum(zero, s)\n"
       "  ROOT r = bf16[4,8,8,40] minimum(m, six)",
       {"s", "m", "r"}},
      {"ROOT r = bf16[4,8,8,40] clamp(zero, a, six)", {"r"}},
  };
  for (const Form& form : forms) {
    const std::string text = std::string(R"(HloModule m
ENTRY e {
  a = bf16[4,8,8,40] parameter(0)
  b = bf16[4,8,8,40] parameter(1)
  k0 = bf16[] constant(0)
  k6 = bf16[] constant(6)
  zero = bf16[4,8,8,40] broadcast(k0), dimensions={}
  six = bf16[4,8,8,40] broadcast(k6), dimensions={}
  )") + form.body + "\n}";
    const Config config = LoadConfig("small");
    const CompiledModel fused = Compile(text, "m.hlo", config);
    ASSERT_EQ(fused.steps.size(), 1u) << form.body;
    EXPECT_EQ(fused.steps[0].device->covers, form.covers);
    CompileOptions options;
    options.fuse = false;
    const CompiledModel plain = Compile(text, "m.hlo", config, options);
    EXPECT_GT(plain.steps.size(), fused.steps.size());
    std::vector<hlo::Literal> inputs = hlo::RandomInputs(*fused.module, 6);
    for (double& v : inputs[0].values) v *= 8;  // some values above 6
    hlo::RoundAll(hlo::ElementType::kBf16, inputs[0].values);
    Device device = Device::Open("ref", config);
    const RunResult run = Execute(fused, device, inputs);
    EXPECT_EQ(testing::FirstBitDifference(run.result, Execute(plain, device, inputs).result), "") << form.body;
    EXPECT_EQ(testing::FirstBitDifference(run.result, hlo::Interpreter(*fused.module).Run(inputs)), "")
        << form.body << ": bf16 in, one fp32 op, one rounding, as the interpreter";
  }
}

}  // namespace
}  // namespace systole::compiler
