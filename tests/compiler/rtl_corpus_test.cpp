// The compiled corpus on the Verilated RTL (the `rtl` device, from driver/sim/): the device
// steps run bit-exactly as on the golden model. The compile-and-golden-model half of the corpus
// is corpus_test.cpp, which builds without any Verilated model.
#include <gmock/gmock.h>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using testing::CorpusFile;
using testing::ExampleFile;

constexpr double kFloatTolerance = 1.0 / 64;  // as in corpus_test.cpp (docs/COMPILER.md)

// The Verilated RTL runs the same device steps bit-exactly like the golden model. Every corpus
// file but ResNet-50 runs here or, when it takes more than ~30 s on the RTL (the simulation
// runs ~55k cycles per CPU second), in long/corpus_rtl_test.cpp; docs/COMPILER.md lists the
// measured times.
struct RtlCase {
  std::string file;
  std::string config;
  bool example;
  std::size_t device_steps;
};
void PrintTo(const RtlCase& c, std::ostream* os) { *os << c.file << " on " << c.config; }
class Rtl : public ::testing::TestWithParam<RtlCase> {};

TEST_P(Rtl, MatchesTheGoldenModelBitForBit) {
  const RtlCase& c = GetParam();
  const bool int8 = LoadConfig(c.config).dtype == DType::kInt8;
  testing::ExpectRtlMatchesRefAndInterpreter(c.example ? ExampleFile(c.file) : CorpusFile(c.file), c.config,
                                             c.device_steps, int8 ? 0.0 : kFloatTolerance);
}

INSTANTIATE_TEST_SUITE_P(Programs, Rtl,
                         ::testing::Values(RtlCase{"01_mlp_fc_relu_tf.hlo", "small", false, 1},
                                           RtlCase{"05_depthwise_conv3x3_nchw_bf16.hlo", "small", false, 1},
                                           RtlCase{"13_add_dot_legacy_operand_shapes.hlo", "small", false, 1},
                                           // the residual add and its ReLU are one VECTOR step
                                           RtlCase{"bf16_residual_block.hlo", "small", true, 2},
                                           // make run's network: fused ReLUs and the device max pool.
                                           RtlCase{"small_cnn_f32.hlo", "small", true, 4},
                                           // ResNet-50's stem on a 64x64 image: packed taps.
                                           RtlCase{"stem_conv7x7s2_cin3.hlo", "small", true, 1},
                                           RtlCase{"s8_dense_bias.hlo", "small-int8", true, 1},
                                           RtlCase{"s8_conv3x3.hlo", "small-int8", true, 2},
                                           RtlCase{"s8_conv_requant.hlo", "small-int8", true, 2}),
                         [](const ::testing::TestParamInfo<RtlCase>& param) {
                           return param.param.file.substr(0, param.param.file.find('.'));
                         });

// The BERT-style encoder layer (tests/hlo/data/jax_dumps.py): attention with its softmax,
// layer norms and GELU (one VECTOR math=gelu_tanh) on the vector unit's REDUCE and
// transcendental functions, each softmax and layer norm one fused step: 18 device steps and no
// host compute step, bit for bit as on the golden model.
TEST(RtlEncoder, EncoderLayerMatchesTheGoldenModelBitForBit) {
  testing::ExpectRtlMatchesRefAndInterpreter(
      std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests/hlo/data/jax_encoder_layer_bf16.hlo", "small", 18,
      kFloatTolerance);
}

// JAX's causal attention block (tests/hlo/data/jax_dumps.py, causal_attention): the constant
// mask's bias add and the f32 softmax (one fused step) on the vector unit, bit for bit as on
// the golden model.
TEST(RtlEncoder, CausalAttentionMatchesTheGoldenModelBitForBit) {
  testing::ExpectRtlMatchesRefAndInterpreter(
      std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests/hlo/data/jax_causal_attention.hlo", "small", 5,
      kFloatTolerance);
}

}  // namespace
}  // namespace systole::compiler
