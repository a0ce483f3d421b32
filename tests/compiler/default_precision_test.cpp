// f32 programs on the vector unit (docs/COMPILER.md, "f32 programs on the vector unit"): the
// f32 arithmetic of an inference path runs at the MXU's DEFAULT precision (bf16 operands and
// results, fp32 inside) when fusing; parameter updates, arithmetic with a full-size
// non-activation tensor and everything under --no-fuse keep f32 on the host. A causal mask
// (`jnp.where(jnp.tril(...), scores, -inf)`) is an add of a constant 0 / -inf bias, and GELU's
// tanh form as JAX writes it one VECTOR math=gelu_tanh.
#include <gmock/gmock.h>

#include "tests/compiler/compiler_test_util.hpp"
#include "tests/hlo/jax_fixture.hpp"

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

// A causal attention block as JAX writes it (tests/hlo/data/jax_dumps.py, causal_attention):
// the mask, compares of iotas, folds into a constant bias added on the vector unit, and the
// whole block computes nothing on the host. On ref with JAX's inputs it is within the f32
// tolerance of JAX's own output and of the interpreter; every masked probability is exactly 0.
TEST(CausalMask, AttentionWithAConstantMaskComputesNothingOnTheHost) {
  const std::string name = "jax_causal_attention";
  const auto path = hlo::testing::kJaxData / (name + ".hlo");
  const auto module = PrepareModule(testing::ReadText(path), name);
  const std::vector<npy::Array> arrays = npy::ReadNpz(hlo::testing::kJaxData / (name + ".npz"));
  const std::vector<hlo::Instruction*> parameters = module->entry->Parameters();
  const auto result = testing::CompileRunCompare(path, "small", "ref", hlo::testing::FirstJaxRun(*module, name).first);
  EXPECT_EQ(result.model.HostStepCount(HostWork::kCompute), 0u);
  bool masked_on_device = false;
  for (const Step& step : result.model.steps) {
    if (step.device && step.device->kernel.starts_with("vector add mask bias")) masked_on_device = true;
  }
  EXPECT_TRUE(masked_on_device);
  const std::vector<double>& jax = arrays[parameters.size()].values;
  hlo::Literal jax_output = result.run.result;
  jax_output.values = jax;
  const double error_vs_jax = testing::RelativeError(result.run.result, jax_output);
  std::printf("causal attention on ref: error %.2e vs the interpreter, %.2e vs JAX\n", result.error, error_vs_jax);
  EXPECT_LE(result.error, 1.0 / 64);
  EXPECT_LE(error_vs_jax, 1.0 / 64);
  // The first query attends to the first key only: its output row is v's first row, rounded.
  const std::int64_t width = parameters[2]->shape.dims[1];
  for (std::int64_t j = 0; j < width; ++j) {
    EXPECT_NEAR(result.run.result.values[static_cast<std::size_t>(j)], arrays[2].values[static_cast<std::size_t>(j)],
                std::abs(arrays[2].values[static_cast<std::size_t>(j)]) / 128 + 1e-6);
  }
}

// The mask's exact semantics: kept elements pass (x + 0), masked ones become -inf, in either
// operand order of the select; a mask that is a parameter (known only at run time) is not a
// constant bias and stays on the host with its reason.
TEST(CausalMask, KeptElementsPassMaskedOnesBecomeMinusInfinity) {
  const std::string text = R"(HloModule masks
ENTRY e {
  x = bf16[4,16] parameter(0)
  m = pred[4,16] parameter(1)
  r = s32[4,16] iota(), iota_dimension=0
  c = s32[4,16] iota(), iota_dimension=1
  causal = pred[4,16] compare(r, c), direction=GE
  ninf = bf16[] constant(-inf)
  fill = bf16[4,16] broadcast(ninf), dimensions={}
  kept = bf16[4,16] select(causal, x, fill)
  flipped = bf16[4,16] select(causal, fill, x)
  runtime = bf16[4,16] select(m, x, fill)
  ROOT t = (bf16[4,16], bf16[4,16], bf16[4,16]) tuple(kept, flipped, runtime)
})";
  const Ran r = CompileAndRun(text);
  EXPECT_TRUE(OnDevice(r.model, "kept"));
  EXPECT_TRUE(OnDevice(r.model, "flipped"));
  EXPECT_FALSE(OnDevice(r.model, "runtime"));
  // bf16 in, bf16 out, x + 0 and x + -inf: exactly the select's values.
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(r.run.result.elements.at(k).values, r.expected.elements.at(k).values) << "output " << k;
  }
}

