// The estimate against the RTL on the corpus programs that take minutes on `rtl`
// (rtl_timing.hpp says how; docs/MODEL.md, "How close", quotes the table).
#include "tests/compiler/rtl_timing.hpp"

namespace systole::compiler::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(
    Long, RtlTiming,
    ::testing::Values(TimingCase{"03_conv7x7s2_bias_nhwc.hlo", "small", Source::kCorpus},
                      TimingCase{"05_depthwise_conv3x3_nchw_bf16.hlo", "small", Source::kCorpus},
                      TimingCase{"07_mha_softmax_attention_bf16.hlo", "small", Source::kCorpus},
                      TimingCase{"08_layer_norm_bf16.hlo", "small", Source::kCorpus},
                      TimingCase{"10_mean_reduce_bf16.hlo", "small", Source::kCorpus}),
    TimingCaseName);

}  // namespace
}  // namespace systole::compiler::testing
