// The estimate against the RTL on each example program and each corpus program that runs on
// `rtl` in seconds (rtl_timing.hpp says how; docs/MODEL.md, "How close", quotes the table).
#include "tests/compiler/rtl_timing.hpp"

namespace systole::compiler::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(
    Programs, RtlTiming,
    ::testing::Values(TimingCase{"conv_pool_tiny.s", "tiny", Source::kAsmExample},
                      TimingCase{"gemm_tiny.s", "tiny", Source::kAsmExample},
                      TimingCase{"mlp_bf16.s", "small", Source::kAsmExample},
                      TimingCase{"softmax_layernorm_bf16.s", "small", Source::kAsmExample},
                      TimingCase{"bf16_residual_block.hlo", "small", Source::kHloExample},
                      TimingCase{"small_cnn_f32.hlo", "small", Source::kHloExample},
                      TimingCase{"stem_conv7x7s2_cin3.hlo", "small", Source::kHloExample},
                      TimingCase{"01_mlp_fc_relu_tf.hlo", "small", Source::kCorpus},
                      TimingCase{"13_add_dot_legacy_operand_shapes.hlo", "small", Source::kCorpus},
                      TimingCase{"resnet50_stem_maxpool_bf16.hlo", "small", Source::kLayer},
                      TimingCase{"resnet50_classifier_bf16.hlo", "small", Source::kLayer},
                      TimingCase{"cnn_sgd_step.hlo", "small", Source::kTraining}),
    TimingCaseName);

}  // namespace
}  // namespace systole::compiler::testing
