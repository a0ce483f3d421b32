// The same programs through every path to a device give the same outputs and counters:
//   ref ─────────── golden model      rtl ──────────────── Verilated core + HBM controller + DRAM
//   tcp:// ─ serve ─ golden model     rtl?memory=ideal ─── Verilated core, fixed-latency memory
//                                     tcp:// ─ serve ───── Verilated core, fixed-latency memory
//                                     usb+sim ──────────── bridge (rtl/host) + core, same memory
//                                     pcie+sim ─────────── BAR decoder + DMA engine + core, same
// Every counter is identical among the paths to one device with one memory. Elsewhere only the
// functional counters must agree: ref's CYCLES and stall counters are estimates, and the HBM
// controller's row misses and refreshes make `rtl` slower than the fixed-latency memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>

#include "driver/sim/sim_links.hpp"
#include "systole/device.hpp"
#include "systole/server.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "tests/driver/generated_program_run.hpp"
#include "tests/rtl/core/program_generator.hpp"  // tests/rtl/core: random legal programs

namespace {

using namespace systole;
using std::chrono::milliseconds;

using driver_test::Outcome;
using driver_test::RunOnce;

std::vector<std::pair<std::string, image::Program>> TinyPrograms() {
  return {{"conv_pool_tiny.s", assembly::AssembleFile(driver_test::Example("conv_pool_tiny.s"))},
          {"scale 3", driver_test::ScaleProgram(3)},
          {"scale -2", driver_test::ScaleProgram(-2)}};
}

TEST(LinkParity, SameOutputsAndCountersThroughEveryPath) {
  const Config config = LoadConfig("tiny");
  ServerOptions options = driver_test::LoopbackServerOptions();
  DeviceServer ref_server(OpenRefLink(config), options);
  DeviceServer rtl_server(OpenRtlLink(config, "ideal"), options);
  for (const auto& [name, source] : TinyPrograms()) {
    SCOPED_TRACE(name);
    Device ref = Device::Open("ref", config);
    const Outcome expected = RunOnce(ref, source, 0);
    Device ref_tcp = Device::Open("tcp://" + ref_server.endpoint(), config);
    const Outcome ref_remote = RunOnce(ref_tcp, source, 0);
    EXPECT_EQ(ref_remote.outputs, expected.outputs);
    EXPECT_EQ(ref_remote.counters, expected.counters) << "tcp:// to ref";

    Device rtl = Device::Open("rtl", config);
    const Outcome with_dram = RunOnce(rtl, source, 0);
    EXPECT_EQ(with_dram.outputs, expected.outputs) << "rtl";
    driver_test::ExpectSameFunctionalCounters(with_dram.counters, expected.counters, "rtl vs ref");

    Device bare = Device::Open("rtl?memory=ideal", config);
    EXPECT_EQ(bare.uri(), "rtl?memory=ideal");
    const Outcome core = RunOnce(bare, source, 0);
    EXPECT_EQ(core.outputs, expected.outputs) << "rtl?memory=ideal";
    driver_test::ExpectSameFunctionalCounters(core.counters, expected.counters, "rtl?memory=ideal vs ref");
    EXPECT_GT(core.counters["MACS"], 0u);
    EXPECT_GT(core.counters["CYCLES"], 0u);
    EXPECT_GT(with_dram.counters["CYCLES"], core.counters["CYCLES"])
        << "DRAM (8-cycle fixed memory vs row activations and the controller's queues)";

    for (const std::string& uri :
         std::vector<std::string>{"usb+sim", "pcie+sim", "tcp://" + rtl_server.endpoint()}) {
      SCOPED_TRACE(uri);
      Device device = Device::Open(uri, config);
      EXPECT_EQ(device.config().name, "tiny") << "the device reports itself";
      const Outcome got = RunOnce(device, source, 0);
      EXPECT_EQ(got.outputs, expected.outputs);
      EXPECT_EQ(got.counters, core.counters) << "every counter, against rtl?memory=ideal";
    }
  }
}

}  // namespace

namespace {

// Random legal programs (tests/rtl/core/program_generator.hpp: results independent of timing)
// through the in-process paths to the Verilated core: the same memory afterwards (every byte the
// program could touch) and every counter among the fixed-latency paths; memory and the
// functional counters with the HBM memory system (`rtl`).
using driver_test::Footprint;

Footprint RunGenerated(const std::string& uri, const std::vector<std::uint8_t>& data,
                       const std::vector<isa::Instruction>& program) {
  Device device = Device::Open(uri, LoadConfig("tiny"));
  return driver_test::RunGenerated(device, data, program);
}

TEST(LinkParity, RandomProgramsGiveTheSameMemoryAndCountersOnEveryCorePath) {
  std::uint64_t seed = std::hash<std::string>{}("LinkParity.RandomPrograms") & 0xffffffff;
  if (const char* env = std::getenv("SYSTOLE_SEED")) seed = std::strtoull(env, nullptr, 0);
  std::cout << "[ seed     ] " << seed << "  (replay: SYSTOLE_SEED=" << seed
            << " ctest -R LinkParity.RandomPrograms)\n";
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    std::vector<std::uint8_t> data(rtl::test::kDataBytes);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    const auto program = rtl::test::GenerateProgram(LoadConfig("tiny"), rng, 24).instructions;
    const Footprint core = RunGenerated("rtl?memory=ideal", data, program);
    EXPECT_GT(core.counters["INSNS"], 0u);
    const Footprint with_dram = RunGenerated("rtl", data, program);
    EXPECT_EQ(with_dram.data, core.data) << "rtl";
    EXPECT_EQ(with_dram.dump, core.dump) << "rtl";
    driver_test::ExpectSameFunctionalCounters(with_dram.counters, core.counters, "rtl vs rtl?memory=ideal");
    for (const char* uri : {"usb+sim", "pcie+sim"}) {
      SCOPED_TRACE(uri);
      const Footprint got = RunGenerated(uri, data, program);
      EXPECT_EQ(got.data, core.data);
      EXPECT_EQ(got.dump, core.dump);
      EXPECT_EQ(got.counters, core.counters);
    }
  }
}

}  // namespace
