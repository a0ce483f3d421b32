// systemc?model=rtl — the Verilated SoC behind the platform's sockets — on every HLO example and
// every corpus program but ResNet-50, against ref: bit-identical outputs, the same device steps,
// MACs and MXU busy cycles. Minutes on the RTL, so `long` (make test-long); programs/ runs two of
// them in make test. Skipped for a configuration whose SoC the build does not Verilate.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/rtl/rtl_device.hpp"
#include "tests/systemc/programs/compare.hpp"

namespace systole::systemc {
namespace {

using testing::Model;

class RtlPlatform : public ::testing::TestWithParam<Model> {};

TEST_P(RtlPlatform, MatchesRefBitForBit) {
  const auto built = rtl::BuiltRtlConfigs();
  if (std::find(built.begin(), built.end(), GetParam().config) == built.end()) {
    GTEST_SKIP() << "no Verilated SoC for " << GetParam().config << " in this build";
  }
  testing::ExpectMatchesRef(GetParam(), "systemc?model=rtl", false);
}

INSTANTIATE_TEST_SUITE_P(
    Programs, RtlPlatform,
    ::testing::Values(Model{"bf16_residual_block.hlo", "small", true}, Model{"s8_conv3x3.hlo", "small-int8", true},
                      Model{"s8_conv_requant.hlo", "small-int8", true}, Model{"s8_dense_bias.hlo", "small-int8", true},
                      Model{"s8_dense_requant_host.hlo", "small-int8", true},
                      Model{"small_cnn_f32.hlo", "small", true}, Model{"stem_conv7x7s2_cin3.hlo", "small", true},
                      Model{"01_mlp_fc_relu_tf.hlo", "small", false},
                      Model{"03_conv7x7s2_bias_nhwc.hlo", "small", false},
                      Model{"05_depthwise_conv3x3_nchw_bf16.hlo", "small", false},
                      Model{"07_mha_softmax_attention_bf16.hlo", "small", false},
                      Model{"08_layer_norm_bf16.hlo", "small", false},
                      Model{"10_mean_reduce_bf16.hlo", "small", false},
                      Model{"13_add_dot_legacy_operand_shapes.hlo", "small", false}),
    [](const auto& param) { return param.param.file.substr(0, param.param.file.find('.')); });

}  // namespace
}  // namespace systole::systemc
