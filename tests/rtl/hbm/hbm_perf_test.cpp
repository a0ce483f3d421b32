// The HBM controller's performance claims, checked on the RTL: a sequential stream reaches at
// least 90% of the configuration's peak, and MemoryTimingModel (sim/model/memory_timing.hpp)
// predicts the RTL's cycles within 5% for sequential, strided and random patterns, and within
// 1% for streams a requester's credits pace.
// bench/memory_bench.cpp prints the full table (bandwidth, latency percentiles).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "Vvl_hbm_c1_i8.h"
#include "Vvl_hbm_c2_tiny.h"
#include "Vvl_hbm_c4_i5.h"
#include "arch/config/config.hpp"
#include "sim/timing/memory_timing.hpp"
#include "tests/rtl/hbm/hbm_bench.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl::hbm {
namespace {

using model::MemoryAccess;

using Builds = ::testing::Types<Build<Vvl_hbm_c1_i8, 1, 8>, Build<Vvl_hbm_c2_tiny, 2, 8>,
                                Build<Vvl_hbm_c4_i5, 4, 5>>;

template <class B>
class HbmPerfTest : public ::testing::Test {
 protected:
  // The machine the tb is: tiny's [dram] with this build's channels and interleave.
  Config Machine() const {
    Config config = LoadConfig("tiny");
    const Variant v = B::Get();
    config.memory_channels = v.channels;
    config.interleave_bytes = 1u << v.interleave_log2;
    config.memory_bytes = v.memory_bytes;
    return config;
  }
  // RTL cycles from the first request to the last response, as the model counts them.
  std::uint64_t RtlCycles(const std::vector<MemoryAccess>& accesses, std::uint64_t limit = 0) {
    HbmBench<typename B::Model> bench(B::Get(), Machine().dram);
    bench.SetInFlightLimit(limit);
    for (const auto& a : accesses) bench.Send(0, {a.write, a.address, {}, 0xffffffffu});
    const std::uint64_t start = bench.sim().Cycle();
    bench.Drain();
    bench.Finish();
    EXPECT_EQ(bench.bus().ViolationCount(), 0u) << bench.bus().Report();
    return bench.sim().Cycle() - 1 - start;
  }
};
TYPED_TEST_SUITE(HbmPerfTest, Builds);

TYPED_TEST(HbmPerfTest, SequentialStreamsReachNinetyPercentOfPeak) {
  const model::MemoryTimingModel model(this->Machine());
  for (bool write : {false, true}) {
    std::vector<MemoryAccess> accesses;
    for (std::uint64_t i = 0; i < 8192; ++i) accesses.push_back({write, 32 * i});
    const double bytes_per_cycle = 32.0 * 8192 / static_cast<double>(this->RtlCycles(accesses));
    EXPECT_GE(bytes_per_cycle, 0.9 * model.PeakBytesPerCycle())
        << (write ? "writes" : "reads") << ": peak " << model.PeakBytesPerCycle();
  }
}

TYPED_TEST(HbmPerfTest, TimingModelPredictsTheRtlWithinFivePercent) {
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  const Config machine = this->Machine();
  const std::uint64_t words = machine.memory_bytes / 32;
  std::vector<std::pair<std::string, std::vector<MemoryAccess>>> patterns = {
      {"sequential", {}}, {"strided", {}}, {"random reads", {}}, {"random mix", {}}};
  const std::uint64_t stride = 32 * (1 + rng() % 128);
  for (std::uint64_t i = 0; i < 3000; ++i) {
    patterns[0].second.push_back({rng() % 4 == 0, 32 * i});
    patterns[1].second.push_back({false, stride * i % machine.memory_bytes});
    patterns[2].second.push_back({false, 32 * (rng() % words)});
    patterns[3].second.push_back({rng() % 2 == 0, 32 * (rng() % words)});
  }
  const model::MemoryTimingModel model(machine);
  for (const auto& [name, accesses] : patterns) {
    const double rtl = static_cast<double>(this->RtlCycles(accesses));
    const double predicted = static_cast<double>(model.Run(accesses).cycles);
    EXPECT_LE(std::abs(predicted - rtl), 0.05 * rtl)
        << name << " (stride " << stride << "): RTL " << rtl << " cycles, model " << predicted;
  }
}

// A DMA engine's credits bound how many of its requests are in flight (the requester here
// offers again the cycle after a response, MemoryStream::credit_delay 0; the core's row reader
// adds its own cycles in the golden model's TimingParameters::credit_return). The model must
// follow the RTL where the round trip, not the data bus, sets the pace: LOADs of whole words
// (125 one-word rows, as ResNet-50's swapped classifier gathers them) and of 6-byte rows that
// ask for the same word five times over (01_mlp_fc_relu_tf's first LOAD).
TYPED_TEST(HbmPerfTest, TimingModelFollowsCreditBoundStreams) {
  const Config machine = this->Machine();
  const model::MemoryTimingModel model(machine);
  std::vector<MemoryAccess> gathers;
  for (std::uint64_t i = 0; i < 20; ++i) {
    for (const MemoryAccess& a : model::MemoryTimingModel::DmaAccesses(0x1000 + 32000 * i, 32, 125, 32, false)) {
      gathers.push_back(a);
    }
  }
  const std::vector<std::pair<std::string, std::vector<MemoryAccess>>> patterns = {
      {"20 gathers of 125 words", gathers},
      {"300 rows of 6 bytes", model::MemoryTimingModel::DmaAccesses(0, 6, 300, 6, false)}};
  for (const std::uint64_t credits : {4u, 16u}) {
    for (const auto& [name, accesses] : patterns) {
      const double rtl = static_cast<double>(this->RtlCycles(accesses, credits));
      const double predicted = static_cast<double>(model.Run(accesses, credits).cycles);
      EXPECT_LE(std::abs(predicted - rtl), 0.01 * rtl)
          << name << ", " << credits << " credits: RTL " << rtl << " cycles, model " << predicted;
    }
  }
}

}  // namespace
}  // namespace systole::rtl::hbm
