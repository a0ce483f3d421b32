// Several Systole devices in one simulation, on one interconnect, each behind a link of its own:
// the shape of a pod study. Four `systemc` devices run one program at once (different data on
// each, as data-parallel shards would have), concurrently in simulated time, and each gives what
// `ref` gives for its data; the link model's bandwidth shows in the simulated transfer times.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "arch/regs/regmap.hpp"
#include "sim/systemc/platform.hpp"
#include "systole/device.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::systemc {
namespace {

using std::chrono::milliseconds;

// On `small`: Y = X · W for a 256 x 16 X, recomputed `repeats` times so that the launch lasts
// long against the host's register accesses (~1 µs each over the default link).
image::Program LongProgram(int repeats) {
  std::string text = R"(.config small
.input  W, at=0x100000, dtype=bf16, shape=16x16
.input  X, at=0x101000, dtype=bf16, shape=256x16
.output Y, at=0x110000, dtype=bf16, shape=256x16
load mem=ub, dram=X, stride=32, row=0, rows=256, elems=16, signal=mxu
load_weights dram=W, stride=32, rows=16, cols=16
matmul ub=0, acc=0, rows=256, k=16, pop, wait=load
)";
  for (int i = 0; i < repeats; ++i) text += "matmul ub=0, acc=0, rows=256, k=16\n";
  text += R"(matmul ub=0, acc=0, rows=256, k=16, signal=vector
activate acc=0, ub=256, rows=256, scale=1, wait=mxu, signal=store
store mem=ub, dram=Y, stride=32, row=256, rows=256, elems=16, wait=vector
halt
)";
  return assembly::Assemble(text, "long.s");
}

// Small values, different for each shard.
std::vector<std::uint8_t> Shard(const image::Program& source, std::size_t input, int shard) {
  std::vector<std::uint8_t> bytes(source.inputs[input].Bytes());
  for (std::size_t k = 0; k < bytes.size(); ++k) {
    // bf16 elements with a small exponent: (k odd) bytes are the high halves.
    bytes[k] = static_cast<std::uint8_t>(k % 2 == 1 ? 0x3F : (k * 7 + static_cast<std::size_t>(shard) * 31) % 256);
  }
  return bytes;
}

sc_core::sc_time Now() {
  sc_core::sc_time now;
  Platform::Get().Run([&](Host&) { now = sc_core::sc_time_stamp(); });
  return now;
}

struct Result {
  std::vector<std::uint8_t> output;
  Counters counters;
};

TEST(Pod, RunsOneProgramOnFourDevicesAtOnce) {
  const auto source = LongProgram(200);
  const Config config = LoadConfig("small");

  // What each shard should give, from ref.
  std::vector<Result> expected;
  for (int shard = 0; shard < 4; ++shard) {
    Device ref = Device::Open("ref", config);
    Program program = ref.Load(source);
    for (std::size_t i = 0; i < source.inputs.size(); ++i) program.WriteInput(i, Shard(source, i, shard));
    ref.ClearCounters();
    ASSERT_TRUE(program.Launch().Wait(milliseconds(60000)));
    expected.push_back({program.ReadOutput(0), ref.ReadCounters()});
  }

  // One device alone: the simulated time from the launch to the end of the wait.
  sc_core::sc_time solo;
  {
    Device device = Device::Open("systemc", config);
    Program program = device.Load(source);
    for (std::size_t i = 0; i < source.inputs.size(); ++i) program.WriteInput(i, Shard(source, i, 0));
    device.ClearCounters();
    const sc_core::sc_time start = Now();
    ASSERT_TRUE(program.Launch().Wait(milliseconds(60000)));
    solo = Now() - start;
    const std::uint64_t cycles = device.ReadCounters()["CYCLES"];
    EXPECT_GE(solo, sc_core::sc_time(static_cast<double>(cycles) / config.clock_mhz, sc_core::SC_US))
        << "the launch takes its estimated cycles of simulated time";
  }

  // Four devices in four slots: launched one after another, then waited for.
  std::vector<Device> devices;
  std::vector<Program> programs;
  for (int shard = 0; shard < 4; ++shard) {
    devices.push_back(Device::Open("systemc", config));
    programs.push_back(devices.back().Load(source));
    for (std::size_t i = 0; i < source.inputs.size(); ++i) programs.back().WriteInput(i, Shard(source, i, shard));
    devices.back().ClearCounters();
  }
  std::vector<unsigned> slots;
  Platform::Get().Run([&](Host&) { slots = Platform::Get().UsedSlots(); });
  EXPECT_EQ(slots.size(), 4u) << "four devices in one simulation";
  const sc_core::sc_time start = Now();
  std::vector<systole::Run> runs;
  for (Program& program : programs) runs.push_back(program.Launch());
  for (systole::Run& run : runs) ASSERT_TRUE(run.Wait(milliseconds(60000)));
  const sc_core::sc_time four = Now() - start;
  std::printf("one device: %s of simulated time; four at once: %s\n", solo.to_string().c_str(),
              four.to_string().c_str());
  EXPECT_LT(four, solo * 1.5) << "the four launches overlap in simulated time (one after another: ~4x)";

  for (std::size_t shard = 0; shard < 4; ++shard) {
    EXPECT_EQ(programs[shard].ReadOutput(0), expected[shard].output) << "shard " << shard;
    EXPECT_EQ(devices[shard].ReadCounters(), expected[shard].counters) << "shard " << shard;
  }
}

// The link model's bandwidth decides how long an upload takes in simulated time.
TEST(Pod, UploadsTakeTheLinkBandwidthsTime) {
  const Config config = LoadConfig("tiny");
  Platform& platform = Platform::Get();
  Device device = Device::Open("systemc", config);
  unsigned slot = 0;
  LinkModel original;
  platform.Run([&](Host&) {
    slot = platform.UsedSlots().at(0);
    original = platform.link(slot);
  });
  Buffer buffer = device.Allocate(1 << 20);
  const std::vector<std::uint8_t> bytes(1 << 20, 7);
  auto upload = [&](double bytes_per_second) {
    platform.Run([&](Host&) { platform.SetLink(slot, LinkModel{original.latency, bytes_per_second}); });
    const sc_core::sc_time start = Now();
    buffer.Write(bytes);
    return Now() - start;
  };
  const sc_core::sc_time fast = upload(8e9);
  const sc_core::sc_time slow = upload(1e9);
  platform.Run([&](Host&) { platform.SetLink(slot, original); });
  const double expected_extra = double(1 << 20) / 1e9 - double(1 << 20) / 8e9;
  EXPECT_NEAR((slow - fast).to_seconds(), expected_extra, 1e-9);
}

}  // namespace
}  // namespace systole::systemc
