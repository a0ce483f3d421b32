// A layer norm along the last dimension, as JAX writes it, is one device step (codegen
// LayerNorm) with the step-by-step lowering's roundings: the same bits with its intermediates
// kept in the unified buffer. Both forms JAX writes are matched — (x − mean) / sqrt(var + ε)
// (the corpus's 08) and (x − mean) · rsqrt(var + ε) · γ + β (flax/haiku style, the encoder
// layer) — and an intermediate read elsewhere keeps the steps apart.
#include <gmock/gmock.h>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::CompileAndRun;
using testing::FindStep;
using testing::FirstBitDifference;
using testing::Ran;
using ::testing::HasSubstr;

// (x − mean) · rsqrt(var + ε) · γ + β over rows of 100 (6 UB rows and a tail of 4 on small), in
// bf16 with the sums in f32, as JAX 0.10 writes a layer norm (d computed twice).
constexpr const char* kLayerNorm = R"(HloModule layer_norm
add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = bf16[3,20,100] parameter(0)
  gamma = bf16[100] parameter(1)
  beta = bf16[100] parameter(2)
  xf = f32[3,20,100] convert(x)
  zero = f32[] constant(0)
  s = f32[3,20] reduce(xf, zero), dimensions={2}, to_apply=add_f
  s1 = f32[3,20,1] reshape(s)
  n = f32[] constant(100)
  nb = f32[3,20,1] broadcast(n), dimensions={}
  m = f32[3,20,1] divide(s1, nb)
  mb16 = bf16[3,20,1] convert(m)
  m2 = bf16[3,20] reshape(mb16)
  mb = bf16[3,20,100] broadcast(m2), dimensions={0,1}
  d = bf16[3,20,100] subtract(x, mb)
  mb_twin = bf16[3,20,100] broadcast(m2), dimensions={0,1}
  d_twin = bf16[3,20,100] subtract(x, mb_twin)
  sq = bf16[3,20,100] multiply(d_twin, d_twin)
  sqf = f32[3,20,100] convert(sq)
  v = f32[3,20] reduce(sqf, zero), dimensions={2}, to_apply=add_f
  v1 = f32[3,20,1] reshape(v)
  var = f32[3,20,1] divide(v1, nb)
  var16 = bf16[3,20,1] convert(var)
  eps = bf16[] constant(1e-05)
  epsb = bf16[3,20,1] broadcast(eps), dimensions={}
  ve = bf16[3,20,1] add(var16, epsb)
  r = bf16[3,20,1] rsqrt(ve)
  r2 = bf16[3,20] reshape(r)
  rb = bf16[3,20,100] broadcast(r2), dimensions={0,1}
  y = bf16[3,20,100] multiply(d, rb)
  g1 = bf16[1,100] reshape(gamma)
  g2 = bf16[100] reshape(g1)
  gb = bf16[3,20,100] broadcast(g2), dimensions={2}
  yg = bf16[3,20,100] multiply(y, gb)
  bb = bf16[3,20,100] broadcast(beta), dimensions={2}
  ROOT out = bf16[3,20,100] add(yg, bb)
}
)";

TEST(LayerNormFusion, WithGammaAndBetaIsOneDeviceStep) {
  const Ran r = CompileAndRun(kLayerNorm, 4);
  EXPECT_EQ(r.model.DeviceStepCount(), 1u);
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  const Step* out = FindStep(r.model, "out");
  ASSERT_NE(out, nullptr);
  ASSERT_NE(out->device, nullptr);
  EXPECT_THAT(out->device->kernel, HasSubstr("layer norm 60x100 ·γ +β"));
  EXPECT_THAT(out->device->covers, ::testing::Contains("d_twin"));
  EXPECT_THAT(out->device->covers, ::testing::Contains("yg"));
  EXPECT_LE(r.error, 1.0 / 64);
}

