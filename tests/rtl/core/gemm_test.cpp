// GEMMs compiled by the code generator (codegen::Gemm: tiled, double-buffered, with bias and
// an activation) on the Verilated core against the golden model: the shapes real layers have —
// a single row (a fully connected layer at batch 1), K and N that are not multiples of the
// array, several chunks of rows — where random programs rarely go. Output, all of the
// program's device memory and the functional counters must be identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>

#include "bench/rtl_gemm_workload.hpp"
#include "tests/rtl/core/core_pair.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl {
namespace {

using GemmCase = std::tuple<std::string, std::uint64_t, std::uint64_t, std::uint64_t>;

class GemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmTest, MatchesTheGoldenModel) {
  const auto& [config_name, m, k, n] = GetParam();
  const Config config = LoadConfig(config_name);
  const std::uint64_t seed = test::Seed();
  const bench::GemmWorkload work = bench::MakeGemm(config, m, k, n, seed);
  test::Waveform wave(false);
  test::Pair pair(config, seed, wave.Path());
  std::uint64_t end = work.program.text_address + work.text.size();
  for (const auto* segments : {&work.program.data, &work.inputs}) {
    for (const image::DataSegment& segment : *segments) {
      pair.WriteMemory(segment.address, segment.bytes);
      end = std::max(end, segment.address + segment.bytes.size());
    }
  }
  pair.WriteMemory(work.program.text_address, work.text);
  ASSERT_NO_FATAL_FAILURE(pair.Launch(work.program.text_address,
                                      static_cast<std::uint32_t>(work.program.words.size())));
  ASSERT_EQ(pair.golden_.LastErrorMessage(), "");
  pair.ExpectSameState();
  // PERF_MACS counts rows x k x C per MATMUL: whole array columns.
  EXPECT_EQ(pair.golden_.Counter("MACS"), m * k * ((n + config.cols - 1) / config.cols * config.cols));
  const image::TensorDesc& out = work.program.outputs.at(0);
  ASSERT_NO_FATAL_FAILURE(pair.ExpectSameMemory(out.address, out.Bytes(), "output"));
  end = std::max(end, out.address + out.Bytes());
  ASSERT_NO_FATAL_FAILURE(pair.ExpectSameMemory(0, end, "device memory"));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmTest,
    ::testing::Values(GemmCase{"small-int8", 1, 2048, 1000}, GemmCase{"small-int8", 1, 64, 40},
                      GemmCase{"small-int8", 3, 40, 24}, GemmCase{"small-int8", 300, 48, 32},
                      GemmCase{"small", 1, 64, 40}, GemmCase{"small", 37, 40, 24},
                      GemmCase{"tiny", 1, 12, 10}, GemmCase{"tiny", 70, 9, 6}),
    [](const auto& param_info) {
      std::string name = std::get<0>(param_info.param) + "_" + std::to_string(std::get<1>(param_info.param)) +
                         "x" + std::to_string(std::get<2>(param_info.param)) + "x" +
                         std::to_string(std::get<3>(param_info.param));
      for (char& c : name) if (c == '-') c = '_';
      return name;
    });

}  // namespace
}  // namespace systole::rtl
