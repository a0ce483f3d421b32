// int8 requantization in the accumulator drain (toolchain/compiler/requantize.cpp): which
// HLO requantizations fuse, that the fused ones equal the interpreter exactly on the golden
// model, that the interpreter itself computes what numpy / XLA do (f32 arithmetic), and that
// the ones ACTIVATE cannot reproduce stay on the host with their reason.
#include <gmock/gmock.h>

#include <cmath>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using ::testing::HasSubstr;
using testing::ExampleFile;
using testing::ReadText;

const hlo::Literal& Element(const hlo::Literal& l, std::size_t i) { return l.shape.IsTuple() ? l.elements.at(i) : l; }

// The host steps that compute something (not parameters / constants / data movement), with reasons.
std::vector<std::string> HostReasons(const CompiledModel& model) {
  std::vector<std::string> reasons;
  for (const Step& step : model.steps) {
    if (step.kind == Step::Kind::kHost && step.reason != "value" && step.reason != "data movement") {
      reasons.push_back(step.instruction + ": " + step.reason);
    }
  }
  return reasons;
}

// Layer by layer in plain C++ with f32 arithmetic, as numpy (float32) and XLA compute it:
// s32 convolution + bias, float(acc) * scale, then the layer's rounding, ReLU, zero point,
// clip to [-128, 127], astype(int8). Independent of the interpreter.
std::vector<double> ConvRequantReference(const std::vector<double>& x, int h, int w, int cin, const std::vector<double>& wt,
                                         int k, int cout, const std::vector<double>& bias, float scale, bool half_up,
                                         float zero_point, int* ties) {
  std::vector<double> out;
  const int pad = k / 2;
  for (int oy = 0; oy < h; ++oy) {
    for (int ox = 0; ox < w; ++ox) {
      for (int co = 0; co < cout; ++co) {
        std::int32_t acc = static_cast<std::int32_t>(bias[static_cast<std::size_t>(co)]);
        for (int ky = 0; ky < k; ++ky) {
          for (int kx = 0; kx < k; ++kx) {
            const int iy = oy + ky - pad, ix = ox + kx - pad;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            for (int ci = 0; ci < cin; ++ci) {
              acc += static_cast<std::int32_t>(x[static_cast<std::size_t>((iy * w + ix) * cin + ci)] *
                                               wt[static_cast<std::size_t>(((ky * k + kx) * cin + ci) * cout + co)]);
            }
          }
        }
        const float f = static_cast<float>(acc) * scale;
        if (f - std::floor(f) == 0.5f) ++*ties;
        float r = half_up ? std::floor(f + 0.5f) : std::round(f);  // std::round: half away from zero
        r = std::max(r, 0.0f) + zero_point;
        out.push_back(static_cast<std::int8_t>(std::clamp(r, -128.0f, 127.0f)));
      }
    }
  }
  return out;
}

TEST(Requantization, InterpreterComputesWhatF32ArithmeticDoes) {
  const auto module = PrepareModule(ReadText(ExampleFile("s8_conv_requant.hlo")), "s8_conv_requant.hlo");
  const auto inputs = hlo::RandomInputs(*module, 5);
  const hlo::Literal result = hlo::Interpreter(*module).Run(inputs);
  int ties1 = 0, ties2 = 0;
  const std::vector<double> y1 = ConvRequantReference(inputs[0].values, 12, 12, 16, inputs[1].values, 3, 32,
                                                      inputs[2].values, 0.09375f, false, 0.0f, &ties1);
  const std::vector<double> y2 =
      ConvRequantReference(y1, 12, 12, 32, inputs[3].values, 1, 24, inputs[4].values, 0.01953125f, true, -128.0f, &ties2);
  EXPECT_EQ(Element(result, 0).values, y2);
  // Both layers meet exact halves, so a rounding mode that differs from the HLO's would show.
  EXPECT_GT(ties1, 50);
  EXPECT_GT(ties2, 5);
}

TEST(Requantization, BothLayersFuseAndAreExactOnTheGoldenModel) {
  const auto module = PrepareModule(ReadText(ExampleFile("s8_conv_requant.hlo")), "s8_conv_requant.hlo");
  for (std::uint64_t seed : {5u, 6u, 7u}) {
    const auto inputs = hlo::RandomInputs(*module, seed);
    const auto c = testing::CompileRunCompare(ExampleFile("s8_conv_requant.hlo"), "small-int8", "ref", inputs);
    ASSERT_EQ(c.model.DeviceStepCount(), 2u);
    EXPECT_THAT(HostReasons(c.model), ::testing::IsEmpty());
    std::vector<std::string> results;
    for (const Step& step : c.model.steps) {
      if (step.kind == Step::Kind::kDevice) results.push_back(step.device->covers.back());
    }
    EXPECT_THAT(results, ::testing::ElementsAre("y1", "y2"));  // layer 2 consumes layer 1's s8 output
    const hlo::Literal expected = hlo::Interpreter(*c.model.module).Run(inputs);
    EXPECT_EQ(testing::RelativeError(c.run.result, expected), 0.0) << "seed " << seed;  // integers: exact
  }
}

