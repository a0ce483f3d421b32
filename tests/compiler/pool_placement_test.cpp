// Max pools run on the device where that is exact (docs/COMPILER.md, "Max pools"): placement,
// absorbed pads, and results against the interpreter or the host path bit for bit.
#include <gmock/gmock.h>

#include <iostream>

#include "tests/compiler/compiler_test_util.hpp"
#include "tests/hlo/jax_fixture.hpp"

namespace systole::compiler {
namespace {

using testing::CompileAndRun;
using testing::FindStep;
using testing::OnDevice;
using testing::Ran;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

// The rounding really is invisible: without a bias (whose place in the fp32 sum differs
// between ACTIVATE and a raw store) the fused ReLU, the absorbed zero pad and the device pool
// give the very bits of the unfused model, whose ReLU and pad run on the host in f32.
TEST(PoolPlacement, FusedReluAndDevicePoolAreBitIdenticalToTheHostPath) {
  const std::string text = R"(HloModule m
max_fn {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[1,32,32,3] parameter(0)
  w1 = f32[3,3,3,32] parameter(1)
  c1 = f32[1,32,32,32] convolution(x, w1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  zero = f32[] constant(0)
  z1 = f32[1,32,32,32] broadcast(zero), dimensions={}
  r1 = f32[1,32,32,32] maximum(z1, c1)
  p0 = f32[1,34,34,32] pad(r1, zero), padding=0_0x1_1x1_1x0_0
  ninf = f32[] constant(-inf)
  p1 = f32[1,16,16,32] reduce-window(p0, ninf), window={size=1x3x3x1 stride=1x2x2x1}, to_apply=max_fn
  w2 = f32[3,3,32,64] parameter(2)
  ROOT c2 = f32[1,8,8,64] convolution(p1, w2), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})";
  const Config config = LoadConfig("small");
  const CompiledModel fused = Compile(text, "m.hlo", config);
  CompileOptions options;
  options.fuse = false;
  const CompiledModel plain = Compile(text, "m.hlo", config, options);
  ASSERT_EQ(fused.steps.size(), 3u) << "conv + ReLU, pad + pool, conv: nothing on the host";
  EXPECT_EQ(FindStep(plain, "r1")->kind, Step::Kind::kHost);
  EXPECT_EQ(FindStep(plain, "p0")->kind, Step::Kind::kHost);
  const std::vector<hlo::Literal> inputs = hlo::RandomInputs(*fused.module, 5);
  Device device = Device::Open("ref", config);
  EXPECT_EQ(testing::FirstBitDifference(Execute(fused, device, inputs).result, Execute(plain, device, inputs).result),
            "");
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

namespace systole::compiler {
namespace {

// A CNN's SGD step with a 2x2 max pool (tests/hlo/data/jax_dumps.py's cnn_pool_step, as JAX
// lowers it): the pool's gradient (select-and-scatter) runs on the host with the reason
// printed, every convolution and dot of the step, forward and backward, on the MXU; on `ref`
// the new parameters and the loss are within 10^-3 of JAX's on the CPU (relative to the largest
// value; measured 1.0e-4: bf16 operands on the MXU, scaled by the learning rate in the update)
// and the interpreter within 10^-6 (f32 throughout; measured 1.2e-8).
TEST(PoolGradient, CnnTrainingStepRunsTheSelectAndScatterOnTheHostAndFollowsJax) {
  const auto path = hlo::testing::kJaxData / "jax_cnn_pool_step.hlo";
  const auto module = PrepareModule(testing::ReadText(path), path.filename().string());
  const std::vector<npy::Array> arrays = npy::ReadNpz(hlo::testing::kJaxData / "jax_cnn_pool_step.npz");
  const std::vector<hlo::Instruction*> parameters = module->entry->Parameters();
  ASSERT_EQ(arrays.size(), parameters.size() + 1);
  std::vector<hlo::Literal> inputs;
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    inputs.push_back(hlo::testing::LiteralFromNpy(arrays[k], parameters[k]->shape));
  }
  const auto result = testing::CompileRunCompare(path, "small", "ref", inputs);

  std::size_t pool_gradients = 0, dots = 0;
  for (const auto& instruction : result.model.module->entry->instructions) {
    if (instruction->opcode == hlo::Opcode::kSelectAndScatter) {
      ++pool_gradients;
      const Step* step = FindStep(result.model, instruction->name);
      ASSERT_NE(step, nullptr);
      EXPECT_EQ(step->kind, Step::Kind::kHost);
      EXPECT_THAT(step->reason, HasSubstr("no device kernel"));
    } else if (instruction->opcode == hlo::Opcode::kDot || instruction->opcode == hlo::Opcode::kConvolution) {
      ++dots;
      EXPECT_TRUE(OnDevice(result.model, instruction->name)) << instruction->name;
    }
  }
  EXPECT_EQ(pool_gradients, 1u);
  EXPECT_EQ(dots, 5u);  // convolution, dense; their weight gradients; the dense layer's input gradient

  const hlo::Literal jax = hlo::testing::LiteralFromNpy(arrays.back(), result.run.result.shape);
  const double on_ref = testing::RelativeError(result.run.result, jax);
  const double interpreted = testing::RelativeError(hlo::Interpreter(*result.model.module).Run(inputs), jax);
  EXPECT_LE(on_ref, 1e-3);
  EXPECT_LE(interpreted, 1e-6);
  std::cout << "jax_cnn_pool_step.hlo vs JAX: ref " << on_ref << ", interpreter " << interpreted << "\n";
}

}  // namespace
}  // namespace systole::compiler
