// The corpus files that take more than ~30 s on the Verilated small core (measured in
// docs/COMPILER.md): the same check as the Rtl suite of ../corpus_test.cpp — bit-identical to
// the golden model, within the interpreter tolerance — in the long set (ctest -L long).
#include <gmock/gmock.h>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

constexpr double kFloatTolerance = 1.0 / 64;  // docs/COMPILER.md, f32 / bf16 corpus files on small

struct Case {
  std::string file;
  std::size_t device_steps;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }  // ctest names the file
class RtlLong : public ::testing::TestWithParam<Case> {};

TEST_P(RtlLong, MatchesTheGoldenModelBitForBit) {
  testing::ExpectRtlMatchesRefAndInterpreter(testing::CorpusFile(GetParam().file), "small",
                                             GetParam().device_steps, kFloatTolerance);
}

INSTANTIATE_TEST_SUITE_P(Corpus, RtlLong,
                         ::testing::Values(Case{"03_conv7x7s2_bias_nhwc.hlo", 1}, Case{"07_mha_softmax_attention_bf16.hlo", 4},
                                           Case{"08_layer_norm_bf16.hlo", 1}, Case{"10_mean_reduce_bf16.hlo", 1}),
                         [](const ::testing::TestParamInfo<Case>& param) { return "f" + param.param.file.substr(0, 2); });

}  // namespace
}  // namespace systole::compiler
