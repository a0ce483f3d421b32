// v2 — the 128x128 bf16 core — runs a GEMM compiled by the code generator, against the golden
// model: every output byte, all of device memory the program touches, the error state and the
// functional counters must be identical. Verilating and simulating 128x128 takes long, so this
// is built only with SYSTOLE_RTL_LONG=ON and run by `make test-long` (ctest -L long).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "bench/rtl_gemm_workload.hpp"
#include "tests/rtl/core/core_pair.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl {
namespace {

TEST(V2Core, SmallGemmMatchesTheGoldenModel) {
  const Config config = LoadConfig("v2");
  const std::uint64_t seed = test::Seed();
  // Two row tiles of A, a K that fills the array once, and N = C: one weight tile.
  const bench::GemmWorkload work = bench::MakeGemm(config, 48, 128, 128, seed);
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
  const std::uint64_t start = pair.rtl_->Cycle();
  ASSERT_NO_FATAL_FAILURE(pair.Launch(work.program.text_address,
                                      static_cast<std::uint32_t>(work.program.words.size())));
  std::cout << "[ v2 gemm  ] " << work.program.words.size() << " instructions in "
            << pair.rtl_->Cycle() - start << " cycles\n";
  ASSERT_EQ(pair.golden_.LastErrorMessage(), "");
  pair.ExpectSameState();
  EXPECT_EQ(pair.golden_.Counter("MACS"), work.macs);
  const image::TensorDesc& out = work.program.outputs.at(0);
  std::vector<std::uint8_t> result(out.Bytes());
  pair.golden_.ReadMemory(out.address, result);
  EXPECT_TRUE(std::any_of(result.begin(), result.end(), [](std::uint8_t v) { return v != 0; }))
      << "the reference result is all zeros: the test would not see a broken datapath";
  ASSERT_NO_FATAL_FAILURE(pair.ExpectSameMemory(out.address, out.Bytes(), "output"));
  end = std::max(end, out.address + out.Bytes());
  ASSERT_NO_FATAL_FAILURE(pair.ExpectSameMemory(0, end, "device memory"));
}

}  // namespace
}  // namespace systole::rtl