TEST(Requantization, InexactOnesStayOnTheHostWithTheirReason) {
  const std::string file = "s8_dense_requant_host.hlo";
  const auto module = PrepareModule(ReadText(ExampleFile(file)), file);
  const auto inputs = hlo::RandomInputs(*module, 5);
  const auto c = testing::CompileRunCompare(ExampleFile(file), "small-int8", "ref", inputs);
  EXPECT_EQ(c.model.DeviceStepCount(), 3u);  // the dots
  const std::vector<std::string> reasons = HostReasons(c.model);
  const auto any = [&](const std::string& text) {
    return std::any_of(reasons.begin(), reasons.end(), [&](const std::string& r) { return r.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(any("f1: requantization not fused: round-nearest-even")) << ::testing::PrintToString(reasons);
  EXPECT_TRUE(any("f2: requantization not fused: m2: a per-channel")) << ::testing::PrintToString(reasons);
  EXPECT_TRUE(any("f3: requantization not fused: scale 0.0122999996 = 825439 * 2^-26")) << ::testing::PrintToString(reasons);
  EXPECT_EQ(c.error, 0.0);
}

// A dense layer whose requantization tail is `tail` (an f32 chain from `f` ending in `out`).
std::string DenseWithTail(const std::string& tail) {
  return "HloModule t\nENTRY main {\n  x = s8[8,32] parameter(0)\n  w = s8[32,16] parameter(1)\n"
         "  d = s32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
         "  f = f32[8,16] convert(d)\n  lo = f32[] constant(-128)\n  hi = f32[] constant(127)\n"
         "  z = f32[] constant(0)\n  zb = f32[8,16] broadcast(z), dimensions={}\n" +
         tail + "  ROOT y = s8[8,16] convert(out)\n}\n";
}

struct TailCase {
  std::string name, tail, reason;  // reason "": fused
};
void PrintTo(const TailCase& c, std::ostream* os) { *os << c.name; }
class Tails : public ::testing::TestWithParam<TailCase> {};

TEST_P(Tails, FuseExactlyOrSayWhyNot) {
  const TailCase& c = GetParam();
  const std::string text = DenseWithTail(c.tail);
  const CompiledModel model = Compile(text, c.name, LoadConfig("small-int8"));
  const std::vector<std::string> reasons = HostReasons(model);
  if (c.reason.empty()) {
    EXPECT_THAT(reasons, ::testing::IsEmpty());
  } else {
    ASSERT_EQ(reasons.size() >= 1, true) << c.name;
    EXPECT_THAT(reasons.front(), HasSubstr(c.reason));
  }
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    const auto inputs = hlo::RandomInputs(*model.module, seed);
    Device ref = Device::Open("ref", LoadConfig("small-int8"));
    const RunResult run = Execute(model, ref, inputs);
    EXPECT_EQ(testing::RelativeError(run.result, hlo::Interpreter(*model.module).Run(inputs)), 0.0) << c.name;
  }
}

const std::string kScale = "  s = f32[] constant(0.125)\n  sb = f32[8,16] broadcast(s), dimensions={}\n  m = f32[8,16] multiply(f, sb)\n";
INSTANTIATE_TEST_SUITE_P(
    Requantization, Tails,
    ::testing::Values(
        TailCase{"HalfUpClampFuses", kScale + "  h = f32[] constant(0.5)\n  hb = f32[8,16] broadcast(h), dimensions={}\n"
                 "  p = f32[8,16] add(m, hb)\n  r = f32[8,16] floor(p)\n  out = f32[8,16] clamp(lo, r, hi)\n", ""},
        TailCase{"IntegerScaleWithoutRoundingFuses",
                 "  s = f32[] constant(2)\n  sb = f32[8,16] broadcast(s), dimensions={}\n  m = f32[8,16] multiply(sb, f)\n"
                 "  out = f32[8,16] clamp(lo, m, hi)\n", ""},
        TailCase{"ClampBeforeRoundingAndReluFuses", kScale + "  c = f32[8,16] maximum(m, zb)\n"
                 "  out = f32[8,16] round-nearest-afz(c)\n", ""},
        TailCase{"AwayFromZeroWithoutReluStays", kScale + "  r = f32[8,16] round-nearest-afz(m)\n"
                 "  out = f32[8,16] clamp(lo, r, hi)\n", "round-nearest-afz rounds negative halves down"},
        TailCase{"TruncatingConvertStays", kScale + "  out = f32[8,16] clamp(lo, m, hi)\n", "truncates toward zero"},
        TailCase{"FloorWithoutHalfStays", kScale + "  out = f32[8,16] floor(m)\n", "floor without a preceding + 0.5"},
        TailCase{"NonIntegralBoundStays", kScale + "  r = f32[8,16] round-nearest-afz(m)\n  b = f32[] constant(6.5)\n"
                 "  out = f32[8,16] clamp(zb, r, b)\n", "non-integral bound"},
        TailCase{"EmptyRangeStays", kScale + "  h = f32[] constant(0.5)\n  hb = f32[8,16] broadcast(h), dimensions={}\n"
                 "  p = f32[8,16] add(m, hb)\n  r = f32[8,16] floor(p)\n  a = f32[] constant(5)\n  b = f32[] constant(3)\n"
                 "  c1 = f32[8,16] clamp(lo, r, b)\n  out = f32[8,16] clamp(a, c1, hi)\n", "empty range"}),
    [](const ::testing::TestParamInfo<TailCase>& param) { return param.param.name; });

}  // namespace
}  // namespace systole::compiler
