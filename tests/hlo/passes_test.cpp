// The pass framework and the front end's passes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/hlo_test_util.hpp"
#include "toolchain/hlo/pass.hpp"

namespace systole::hlo {
namespace {

using testing::F32;

constexpr std::string_view kCalls = R"(
HloModule m
relu {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  ROOT m = f32[4] maximum(x, b)
}
twice {
  x = f32[4] parameter(0)
  r = f32[4] call(x), to_apply=relu
  ROOT d = f32[4] add(r, r)
}
unused {
  ROOT x = f32[] parameter(0)
}
ENTRY e {
  a = f32[4] parameter(0)
  unused_param = f32[2] parameter(1)
  c = f32[4] call(a), to_apply=twice
  dead = f32[4] negate(a)
  ROOT n = f32[4] negate(c)
}
)";

std::size_t CountOpcode(const Computation& computation, Opcode opcode) {
  std::size_t count = 0;
  for (const auto& instruction : computation.instructions) {
    if (instruction->opcode == opcode) ++count;
  }
  return count;
}

TEST(HloPasses, InlineCallsKeepsResultsAndRemovesCalls) {
  Module module = testing::ParseAndVerify(kCalls);
  const std::vector<Literal> inputs{F32({4}, {-1, 2, -3, 4}), F32({2}, {0, 0})};
  const Literal before = Interpreter(module).Run(inputs);
  const PassResult result = InlineCalls().Run(module);
  ASSERT_TRUE(result.ok()) << *result.error;
  EXPECT_TRUE(result.changed);
  Verify(module);
  EXPECT_EQ(CountOpcode(*module.entry, Opcode::kCall), 0u);
  EXPECT_EQ(CountOpcode(*module.Find("twice"), Opcode::kCall), 0u);
  EXPECT_EQ(Interpreter(module).Run(inputs).values, before.values);
  EXPECT_EQ(before.values, (std::vector<double>{-0.0, -4, -0.0, -8}));
  EXPECT_FALSE(InlineCalls().Run(module).changed);
}

TEST(HloPasses, DeadCodeEliminationKeepsParametersAndDropsUnusedComputations) {
  Module module = testing::ParseAndVerify(kCalls);
  ASSERT_TRUE(InlineCalls().Run(module).ok());
  const PassResult result = DeadCodeElimination().Run(module);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result.changed);
  EXPECT_EQ(module.entry->Find("dead"), nullptr);
  EXPECT_NE(module.entry->Find("unused_param"), nullptr);
  ASSERT_EQ(module.computations.size(), 1u);  // relu, twice and unused are no longer called
  EXPECT_EQ(module.computations[0].get(), module.entry);
  Verify(module);
  EXPECT_FALSE(DeadCodeElimination().Run(module).changed);
}

TEST(HloPasses, ConstantFoldingScalarArithmeticAndSplats) {
  Module module = testing::ParseAndVerify(R"(
ENTRY e {
  a = f32[3] parameter(0)
  two = f32[] constant(2)
  three = f32[] constant(3)
  six = f32[] multiply(two, three)
  root_six = f32[] sqrt(six)
  b2 = f32[3] broadcast(two), dimensions={}
  b3 = f32[3] broadcast(three), dimensions={}
  sum = f32[3] add(b2, b3)
  scaled = f32[3] multiply(a, sum)
  bs = f32[3] broadcast(root_six), dimensions={}
  ROOT out = f32[3] add(scaled, bs)
})");
  const std::vector<Literal> inputs{F32({3}, {1, 2, 3})};
  const Literal before = Interpreter(module).Run(inputs);
  Pipeline pipeline("fold", /*until_fixed_point=*/true);
  pipeline.Add<ConstantFolding>();
  pipeline.Add<DeadCodeElimination>();
  const PassResult result = pipeline.Run(module);
  ASSERT_TRUE(result.ok()) << *result.error;
  EXPECT_TRUE(result.changed);
  EXPECT_EQ(Interpreter(module).Run(inputs).values, before.values);
  // Left: a, two constants (5 and sqrt 6), two broadcasts of them, multiply, add.
  EXPECT_EQ(CountOpcode(*module.entry, Opcode::kConstant), 2u);
  EXPECT_EQ(CountOpcode(*module.entry, Opcode::kMultiply), 1u);
  EXPECT_EQ(CountOpcode(*module.entry, Opcode::kSqrt), 0u);
  EXPECT_EQ(module.entry->instructions.size(), 7u);
}

TEST(HloPasses, ConstantFoldingLeavesElidedConstantsAlone) {
  Module module = testing::ParseAndVerify(R"(
ENTRY e {
  c = f32[4096] constant({...})
  ROOT n = f32[4096] negate(c)
})");
  EXPECT_FALSE(ConstantFolding().Run(module).changed);
}

class BreakShapes : public Pass {
 public:
  std::string_view name() const override { return "break-shapes"; }
  PassResult Run(Module& module) override {
    module.entry->root->shape.dims = {99};
    return PassResult::Changed();
  }
};

class FailingPass : public Pass {
 public:
  std::string_view name() const override { return "refuses"; }
  PassResult Run(Module&) override { return PassResult::Error("cannot lower this"); }
};

TEST(HloPasses, PipelineVerifiesAfterEachPassAndNamesThePass) {
  Module module = testing::ParseAndVerify("ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n");
  Pipeline pipeline("canonicalize");
  pipeline.Add<DeadCodeElimination>();
  pipeline.Add<BreakShapes>();
  const PassResult result = pipeline.Run(module);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(*result.error, ::testing::HasSubstr("canonicalize/break-shapes: the module no longer verifies"));
  EXPECT_THAT(*result.error, ::testing::HasSubstr("printed shape f32[99] differs from the inferred shape f32[2]"));

  Pipeline failing("lower");
  failing.Add<FailingPass>();
  EXPECT_EQ(*failing.Run(module).error, "lower/refuses: cannot lower this");
}

class AlwaysChanges : public Pass {
 public:
  std::string_view name() const override { return "churn"; }
  PassResult Run(Module&) override { return PassResult::Changed(); }
};

TEST(HloPasses, FixedPointPipelineGivesUpAfterItsIterationLimit) {
  Module module = testing::ParseAndVerify("ENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n");
  Pipeline pipeline("loop", /*until_fixed_point=*/true, /*max_iterations=*/3);
  pipeline.Add<AlwaysChanges>();
  EXPECT_EQ(*pipeline.Run(module).error, "loop: still changing after 3 iterations");
}

}  // namespace
}  // namespace systole::hlo
