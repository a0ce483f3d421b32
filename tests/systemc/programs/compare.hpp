// Shared by the program tests of the SystemC platform (programs/, long/): an HLO program compiled
// and run on ref and on a systemc device with the same inputs.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "systole/device.hpp"
#include "tests/compiler/compiler_test_util.hpp"

namespace systole::systemc::testing {

struct Model {
  std::string file;
  std::string config;
  bool example;  // examples/hlo, else the shared corpus
};
inline void PrintTo(const Model& m, std::ostream* os) { *os << m.file << " on " << m.config; }
// Every HLO example and every corpus program but ResNet-50 (long/resnet_test.cpp), with the
// configuration each is written for.
inline std::vector<Model> AllPrograms() {
  return {Model{"bf16_residual_block.hlo", "small", true},    Model{"s8_conv3x3.hlo", "small-int8", true},
          Model{"s8_conv_requant.hlo", "small-int8", true},   Model{"s8_dense_bias.hlo", "small-int8", true},
          Model{"s8_dense_requant_host.hlo", "small-int8", true}, Model{"small_cnn_f32.hlo", "small", true},
          Model{"stem_conv7x7s2_cin3.hlo", "small", true},    Model{"01_mlp_fc_relu_tf.hlo", "small", false},
          Model{"03_conv7x7s2_bias_nhwc.hlo", "small", false}, Model{"05_depthwise_conv3x3_nchw_bf16.hlo", "small", false},
          Model{"07_mha_softmax_attention_bf16.hlo", "small", false}, Model{"08_layer_norm_bf16.hlo", "small", false},
          Model{"10_mean_reduce_bf16.hlo", "small", false},   Model{"13_add_dot_legacy_operand_shapes.hlo", "small", false}};
}
// A test name: the file name without its extension.
inline std::string ProgramName(const ::testing::TestParamInfo<Model>& param) {
  return param.param.file.substr(0, param.param.file.find('.'));
}

// Compiles `m`, runs it with the same random inputs on ref and on `uri`: bit-identical outputs,
// the same device steps, MACs and MXU busy cycles, and (`same_cycles`) the same cycle counts.
inline void ExpectMatchesRef(const Model& m, const std::string& uri, bool same_cycles) {
  const auto path = m.example ? compiler::testing::ExampleFile(m.file) : compiler::testing::CorpusFile(m.file);
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is not on this machine";
  }
  const Config config = LoadConfig(m.config);
  const compiler::CompiledModel model = compiler::Compile(compiler::testing::ReadText(path), m.file, config);
  const auto inputs = hlo::RandomInputs(*model.module, 5);
  Device ref = Device::Open("ref", config);
  Device device = Device::Open(uri, config);
  const runtime::RunResult expected = runtime::Execute(model, ref, inputs);
  const runtime::RunResult got = runtime::Execute(model, device, inputs);
  EXPECT_EQ(compiler::testing::FirstBitDifference(got.result, expected.result), "") << m.file << " on " << uri;
  EXPECT_EQ(got.stats.device_steps, expected.stats.device_steps);
  EXPECT_EQ(got.stats.macs, expected.stats.macs);
  EXPECT_EQ(got.stats.mxu_busy, expected.stats.mxu_busy);
  if (same_cycles) {
    EXPECT_EQ(got.stats.cycles, expected.stats.cycles);
  }
}

}  // namespace systole::systemc::testing