// The same program with var also returned keeps every instruction its own step: the two give
// the same bits, and the fused one is cheaper (the golden model's estimate) and moves fewer
// bytes through device memory.
TEST(LayerNormFusion, EqualsTheStepByStepLoweringBitForBit) {
  std::string apart = kLayerNorm;
  apart.replace(apart.find("  ROOT out"), std::string::npos,
                "  out = bf16[3,20,100] add(yg, bb)\n  ROOT t = (bf16[3,20,100], bf16[3,20,1]) tuple(out, var16)\n}\n");
  const Ran fused = CompileAndRun(kLayerNorm, 6);
  const Ran stepwise = CompileAndRun(apart, 6);
  ASSERT_EQ(fused.model.DeviceStepCount(), 1u);
  EXPECT_GT(stepwise.model.DeviceStepCount(), 6u) << "the tuple should keep the steps apart";
  EXPECT_EQ(stepwise.model.HostStepCount(HostWork::kCompute), 0u);
  EXPECT_EQ(FirstBitDifference(fused.run.result, stepwise.run.result.elements.at(0)), "");
  EXPECT_LT(fused.model.TotalEstimate().cycles, stepwise.model.TotalEstimate().cycles);
  EXPECT_LT(fused.model.DeviceTensorBytes(), stepwise.model.DeviceTensorBytes());
}

// The divide-by-sqrt form of the corpus's 08, without γ and β, and with ε's add and the
// normalising divide in the other operand order.
TEST(LayerNormFusion, TheDivideBySqrtFormIsMatchedToo) {
  std::string text = kLayerNorm;
  const auto swap = [&](const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  swap("  ve = bf16[3,20,1] add(var16, epsb)", "  ve = bf16[3,20,1] add(epsb, var16)");
  swap("  r = bf16[3,20,1] rsqrt(ve)", "  r = bf16[3,20,1] sqrt(ve)");
  swap("  y = bf16[3,20,100] multiply(d, rb)", "  ROOT y = bf16[3,20,100] divide(d, rb)");
  text.erase(text.find("  g1 ="), text.rfind("}") - text.find("  g1 ="));
  const Ran r = CompileAndRun(text, 8);
  EXPECT_EQ(r.model.DeviceStepCount(), 1u);
  const Step* y = FindStep(r.model, "y");
  ASSERT_NE(y, nullptr);
  ASSERT_NE(y->device, nullptr);
  EXPECT_THAT(y->device->kernel, HasSubstr("layer norm 60x100"));
  EXPECT_THAT(y->device->kernel, ::testing::Not(HasSubstr("γ")));
  EXPECT_LE(r.error, 1.0 / 64);
}

// A mean that is not the one subtracted (the square's subtract uses another row value) is not
// a layer norm: its steps run one by one.
TEST(LayerNormFusion, AVarianceOfSomethingElseIsNotMatched) {
  std::string text = kLayerNorm;
  text.replace(text.find("  d_twin = bf16[3,20,100] subtract(x, mb_twin)"),
               std::string("  d_twin = bf16[3,20,100] subtract(x, mb_twin)").size(),
               "  d_twin = bf16[3,20,100] subtract(x, x)");
  const auto model = Compile(text, "test.hlo", LoadConfig("small"));
  for (const Step& step : model.steps) {
    if (step.device != nullptr) {
      EXPECT_THAT(step.device->kernel, ::testing::Not(HasSubstr("layer norm")));
    }
  }
  EXPECT_GT(model.DeviceStepCount(), 3u);
}

// Scalar multiplies and divides (no last dimension to normalise over) are looked at and left
// alone; a rank-0 shape once crashed the matcher (a training step's learning-rate arithmetic).
TEST(LayerNormFusion, ScalarArithmeticIsLeftAlone) {
  const auto model = Compile(R"(HloModule scalars
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] multiply(a, b)
  r = f32[] rsqrt(b)
  q = f32[] multiply(m, r)
  ROOT d = f32[] divide(q, a)
}
)",
                             "test.hlo", LoadConfig("small"));
  EXPECT_EQ(model.DeviceStepCount(), 0u);
}

}  // namespace
}  // namespace systole::compiler
