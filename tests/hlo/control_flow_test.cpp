// `while` and `conditional` on the interpreter: JAX's lax.fori_loop, lax.cond and lax.switch as
// the pinned JAX writes them (tests/hlo/data/jax_{fori_loop,cond,switch}.hlo), against JAX's own
// outputs on the CPU for the same inputs (the .npz beside each, written by jax_dumps.py); and the
// malformed forms, each refused with the instruction and what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/hlo/hlo_test_util.hpp"
#include "tests/hlo/jax_fixture.hpp"

namespace systole::hlo {
namespace {

using ::testing::HasSubstr;

// Runs `name`.hlo on every input set of `name`.npz and compares with JAX's output.
void ExpectJaxResults(const std::string& name) {
  const std::vector<testing::JaxRun> runs = testing::RunJaxFixture(name);
  ASSERT_FALSE(runs.empty());
  for (std::size_t run = 0; run < runs.size(); ++run) {
    SCOPED_TRACE(name + " run " + std::to_string(run));
    const Literal& got = runs[run].got;
    const npy::Array& expected = runs[run].expected;
    ASSERT_EQ(got.values.size(), expected.values.size());
    double scale = 0, worst = 0;
    for (std::size_t k = 0; k < got.values.size(); ++k) {
      scale = std::max(scale, std::abs(expected.values[k]));
      worst = std::max(worst, std::abs(got.values[k] - expected.values[k]));
    }
    // JAX's tanh and sin are float32 approximations; the interpreter rounds exact results.
    EXPECT_LE(worst, 1e-5 * scale);
  }
}

TEST(ControlFlow, ForiLoopMatchesJax) { ExpectJaxResults("jax_fori_loop"); }
TEST(ControlFlow, CondTakesBothBranchesAsJaxDoes) { ExpectJaxResults("jax_cond"); }
TEST(ControlFlow, SwitchClampsItsIndexAsJaxDoes) { ExpectJaxResults("jax_switch"); }

TEST(ControlFlow, ConditionAndBodyMayComeInEitherOrder) {
  const Literal result = testing::RunText(R"(HloModule m
body { s = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(s, one) }
cond { s = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(s, ten), direction=LT }
ENTRY e { zero = s32[] constant(0)
  ROOT w = s32[] while(zero), body=body, condition=cond }
)");
  EXPECT_EQ(result.values.at(0), 10.0);
}

TEST(ControlFlow, MalformedLoopsAndBranchesAreRefused) {
  const std::string head = R"(HloModule m
body { s = s32[] parameter(0)
  ROOT n = s32[] add(s, s) }
cond { s = s32[] parameter(0)
  ROOT c = s32[] copy(s) }
flt { s = f32[] parameter(0)
  ROOT n = f32[] negate(s) }
)";
  auto error = [&](const std::string& entry) {
    return testing::ErrorOf([&] { testing::ParseAndVerify(head + entry); });
  };
  EXPECT_THAT(error("ENTRY e { z = s32[] constant(0)\n  ROOT w = s32[] while(z), body=body }\n"),
              HasSubstr("instruction 'w' names only one of its two computations (condition= and body=)"));
  EXPECT_THAT(error("ENTRY e { z = s32[] constant(0)\n  ROOT w = s32[] while(z), condition=cond, body=body }\n"),
              HasSubstr("condition 'cond' must return pred[], returns s32[]"));
  EXPECT_THAT(error("ENTRY e { z = f32[] constant(0)\n  ROOT w = f32[] while(z), condition=cond, body=flt }\n"),
              HasSubstr("condition 'cond' takes s32[] but is given f32[]"));
  EXPECT_THAT(error("ENTRY e { p = pred[] constant(true)\n  z = s32[] constant(0)\n"
                    "  ROOT c = s32[] conditional(p, z, z), branch_computations={body, body, body} }\n"),
              HasSubstr("a pred[] conditional needs true_computation= and false_computation=, has 3"));
  EXPECT_THAT(error("ENTRY e { i = s32[] constant(0)\n  z = s32[] constant(0)\n  f = f32[] constant(0)\n"
                    "  ROOT c = s32[] conditional(i, z, f), branch_computations={body, flt} }\n"),
              HasSubstr("branch 1 returns f32[] but branch 0 returns s32[]"));
}

TEST(ControlFlow, ALoopThatNeverEndsIsReportedNotRun) {
  const Module module = testing::ParseAndVerify(R"(HloModule m
body { ROOT s = s32[] parameter(0) }
cond { s = s32[] parameter(0)
  ROOT t = pred[] constant(true) }
ENTRY e { z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body }
)");
  // The default bound (Interpreter::kDefaultWhileIterationLimit, 10^6) takes seconds to reach;
  // a small one shows the same error.
  EXPECT_THAT(testing::ErrorOf([&] { Interpreter(module, 1000).Run({}); }),
              HasSubstr("test.hlo:6:8: while 'w' is still running after 1000 iterations"));
}

}  // namespace
}  // namespace systole::hlo