// jax.nn.gelu(x @ w, approximate=True) as JAX 0.10 writes it (bf16: its constants rounded to
// 0.04468 and 0.7969), and the same form with an intermediate read twice.
std::string GeluTanh(const std::string& type, const std::string& extra_root = "") {
  const bool bf16 = type == "bf16";
  return "HloModule gelu\nENTRY e {\n  x = " + type + "[16,32] parameter(0)\n  w = " + type +
         "[32,48] parameter(1)\n  d = " + type + "[16,48] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
         "  p2 = " + type + "[16,48] multiply(d, d)\n  p3 = " + type + "[16,48] multiply(p2, d)\n"
         "  c1 = " + type + "[] constant(" + (bf16 ? "0.04468" : "0.044715") + ")\n  c1b = " + type +
         "[16,48] broadcast(c1), dimensions={}\n  m = " + type + "[16,48] multiply(p3, c1b)\n  a = " + type +
         "[16,48] add(d, m)\n  c2 = " + type + "[] constant(" + (bf16 ? "0.7969" : "0.797884583") + ")\n  c2b = " +
         type + "[16,48] broadcast(c2), dimensions={}\n  s = " + type + "[16,48] multiply(a, c2b)\n  t = " + type +
         "[16,48] tanh(s)\n  one = " + type + "[] constant(1)\n  oneb = " + type +
         "[16,48] broadcast(one), dimensions={}\n  u = " + type + "[16,48] add(t, oneb)\n  half = " + type +
         "[] constant(0.5)\n  halfb = " + type + "[16,48] broadcast(half), dimensions={}\n  h = " + type +
         "[16,48] multiply(u, halfb)\n  y = " + type + "[16,48] multiply(d, h)\n" +
         (extra_root.empty() ? "  ROOT r = (" + type + "[16,48]) tuple(y)\n"
                             : "  ROOT r = (" + type + "[16,48], " + type + "[16,48]) tuple(y, " + extra_root + ")\n") +
         "}\n";
}

TEST(GeluTanh, JaxsTanhFormIsOneVectorStep) {
  for (const std::string type : {"bf16", "f32"}) {
    SCOPED_TRACE(type);
    const Ran r = CompileAndRun(GeluTanh(type));
    const Step* step = FindStep(r.model, "y");
    ASSERT_TRUE(step != nullptr && step->device);
    EXPECT_THAT(step->device->kernel, HasSubstr("gelu (tanh form)"));
    EXPECT_EQ(FindStep(r.model, "t"), step);  // the tanh is part of it
    EXPECT_EQ(r.model.DeviceStepCount(), 2u);  // the dot and the GELU
    std::printf("%s gelu (tanh form): error %.2e vs the interpreter\n", type.c_str(), r.error);
    EXPECT_LE(r.error, 1.0 / 64);
  }
}

TEST(GeluTanh, AnIntermediateReadElsewhereKeepsTheStepsApart) {
  const Ran r = CompileAndRun(GeluTanh("bf16", "t"));
  EXPECT_THAT(FindStep(r.model, "y")->device->kernel, ::testing::Not(HasSubstr("gelu")));
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);  // still on the vector unit, step by step
  EXPECT_LE(r.error, 1.0 / 64);
}

}  // namespace
}  // namespace systole::compiler
