// f32 programs on the vector unit (docs/COMPILER.md, "f32 programs on the vector unit"): the
// f32 arithmetic of an inference path runs at the MXU's DEFAULT precision (bf16 operands and
// results, fp32 inside) when fusing; parameter updates, arithmetic with a full-size
// non-activation tensor and everything under --no-fuse keep f32 on the host.
#include <gmock/gmock.h>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::CompileAndRun;
using testing::FindStep;
using testing::OnDevice;
using testing::Ran;
using ::testing::HasSubstr;

// ResNet-50's head in small: a convolution with its ReLU, the global average pool (a reduce
// over the spatial dimensions of NHWC, then a divide by H·W), the classifier with its bias, and
// the softmax as JAX writes it (reduce max, maximum with -inf, subtract, exponential, reduce
// sum, divide), the divisors broadcast from [1] to [1,40]: a row of 40 elements, not a
// multiple of the UB row.
constexpr const char* kHead = R"(HloModule head
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1,7,7,32] parameter(0)
  w = f32[1,1,32,48] parameter(1)
  fc = f32[48,40] parameter(2)
  bias = f32[40] parameter(3)
  c = f32[1,7,7,48] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
  zero = f32[] constant(0)
  zeros = f32[1,7,7,48] broadcast(zero), dimensions={}
  relu = f32[1,7,7,48] maximum(c, zeros)
  pooled = f32[1,48] reduce(relu, zero), dimensions={1,2}, to_apply=add_f32
  n = f32[] constant(49)
  nb = f32[1,48] broadcast(n), dimensions={}
  mean = f32[1,48] divide(pooled, nb)
  logits = f32[1,40] dot(mean, fc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bias2 = f32[1,40] reshape(bias)
  biased = f32[1,40] add(logits, bias2)
  ninf = f32[] constant(-inf)
  rmax = f32[1] reduce(biased, ninf), dimensions={1}, to_apply=max_f32
  ninf1 = f32[1] constant({-inf})
  stable = f32[1] maximum(rmax, ninf1)
  maxb = f32[1,40] broadcast(stable), dimensions={0}
  shifted = f32[1,40] subtract(biased, maxb)
  ex = f32[1,40] exponential(shifted)
  sum = f32[1] reduce(ex, zero), dimensions={1}, to_apply=add_f32
  sumb = f32[1,40] broadcast(sum), dimensions={0}
  ROOT probs = f32[1,40] divide(ex, sumb)
})";

TEST(DefaultPrecision, AnF32ClassifierHeadComputesNothingOnTheHost) {
  const Ran r = CompileAndRun(kHead);
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  for (const char* name : {"pooled", "mean", "biased", "rmax", "stable", "shifted", "ex", "sum", "probs"}) {
    EXPECT_TRUE(OnDevice(r.model, name)) << name;
  }
  EXPECT_THAT(FindStep(r.model, "mean")->device->kernel, HasSubstr("over rows"));  // the pool: across rows
  std::printf("f32 head on the vector unit: error %.2e vs the f32 interpreter\n", r.error);
  EXPECT_LE(r.error, 1.0 / 64);  // the f32 tolerance of docs/COMPILER.md
}

TEST(DefaultPrecision, WithoutFusionTheHeadStaysF32OnTheHost) {
  CompileOptions options;
  options.fuse = false;
  const CompiledModel model = Compile(kHead, "head", LoadConfig("small"), options);
  for (const char* name : {"pooled", "mean", "biased", "ex", "probs"}) {
    const Step* step = FindStep(model, name);
    ASSERT_NE(step, nullptr) << name;
    EXPECT_EQ(step->kind, Step::Kind::kHost) << name;
  }
  EXPECT_THAT(FindStep(model, "ex")->reason, HasSubstr("kept at full precision"));
}

// A training step's update: the gradient comes from the MXU, but `w - g` combines it with a
// parameter of its own shape and becomes a new parameter; it stays f32 on the host, so small
// updates are not lost to bf16, and so does the exponential read only by it.
TEST(DefaultPrecision, ParameterUpdatesKeepF32OnTheHost) {
  const Ran r = CompileAndRun(R"(HloModule update
ENTRY e {
  x = f32[16,32] parameter(0)
  dy = f32[16,24] parameter(1)
  w = f32[32,24] parameter(2)
  g = f32[32,24] dot(x, dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  eg = f32[32,24] exponential(g)
  ROOT updated = f32[32,24] subtract(w, eg)
})");
  EXPECT_TRUE(OnDevice(r.model, "g"));
  EXPECT_FALSE(OnDevice(r.model, "eg"));
  EXPECT_FALSE(OnDevice(r.model, "updated"));
  EXPECT_THAT(FindStep(r.model, "updated")->reason, HasSubstr("kept at full precision"));
}

}  // namespace
}  // namespace systole::compiler
