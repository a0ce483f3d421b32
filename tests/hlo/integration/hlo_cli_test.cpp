// `systole hlo check` and `systole hlo interp` run as a user would run them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_runner.hpp"
#include "toolchain/npy/npy.hpp"

namespace {

using namespace systole::cli_test;
using ::testing::HasSubstr;

// stdout only: the commands' JSON and tensors, without their progress lines.
CliResult SystoleStdout(const std::vector<std::string>& args) { return Systole(args, Stderr::kDiscard); }
namespace fs = std::filesystem;

std::string Corpus(const std::string& name) { return std::string(SYSTOLE_SHARED_DIR) + "/corpus/hlo/" + name; }

fs::path ScratchDir() {
  const fs::path dir = fs::temp_directory_path() / ("systole_hlo_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(HloCli, CheckPrintsComputationsAndHistogram) {
  const CliResult result = SystoleStdout({"hlo", "check", Corpus("07_mha_softmax_attention_bf16.hlo")});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_THAT(result.out, HasSubstr("module        jit_f (ok: parsed and verified)"));
  EXPECT_THAT(result.out, HasSubstr("computations  3, 41 instructions"));
  EXPECT_THAT(result.out, HasSubstr("dot"));
}

TEST(HloCli, CheckJsonOnResNet) {
  const CliResult result = SystoleStdout({"hlo", "check", "--json", Corpus("06_resnet50_inference_f32.hlo")});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["module"], "jit_predict_step");
  EXPECT_EQ(json["opcodes"]["convolution"], 53);
  EXPECT_EQ(json["parameters"].size(), 321u);
}

TEST(HloCli, CheckReportsErrorsWithLocation) {
  const fs::path dir = ScratchDir();
  std::ofstream(dir / "bad.hlo") << "ENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[3] negate(a)\n}\n";
  std::string command = Quote(SYSTOLE_CLI) + " hlo check " + Quote((dir / "bad.hlo").string()) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  std::string out;
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  EXPECT_NE(pclose(pipe), 0);
  EXPECT_THAT(out, HasSubstr("bad.hlo:3:8: instruction 'b': printed shape f32[3] differs from the inferred shape f32[2]"));
  fs::remove_all(dir);
}

TEST(HloCli, InterpWithNpzInputsAndOutputs) {
  const fs::path dir = ScratchDir();
  systole::npy::WriteNpz(dir / "in.npz", {{systole::npy::ElementType::kFloat32, {4}, {1, 2, 3, 4}},
                                          {systole::npy::ElementType::kFloat32, {4}, {0.5, -1, 2, 3}}});
  const CliResult result = SystoleStdout({"hlo", "interp", Corpus("13_add_dot_legacy_operand_shapes.hlo"), "--inputs",
                                    (dir / "in.npz").string(), "--outputs", (dir / "out.npz").string(), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["outputs"][0]["first_values"][0], 30.75);
  const std::vector<systole::npy::Array> outputs = systole::npy::ReadNpz(dir / "out.npz");
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_TRUE(outputs[0].shape.empty());
  EXPECT_EQ(outputs[0].values, (std::vector<double>{30.75}));
  fs::remove_all(dir);
}

TEST(HloCli, InterpWithRandomInputsIsReproducible) {
  const std::vector<std::string> args{"hlo", "interp", Corpus("10_mean_reduce_bf16.hlo"), "--random-inputs", "7", "--json"};
  const CliResult first = SystoleStdout(args);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  auto a = nlohmann::json::parse(first.out);
  auto b = nlohmann::json::parse(SystoleStdout(args).out);
  EXPECT_EQ(a["outputs"][0]["first_values"], b["outputs"][0]["first_values"]);
  EXPECT_EQ(a["outputs"][0]["dtype"], "float32");
  const CliResult text = SystoleStdout({"hlo", "interp", Corpus("10_mean_reduce_bf16.hlo"), "--random-inputs", "7"});
  EXPECT_THAT(text.out, HasSubstr("arr_0 float32 (1, 4096):"));
}

TEST(HloCli, InterpNeedsInputs) {
  EXPECT_NE(SystoleStdout({"hlo", "interp", Corpus("13_add_dot_legacy_operand_shapes.hlo")}).exit_code, 0);
}

}  // namespace
