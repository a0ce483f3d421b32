// The same programs give the same outputs and the same counters whichever way they reach a
// device: `ref` and `rtl` directly, and each of them hosted by a DeviceServer behind tcp://.
// Through the server every counter must match its device's own, CYCLES and stalls included
// (same device, same program, same starting state), for the core with its fixed-latency memory
// (`rtl?memory=ideal`). Behind the HBM controller (`rtl`) the DRAM's state when a launch starts
// (open rows, the refresh timer, which counts from reset) depends on how many cycles the device
// has already run — the server's handshake adds some — so there only outputs and the functional
// counters must match, as between ref and rtl: cycles and stalls are the RTL's own timing.
//
// Verilator 5.006 deadlocks when one Verilated model is destroyed while another instance of the
// same model is alive, so an rtl device is always gone before the next one opens.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "systole/device.hpp"
#include "systole/server.hpp"
#include "tests/driver/driver_test_util.hpp"

namespace {

using namespace systole;
using std::chrono::milliseconds;

using driver_test::Outcome;
using driver_test::RunOnce;

// What every backend runs: tiny's example (convolution, pooling, vector ops) and MXU programs
// with different weights and inputs. Scale 0 gives all-zero outputs, so it is not among them.
std::vector<Outcome> RunAll(Device& device) {
  std::vector<Outcome> outcomes;
  const auto example = assembly::AssembleFile(driver_test::Example("conv_pool_tiny.s"));
  outcomes.push_back(RunOnce(device, example, 1));
  for (int scale : {-3, 2, 5}) {
    outcomes.push_back(RunOnce(device, driver_test::ScaleProgram(scale), scale));
  }
  return outcomes;
}

std::vector<Outcome> RunThroughServer(std::unique_ptr<Link> hosted) {
  ServerOptions options = driver_test::LoopbackServerOptions();
  DeviceServer server(std::move(hosted), options);
  Device remote = Device::Open("tcp://" + server.endpoint(), LoadConfig("small"));
  EXPECT_EQ(remote.config().name, "tiny") << "the server's device reports itself";
  return RunAll(remote);
}

// The rtl link, or nullopt in a program without the simulated devices (the sanitizer build).
std::optional<std::unique_ptr<Link>> OpenTinyRtl(std::string_view memory = "hbm") {
  try {
    return OpenLink(memory == "hbm" ? std::string("rtl") : "rtl?memory=" + std::string(memory),
                    LoadConfig("tiny"));
  } catch (const LinkError& error) {
    if (std::string(error.what()).find("no simulated devices") == std::string::npos) throw;
    return std::nullopt;
  }
}

// Same outputs and every counter, or (`functional_only`) the functional counters.
void ExpectSame(const std::vector<Outcome>& got, const std::vector<Outcome>& expected,
                bool functional_only = false) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "program " << i);
    EXPECT_EQ(got[i].outputs, expected[i].outputs);
    if (functional_only) {
      driver_test::ExpectSameFunctionalCounters(got[i].counters, expected[i].counters, "");
    } else {
      EXPECT_EQ(got[i].counters, expected[i].counters);
    }
    EXPECT_GT(got[i].counters["MACS"], 0u);
  }
}

TEST(TcpParity, RefThroughTcpMatchesRefDirectly) {
  Device ref = Device::Open("ref", LoadConfig("tiny"));
  ExpectSame(RunThroughServer(OpenRefLink(LoadConfig("tiny"))), RunAll(ref));
}

// The other configurations' examples, each on its own configuration.
TEST(TcpParity, RefThroughTcpMatchesRefOnEveryExample) {
  for (const char* name : {"mlp_int8.s", "mlp_bf16.s"}) {
    SCOPED_TRACE(name);
    const image::Program source = assembly::AssembleFile(driver_test::Example(name));
    const Config config = LoadConfig(source.config.value_or("small"));
    Device ref = Device::Open("ref", config);
    const Outcome expected = RunOnce(ref, source, 0);
    ServerOptions options = driver_test::LoopbackServerOptions();
    DeviceServer server(OpenRefLink(config), options);
    Device remote = Device::Open("tcp://" + server.endpoint(), LoadConfig("tiny"));
    EXPECT_EQ(remote.config().name, config.name);
    const Outcome got = RunOnce(remote, source, 0);
    EXPECT_EQ(got.outputs, expected.outputs);
    EXPECT_EQ(got.counters, expected.counters);
    EXPECT_GT(got.counters["MACS"], 0u);
  }
}

TEST(TcpParity, RtlThroughTcpMatchesRtlDirectly) {
  for (const char* memory : {"ideal", "hbm"}) {
    SCOPED_TRACE(memory);
    std::vector<Outcome> direct;
    {
      auto link = OpenTinyRtl(memory);
      if (!link) GTEST_SKIP() << "this build has no Verilated core";
      Device rtl(std::move(*link));
      direct = RunAll(rtl);
    }  // the direct device is gone before the server's opens
    auto hosted = OpenTinyRtl(memory);
    ASSERT_TRUE(hosted);
    ExpectSame(RunThroughServer(std::move(*hosted)), direct,
               /*functional_only=*/std::string_view(memory) == "hbm");
  }
}

TEST(TcpParity, RtlMatchesRefInOutputsAndFunctionalCounters) {
  auto link = OpenTinyRtl();
  if (!link) GTEST_SKIP() << "this build has no Verilated core";
  Device rtl(std::move(*link));
  Device ref = Device::Open("ref", LoadConfig("tiny"));
  const std::vector<Outcome> got = RunAll(rtl);
  const std::vector<Outcome> expected = RunAll(ref);
  ExpectSame(got, expected, /*functional_only=*/true);
  for (const Outcome& outcome : got) EXPECT_GT(outcome.counters["CYCLES"], 0u);
}

}  // namespace
