// The hand-written programs of examples/asm/ on the Verilated core, each on the configuration it
// is written for, against the golden model: loaded as `systole run` loads them (assembled by
// LoadProgram, data segments then the words written to device memory, one DOORBELL launch),
// then the error state, the functional counters (INSNS, MACS, BYTES_*), every output and every
// byte of device memory from 0 to the end of the program's last segment must be identical.
// (tests/asm/examples_run_test.cpp checks the same programs' outputs against their formulas.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/rtl/rtl_device.hpp"
#include "tests/rtl/core/core_pair.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"
#include "toolchain/asm/bundle.hpp"

namespace systole::rtl {
namespace {

struct Example {
  const char* file;
  const char* config;  // what its .config says
};
// Every example, with the configuration it needs; the last test keeps this list complete.
constexpr Example kExamples[] = {
    {"adam_step_accvec.s", "small"}, {"conv_pool_tiny.s", "tiny"}, {"gemm_tiny.s", "tiny"}, {"mlp_bf16.s", "small"}, {"mlp_int8.s", "small-int8"},
    {"softmax_layernorm_bf16.s", "small"}};

std::filesystem::path ExampleDir() {
  return std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm";
}

// The examples whose configuration this build has a core for (all of them by default).
std::vector<std::string> BuiltExamples() {
  const std::vector<std::string> built = BuiltRtlConfigs(MemoryBackend::kIdeal);
  std::vector<std::string> files;
  for (const Example& example : kExamples) {
    if (std::find(built.begin(), built.end(), example.config) != built.end()) {
      files.emplace_back(example.file);
    }
  }
  return files;
}

class ExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleTest, RunsLikeTheGoldenModel) {
  const image::Program program = assembly::LoadProgram(ExampleDir() / GetParam());
  ASSERT_TRUE(program.config.has_value()) << GetParam() << " names no configuration";
  const auto* example = std::find_if(std::begin(kExamples), std::end(kExamples),
                                     [&](const Example& e) { return GetParam() == e.file; });
  ASSERT_EQ(*program.config, example->config) << GetParam();
  const Config config = LoadConfig(*program.config);
  test::Waveform wave(false);
  test::Pair pair(config, test::Seed(), wave.Path());

  std::uint64_t end = program.text_address + program.TextBytes();
  for (const image::DataSegment& segment : program.data) {
    pair.WriteMemory(segment.address, segment.bytes);
    end = std::max(end, segment.address + segment.bytes.size());
  }
  std::vector<std::uint8_t> text;
  for (const isa::Word& word : program.words) text.insert(text.end(), word.begin(), word.end());
  pair.WriteMemory(program.text_address, text);
  const std::uint64_t start = pair.rtl_->Cycle();
  ASSERT_NO_FATAL_FAILURE(
      pair.Launch(program.text_address, static_cast<std::uint32_t>(program.words.size())));
  std::cout << "[ example  ] " << GetParam() << ": " << program.words.size()
            << " instructions in " << pair.rtl_->Cycle() - start << " cycles\n";
  ASSERT_EQ(pair.golden_.LastErrorMessage(), "");
  // Counters first: the memory reads below go through the host port and count as host bytes
  // (on both devices alike).
  pair.ExpectSameState();
  const bool has_matmul =
      std::any_of(program.words.begin(), program.words.end(), [](const isa::Word& w) {
        return w[0] == static_cast<std::uint8_t>(isa::Opcode::kMatmul);
      });
  if (has_matmul) {
    EXPECT_GT(pair.golden_.Counter("MACS"), 0u);  // the MXU did work
  }
  ASSERT_FALSE(program.outputs.empty());
  for (const image::TensorDesc& output : program.outputs) {
    ASSERT_NO_FATAL_FAILURE(pair.ExpectSameMemory(output.address, output.Bytes(),
                                                  "output " + output.name));
    end = std::max(end, output.address + output.Bytes());
  }
  ASSERT_NO_FATAL_FAILURE(pair.ExpectSameMemory(0, end, "device memory"));
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest, ::testing::ValuesIn(BuiltExamples()),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           name.resize(name.size() - 2);  // without ".s"
                           return name;
                         });

TEST(ExampleList, NamesEveryExample) {
  std::vector<std::string> files, listed;
  for (const auto& entry : std::filesystem::directory_iterator(ExampleDir())) {
    if (entry.path().extension() == ".s") files.push_back(entry.path().filename().string());
  }
  for (const Example& example : kExamples) listed.emplace_back(example.file);
  std::sort(files.begin(), files.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(files, listed) << "a new example in examples/asm/ needs an entry in kExamples";
}

}  // namespace
}  // namespace systole::rtl
