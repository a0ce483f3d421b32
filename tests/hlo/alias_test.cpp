// The module header's input_output_alias (JAX's donated arguments): parsed as XLA prints it
// and verified against the entry computation's parameters and result.
#include <gmock/gmock.h>

#include "tests/hlo/hlo_test_util.hpp"

namespace systole::hlo {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::ParseAndVerify;

std::string Step(const std::string& aliases) {
  return "HloModule step, input_output_alias=" + aliases +
         ", entry_computation_layout={(f32[2]{0}, f32[])->(f32[2]{0}, f32[])}\n"
         "ENTRY main {\n"
         "  p = f32[2]{0} parameter(0)\n"
         "  lr = f32[] parameter(1)\n"
         "  b = f32[2]{0} broadcast(lr), dimensions={}\n"
         "  s = f32[2]{0} subtract(p, b)\n"
         "  ROOT t = (f32[2]{0}, f32[]) tuple(s, lr)\n"
         "}\n";
}

TEST(InputOutputAlias, ParsesWhatXlaPrints) {
  const Module module = ParseAndVerify(Step("{ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }"));
  ASSERT_EQ(module.input_output_aliases.size(), 2u);
  EXPECT_THAT(module.input_output_aliases[0].output_index, ::testing::ElementsAre(0));
  EXPECT_EQ(module.input_output_aliases[0].parameter, 0);
  EXPECT_TRUE(module.input_output_aliases[0].parameter_index.empty());
  EXPECT_FALSE(module.input_output_aliases[0].must_alias);
  EXPECT_TRUE(module.input_output_aliases[1].must_alias);
  EXPECT_EQ(module.input_output_aliases[1].location.line, 1u);
}

TEST(InputOutputAlias, OlderDumpsWithoutTheKindAndEmptyLists) {
  EXPECT_EQ(ParseAndVerify(Step("{ {0}: (0, {}) }")).input_output_aliases.size(), 1u);
  EXPECT_TRUE(ParseAndVerify(Step("{}")).input_output_aliases.empty());
}

TEST(InputOutputAlias, RefusesWhatDoesNotFit) {
  EXPECT_THAT([] { ParseAndVerify(Step("{ {0}: (5, {}, may-alias) }")); },
              ThrowsMessage<HloError>(HasSubstr("input_output_alias {0}: the entry computation has no parameter 5")));
  EXPECT_THAT([] { ParseAndVerify(Step("{ {0}: (1, {}, may-alias) }")); },
              ThrowsMessage<HloError>(HasSubstr("the output is f32[2] but parameter 1 {} is f32[]")));
  EXPECT_THAT([] { ParseAndVerify(Step("{ {7}: (0, {}, may-alias) }")); },
              ThrowsMessage<HloError>(HasSubstr("input_output_alias {7}: no such output")));
  EXPECT_THAT([] { ParseAndVerify(Step("{ {0}: (0, {}, may-alias), {0}: (0, {}, may-alias) }")); },
              ThrowsMessage<HloError>(HasSubstr("aliased twice")));
  EXPECT_THAT([] { ParseAndVerify(Step("{ {0}: (0, {}, maybe) }")); },
              ThrowsMessage<HloError>(HasSubstr("unknown kind 'maybe'")));
  EXPECT_THAT([] { ParseAndVerify(Step("{ {0}: (-1, {}) }")); },
              ThrowsMessage<HloError>(HasSubstr("parameter number -1 is negative")));
}

}  // namespace
}  // namespace systole::hlo
