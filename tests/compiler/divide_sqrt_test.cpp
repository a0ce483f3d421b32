// a / sqrt(b) on the vector unit is a · rsqrt(b), as XLA's algebraic simplifier rewrites it: the
// sqrt's step stores rsqrt(b) when every use of it is a divisor, and the divide is one multiply.
// Two roundings to bf16, as the HLO has; sqrt as 1 / rsqrt and the divide as a · (1 / b) took
// four, and layer norm (corpus 08) at the RTL tests' seed 9 left the 2^-6 bound (1.65e-2).
#include <gmock/gmock.h>

#include <cstdio>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::CompileAndRun;
using testing::CompileRunCompare;
using testing::CorpusFile;
using testing::FindStep;
using testing::Ran;
using testing::ReadText;
using ::testing::HasSubstr;

constexpr double kFloatTolerance = 1.0 / 64;  // docs/COMPILER.md, f32 / bf16 corpus files on small

// Seed 9 is the RTL corpus tests' (ExpectRtlMatchesRefAndInterpreter), 7 the one a Python
// measurement used; 2024, the golden-model corpus tests' (Corpus.*/f08), is checked there. 08 is
// one fused layer-norm step since branch `vector-tail`, with the step-by-step lowering's
// roundings (a / sqrt(b) as a · rsqrt(b); LayerNormFusion.* checks the two are bit-identical).
TEST(DivideBySqrt, LayerNormMeetsTheBoundAtEverySeedTheTestsUse) {
  const std::string file = "08_layer_norm_bf16.hlo";
  const auto module = PrepareModule(ReadText(CorpusFile(file)), file);
  for (const std::uint64_t seed : {7u, 9u}) {
    const auto result = CompileRunCompare(CorpusFile(file), "small", "ref", hlo::RandomInputs(*module, seed));
    std::printf("%s on ref, seed %llu: error %.3e vs the interpreter\n", file.c_str(),
                static_cast<unsigned long long>(seed), result.error);
    EXPECT_LE(result.error, kFloatTolerance) << "seed " << seed;
    EXPECT_EQ(result.model.DeviceStepCount(), 1u);
    const Step* divide = FindStep(result.model, "div.11");
    ASSERT_NE(divide, nullptr);
    ASSERT_NE(divide->device, nullptr);
    EXPECT_THAT(divide->device->kernel, HasSubstr("layer norm 4096x768"));
  }
}

constexpr const char* kNormalize = R"(HloModule normalize
ENTRY e {
  x = bf16[8,64] parameter(0)
  v = bf16[8] parameter(1)
  one = bf16[] constant(1.5)
  ones = bf16[8] broadcast(one), dimensions={}
  pos = bf16[8] add(v, ones)
  s = bf16[8] sqrt(pos)
  r = bf16[8,1] reshape(s)
  rb = bf16[8,1] broadcast(r), dimensions={0,1}
  r2 = bf16[8] reshape(rb)
  b = bf16[8,64] broadcast(r2), dimensions={0}
  ROOT y = bf16[8,64] divide(x, b)
}
)";

// Each element is bf16(x · bf16(rsqrt(v))): the interpreter's bf16(x / bf16(sqrt(v))) within one
// bf16 rounding of each (2^-8 relative), every step on the device.
TEST(DivideBySqrt, IsOneMultiplyByTheStoredRsqrt) {
  const Ran r = CompileAndRun(kNormalize, 5);
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  EXPECT_THAT(FindStep(r.model, "s")->device->kernel, HasSubstr("sqrt as rsqrt"));
  EXPECT_THAT(FindStep(r.model, "y")->device->kernel, HasSubstr("divide as multiply by rsqrt"));
  EXPECT_GT(r.error, 0.0);  // the roundings differ from the HLO's somewhere
  EXPECT_LE(r.error, 1.0 / 128);
}

// A sqrt read by anything but a divisor keeps its value: 1 / rsqrt, and the divide a · (1 / b).
TEST(DivideBySqrt, ASqrtReadElsewhereStaysASqrt) {
  std::string text = kNormalize;
  text.replace(text.find("  ROOT y"), std::string::npos,
               "  y = bf16[8,64] divide(x, b)\n  ROOT t = (bf16[8,64], bf16[8]) tuple(y, s)\n}\n");
  const Ran r = CompileAndRun(text, 5);
  EXPECT_EQ(r.model.HostStepCount(HostWork::kCompute), 0u);
  EXPECT_THAT(FindStep(r.model, "s")->device->kernel, ::testing::Not(HasSubstr("rsqrt")));
  EXPECT_THAT(FindStep(r.model, "y")->device->kernel, ::testing::Not(HasSubstr("rsqrt")));
  EXPECT_LE(r.error, 1.0 / 64);
}

}  // namespace
}  // namespace systole::compiler
