// `systole compile` and `systole run MODEL.hlo|MODEL.sbin` run as a user would run them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/cli_runner.hpp"
#include "toolchain/npy/npy.hpp"

namespace {

using namespace systole::cli_test;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Corpus(const std::string& name) { return std::string(SYSTOLE_SHARED_DIR) + "/corpus/hlo/" + name; }

class CliCompile : public ::testing::Test {
 protected:
  fs::path dir_ = fs::temp_directory_path() / ("systole_compile_cli_" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
};

// A file of several modules: --module picks one by name or index, for compile and run alike.
TEST_F(CliCompile, ModuleChoosesAmongSeveral) {
  const std::string data = std::string(SYSTOLE_SOURCE_DIR) + "/tests/hlo/data/";
  const std::string both = Path("both.hlo");
  {
    std::ofstream out(both);
    out << ReadFile(data + "jax_mlp_optimized.hlo") << "// -----\n" << ReadFile(data + "jax_attention_optimized.hlo");
  }
  const CliResult neither = Systole({"compile", both, "-q"});
  EXPECT_NE(neither.exit_code, 0);
  EXPECT_THAT(neither.out, HasSubstr("found 2 (separated by '// -----'): choose one with --module NAME|INDEX"));
  const CliResult by_name = Systole({"compile", both, "--module", "jit_attention", "--json", "-q"});
  ASSERT_EQ(by_name.exit_code, 0) << by_name.out;
  EXPECT_THAT(by_name.out, HasSubstr("\"kernel\": \"gemm 8x16x8\""));  // q @ k.T of the attention
  const CliResult by_index = Systole({"run", both, "--module", "0", "--device", "ref", "--random-inputs", "1", "-q"});
  ASSERT_EQ(by_index.exit_code, 0) << by_index.out;
  EXPECT_THAT(by_index.out, HasSubstr("output arr_0 (4x10)"));  // the MLP
  const CliResult missing = Systole({"run", both, "--module", "jit_gpt", "--device", "ref", "--random-inputs", "1"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.out, HasSubstr("no module named 'jit_gpt': the file holds 2 module(s): 0 jit_mlp (line 1), 1 jit_attention"));
}

// A dump of the pinned JAX (tests/hlo/data): each placement line names the Python line.
TEST_F(CliCompile, PlacementNamesThePythonLineOfJaxDumps) {
  const std::string hlo = std::string(SYSTOLE_SOURCE_DIR) + "/tests/hlo/data/jax_mlp.hlo";
  const CliResult result = Systole({"compile", hlo, "-q"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  using ::testing::ContainsRegex;
  EXPECT_THAT(result.out,
              ContainsRegex("device  [^\n]*gemm 4x32x64 [^\n]*  @ tests/hlo/data/jax_dumps.py:26:[0-9]+ \\(mlp\\)"));
  EXPECT_THAT(result.out,
              ContainsRegex("device  [^\n]*gemm 4x64x10 [^\n]*  @ tests/hlo/data/jax_dumps.py:27:[0-9]+ \\(mlp\\)"));
  EXPECT_THAT(result.out,
              ContainsRegex("host    [^\n]*reshape \\(data movement\\)  @ tests/hlo/data/jax_dumps.py:26:"));
}

TEST_F(CliCompile, CompilePrintsPlacementAndRunMatchesTheInterpreter) {
  const std::string hlo = Corpus("01_mlp_fc_relu_tf.hlo");
  CliResult result = Systole({"compile", hlo, "-q", "-o", Path("mlp.sbin"), "--listing", Path("mlp.s")});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_THAT(result.out, HasSubstr("device  add.39"));
  EXPECT_THAT(result.out, HasSubstr("gemm 300x3x5"));
  EXPECT_THAT(result.out, HasSubstr("host    select.45"));
  EXPECT_TRUE(fs::exists(Path("mlp.s")));

  result = Systole({"run", Path("mlp.sbin"), "--device", "ref", "--random-inputs", "4", "--json", "-q",
                    "--outputs", Path("device.npz")});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["config"], "small");
  EXPECT_EQ(json["device_steps"], 1);
  EXPECT_GT(json["cycles"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(json["host_fallback_ops"].contains("select"));

  result = Systole({"hlo", "interp", hlo, "--random-inputs", "4", "--outputs", Path("interp.npz")});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto device = systole::npy::ReadNpz(Path("device.npz"));
  const auto interp = systole::npy::ReadNpz(Path("interp.npz"));
  ASSERT_EQ(device.size(), 1u);
  ASSERT_EQ(device[0].shape, interp[0].shape);
  double scale = 0, error = 0;
  for (std::size_t i = 0; i < interp[0].values.size(); ++i) {
    scale = std::max(scale, std::abs(interp[0].values[i]));
    error = std::max(error, std::abs(interp[0].values[i] - device[0].values[i]));
  }
  EXPECT_LE(error, scale / 64);

  // The same HLO compiled on the fly gives the same outputs.
  result = Systole({"run", hlo, "--device", "ref", "--random-inputs", "4", "-q", "--outputs", Path("direct.npz")});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_EQ(systole::npy::ReadNpz(Path("direct.npz"))[0].values, device[0].values);
}

// `--json` gives every device step's estimate and where its cycles go per unit; the estimate
// is the golden model's own count, so it equals what `run --device ref` reports.
TEST_F(CliCompile, JsonEstimatesBreakDownByUnitAndEqualRefCycles) {
  const std::string hlo = Corpus("03_conv7x7s2_bias_nhwc.hlo");
  CliResult result = Systole({"compile", hlo, "-q", "-o", Path("conv.sbin"), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto compiled = nlohmann::json::parse(result.out);
  const auto& steps = compiled["device_step_estimates"];
  ASSERT_EQ(steps.size(), 1u);
  const auto& units = steps[0]["units"];
  for (const char* unit : {"load", "weight", "mxu", "vector", "store"}) ASSERT_TRUE(units.contains(unit)) << unit;
  EXPECT_GT(units["mxu"]["instructions"].get<std::uint64_t>(), 0u);
  EXPECT_GT(units["weight"]["instructions"].get<std::uint64_t>(), 0u);
  // Every weight tile comes from device memory, so the WEIGHT unit waits for it.
  EXPECT_GT(units["weight"]["stall_memory"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(steps[0]["cycles"], compiled["estimated_cycles"]);

  result = Systole({"run", Path("conv.sbin"), "--device", "ref", "--random-inputs", "1", "--json", "-q"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_EQ(nlohmann::json::parse(result.out)["cycles"], compiled["estimated_cycles"]);
}

// `--json` counts the host steps by what they do and lists each with its reason; the
// placement says the same. JAX's cond, whose branches have no device work, is a `conditional`
// the host runs whole (a compute step, with its reason) after a compare, a convert (data
// movement) and a constant.
TEST_F(CliCompile, JsonCountsHostComputeStepsApartFromDataMovement) {
  const std::string hlo = std::string(SYSTOLE_SOURCE_DIR) + "/tests/hlo/data/jax_cond.hlo";
  CliResult result = Systole({"compile", hlo, "-q", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  const auto& list = json["host_step_list"];
  ASSERT_EQ(list.size(), json["host_steps"].get<std::size_t>());
  std::size_t compute = 0, movement = 0;
  for (const auto& step : list) {
    EXPECT_FALSE(step["reason"].get<std::string>().empty()) << step.dump();
    if (step["work"] == "compute") ++compute;
    if (step["work"] == "data movement") ++movement;
  }
  EXPECT_EQ(compute, 2u);
  EXPECT_EQ(movement, 1u);
  EXPECT_EQ(json["host_compute_steps"].get<std::size_t>(), compute);
  EXPECT_EQ(json["host_data_movement_steps"].get<std::size_t>(), movement);
  EXPECT_EQ(json["host_steps"].get<std::size_t>(),
            compute + movement + json["host_parameter_steps"].get<std::size_t>() +
                json["host_value_steps"].get<std::size_t>());
  EXPECT_EQ(json["host_compute_ops"]["conditional"], 1);

  result = Systole({"compile", hlo, "-q"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_THAT(result.out,
              HasSubstr("host steps: 2 compute ((\"compare\", 1), (\"conditional\", 1)), 0 parameter arithmetic, 1 data movement"));
  EXPECT_THAT(result.out, ::testing::ContainsRegex(
                              "host    [^\n]* conditional \\(compute: control flow whose computations have no device work"));
  // The mean program computes nothing on the host (one REDUCE step) and moves tensors in
  // and out of device memory.
  result = Systole({"compile", Corpus("10_mean_reduce_bf16.hlo"), "-q", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto mean = nlohmann::json::parse(result.out);
  EXPECT_EQ(mean["host_compute_steps"], 0);
  EXPECT_GT(mean["device_tensor_bytes"].get<std::uint64_t>(), 0u);
}

// A training loop (lax.fori_loop over 8 batches): the body's five dots are device steps listed
// under the while, which the host runs with an iteration count it does not know at compile
// time; --json counts them once and lists the body's host steps with the others.
TEST_F(CliCompile, ALoopsBodyDotsAreListedOnTheDeviceUnderTheWhile) {
  const std::string hlo = std::string(SYSTOLE_SOURCE_DIR) + "/examples/training/mlp_sgd_loop.hlo";
  CliResult result = Systole({"compile", hlo, "-q"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_THAT(result.out, ::testing::ContainsRegex("\n  control while\\.[0-9]+ +while \\(control: the host runs the loop"));
  EXPECT_THAT(result.out, HasSubstr("the number of iterations is not known at compile time"));
  EXPECT_THAT(result.out, ::testing::ContainsRegex("\n   body region_[0-9.]+:\n"));
  EXPECT_THAT(result.out, ::testing::ContainsRegex("\n    device  [^\n]*gemm 32x64x64"));
  EXPECT_THAT(result.out, HasSubstr("5 device step(s)"));
  EXPECT_THAT(result.out, HasSubstr("1 loop(s) or conditional(s) with device work"));

  result = Systole({"compile", hlo, "-q", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["device_steps"], 5);
  EXPECT_EQ(json["control_steps"], 1);
  EXPECT_EQ(json["device_step_estimates"].size(), 5u);
  EXPECT_EQ(json["host_step_list"].size(), json["host_steps"].get<std::size_t>());
  EXPECT_EQ(json["host_compute_ops"].count("dot"), 0u);
}

// `systole run STEP.hlo --device-state`: the training step with its optimizer updates on the
// device and the state in device memory (written before the run, read back after), its outputs
// bit-identical to the host update's, and --trace shows the update launches.
TEST_F(CliCompile, RunsATrainingStepWithItsStateInDeviceMemory) {
  const std::string hlo = Source("examples/training/mlp_sgd_step.hlo");
  CliResult result = Systole({"run", hlo, "--device", "ref", "--random-inputs", "3", "-q", "--json", "--outputs",
                              Path("host.npz")});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_EQ(nlohmann::json::parse(result.out)["device_steps"], 5);
  result = Systole({"run", hlo, "--device", "ref", "--random-inputs", "3", "-q", "--json", "--device-state", "--outputs",
                    Path("device.npz"), "--trace", Path("device.json")});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_EQ(nlohmann::json::parse(result.out)["device_steps"], 8);  // 2 gradient dots become 5 updates
  const auto host = systole::npy::ReadNpz(Path("host.npz")), device = systole::npy::ReadNpz(Path("device.npz"));
  ASSERT_EQ(device.size(), host.size());
  for (std::size_t i = 0; i < host.size(); ++i) EXPECT_EQ(device[i].values, host[i].values) << "output " << i;
  EXPECT_THAT(ReadText(Path("device.json")), HasSubstr("sgd-momentum update params_0_.1"));
  result = Systole({"run", hlo, "--device", "ref", "--random-inputs", "3", "--device-state", "--jobs", "2"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.out, HasSubstr("keeps training state in device memory"));
}

TEST_F(CliCompile, ErrorsAreClear) {
  CliResult result = Systole({"compile", Corpus("01_mlp_fc_relu_tf.hlo"), "--config", "small-int8", "-q"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.out, HasSubstr("int8 MXU"));
  EXPECT_THAT(result.out, HasSubstr("dot.36"));

  ASSERT_EQ(Systole({"compile", Corpus("13_add_dot_legacy_operand_shapes.hlo"), "-q", "-o", Path("m.sbin")}).exit_code, 0);
  result = Systole({"run", Path("m.sbin"), "--device", "ref", "--config", "small-int8", "--random-inputs", "1"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.out, HasSubstr("compiled for configuration 'small'"));
  result = Systole({"run", Path("m.sbin"), "--device", "ref"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.out, HasSubstr("--random-inputs"));
}

}  // namespace
