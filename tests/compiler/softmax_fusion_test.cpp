// A softmax along the last dimension, as JAX writes it, is one device step (codegen Softmax):
// its intermediates stay in the unified buffer instead of going through device memory step by
// step. For a bf16 program the result is bit-identical to the step-by-step lowering (same
// roundings); an intermediate read elsewhere, or a reduction over another dimension, keeps the
// steps apart.
#include <gmock/gmock.h>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::CompileAndRun;
using testing::FindStep;
using testing::FirstBitDifference;
using testing::Ran;
using ::testing::HasSubstr;

// jax.nn.softmax(x, axis=-1) on bf16 scores of 40 rows of 100 (6 UB rows and a tail of 4 on
// small), as JAX 0.10 writes it: the sum in f32 of the converted exponentials.
constexpr const char* kSoftmax = R"(HloModule softmax
max_f {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = bf16[4,10,100] parameter(0)
  ninf = bf16[] constant(-inf)
  rmax = bf16[4,10] reduce(x, ninf), dimensions={2}, to_apply=max_f
  ninfs = bf16[4,10] broadcast(ninf), dimensions={}
  m = bf16[4,10] maximum(rmax, ninfs)
  m1 = bf16[4,10,1] reshape(m)
  m2 = bf16[4,10] reshape(m1)
  mb = bf16[4,10,100] broadcast(m2), dimensions={0,1}
  t = bf16[4,10,100] subtract(x, mb)
  ex = bf16[4,10,100] exponential(t)
  exf = f32[4,10,100] convert(ex)
  zero = f32[] constant(0)
  s = f32[4,10] reduce(exf, zero), dimensions={2}, to_apply=add_f
  s1 = f32[4,10,1] reshape(s)
  sb16 = bf16[4,10,1] convert(s1)
  s2 = bf16[4,10] reshape(sb16)
  sb = bf16[4,10,100] broadcast(s2), dimensions={0,1}
  ROOT y = bf16[4,10,100] divide(ex, sb)
}
)";

TEST(SoftmaxFusion, IsOneDeviceStepWithNoHostStepBetween) {
  const Ran r = CompileAndRun(kSoftmax, 11);
  EXPECT_EQ(r.model.DeviceStepCount(), 1u);
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  EXPECT_EQ(r.model.HostStepCount(HostWork::kDataMovement), 0u) << "the row broadcasts stay in the unified buffer";
  const Step* y = FindStep(r.model, "y");
  ASSERT_NE(y, nullptr);
  ASSERT_NE(y->device, nullptr);
  EXPECT_THAT(y->device->kernel, HasSubstr("softmax 40x100"));
  EXPECT_THAT(y->device->covers, ::testing::ElementsAre("rmax", "m", "m1", "m2", "mb", "t", "ex", "exf", "s", "s1",
                                                        "sb16", "s2", "sb", "y"));
  EXPECT_LE(r.error, 1.0 / 64);
}

// Fused and step by step (the same program with one intermediate also returned, which keeps
// every instruction its own step) give the same bits, and the fused one moves fewer bytes
// through device memory and takes fewer cycles (the golden model's estimate).
TEST(SoftmaxFusion, ABf16SoftmaxEqualsTheStepByStepLoweringBitForBit) {
  std::string apart = kSoftmax;
  apart.replace(apart.find("  ROOT y"), std::string::npos,
                "  y = bf16[4,10,100] divide(ex, sb)\n  ROOT out = (bf16[4,10,100], bf16[4,10]) tuple(y, rmax)\n}\n");
  const Ran fused = CompileAndRun(kSoftmax, 5);
  const Ran stepwise = CompileAndRun(apart, 5);
  ASSERT_EQ(fused.model.DeviceStepCount(), 1u);
  EXPECT_GT(stepwise.model.DeviceStepCount(), 4u) << "the tuple should keep the steps apart";
  EXPECT_EQ(stepwise.model.HostStepCount(HostWork::kCompute), 0u);
  const hlo::Literal& stepwise_y = stepwise.run.result.elements.at(0);
  EXPECT_EQ(FirstBitDifference(fused.run.result, stepwise_y), "");
  EXPECT_LT(fused.model.TotalEstimate().cycles, stepwise.model.TotalEstimate().cycles);
  EXPECT_LT(fused.model.DeviceTensorBytes(), stepwise.model.DeviceTensorBytes());
}

// The same softmax over the middle dimension (a reduction that is not along rows) is not
// matched: its steps run one by one.
TEST(SoftmaxFusion, AReductionOverAnotherDimensionIsNotMatched) {
  std::string text = kSoftmax;
  const auto swap = [&](const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  swap("dimensions={2}", "dimensions={1}");
  swap("bf16[4,10] ", "bf16[4,100] ");
  swap("f32[4,10] ", "f32[4,100] ");
  swap("[4,10,1]", "[4,1,100]");
  swap("dimensions={0,1}", "dimensions={0,2}");
  const auto model = Compile(text, "test.hlo", LoadConfig("small"));
  const Step* y = FindStep(model, "y");
  ASSERT_NE(y, nullptr);
  for (const Step& step : model.steps) {
    if (step.device != nullptr) {
      EXPECT_THAT(step.device->kernel, ::testing::Not(HasSubstr("softmax")));
    }
  }
  EXPECT_GT(model.DeviceStepCount(), 3u);
}

}  // namespace
}  // namespace systole::compiler
