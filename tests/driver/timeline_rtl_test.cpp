// Timelines of the Verilated core (`systole run --trace` on rtl): the core's trace ports, as
// sim/rtl/trace_sampler.hpp turns them into spans, show every instruction once on its unit, and
// the stall runs add up to the core's own stall counters — behind the HBM controller and
// behind the fixed-latency memory, on the examples and on random legal programs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <random>

#include "sim/trace/timeline.hpp"
#include "systole/device.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "tests/driver/timeline_checks.hpp"
#include "tests/rtl/core/program_generator.hpp"

namespace {

using namespace systole;
using trace::StallCause;

// The causes the core's trace ports carry (token and dispatch waits stay inside the sequencer).
const std::map<StallCause, std::string> kRtlStalls = {{StallCause::kMemory, "STALL_MEMORY"},
                                                      {StallCause::kWeightFifo, "STALL_WFIFO"}};

image::Program Generated(const Config& config, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const rtl::test::GeneratedProgram generated = rtl::test::GenerateProgram(config, rng, 24);
  image::Program program;
  program.text_address = rtl::test::kTextAddress;
  for (const isa::Instruction& insn : generated.instructions) program.words.push_back(isa::EncodeOrThrow(insn));
  return program;
}

class TimelineRtl : public testing::TestWithParam<std::string> {};

TEST_P(TimelineRtl, EveryInstructionOnceAndStallsMatchTheCounters) {
  const Config config = LoadConfig("tiny");
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << " (generated programs)\n";
  std::vector<std::pair<std::string, image::Program>> programs;
  for (std::uint64_t i = 0; i < 3; ++i) programs.emplace_back("generated " + std::to_string(i), Generated(config, seed + i));
  const std::size_t generated = programs.size();
  programs.emplace_back("conv_pool_tiny.s", assembly::AssembleFile(driver_test::Example("conv_pool_tiny.s")));
  programs.emplace_back("scale 3", driver_test::ScaleProgram(3));

  Device device = Device::Open(GetParam(), config);
  trace::Timeline timeline(config, GetParam());
  device.Record(&timeline);
  // The generated programs use fixed addresses (their text, data and dump regions).
  Buffer scratch = device.AllocateAt(0, rtl::test::kDumpAddress + 0x10000);
  for (std::size_t i = 0; i < programs.size(); ++i) {
    SCOPED_TRACE(programs[i].first);
    const image::Program& source = programs[i].second;
    systole::Run run;
    if (i < generated) {
      std::vector<std::uint8_t> text;
      for (const isa::Word& word : source.words) text.insert(text.end(), word.begin(), word.end());
      scratch.Write(text, rtl::test::kTextAddress);
      device.ClearCounters();
      run = device.Launch(rtl::test::kTextAddress, static_cast<std::uint32_t>(source.words.size()), source.words);
    } else {
      scratch = Buffer();  // the examples are loaded at their own addresses
      Program program = device.Load(source);
      device.ClearCounters();
      run = program.Launch();
    }
    ASSERT_TRUE(run.Wait(std::chrono::seconds(120)));
    const Counters counters = device.ReadCounters();
    ASSERT_EQ(timeline.launches().size(), i + 1);
    driver_test::ExpectTimelineMatches(timeline, i, source, counters, kRtlStalls);
    // The spans lie within the launch that the CYCLES counter measured.
    const trace::Launch& launch = timeline.launches()[i];
    EXPECT_LE(launch.end - launch.begin, counters["CYCLES"] + 8);
  }
  device.Record(nullptr);
}

// --wave: the FST waveform covers the launch, and closing it stops the writing.
TEST(WaveformRtl, CoversTheLaunchAndStopsWhenClosed) {
  const Config config = LoadConfig("tiny");
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("systole_wave_" + std::to_string(::getpid()) + ".fst");
  Device device = Device::Open("rtl", config);
  Program program = device.Load(driver_test::ScaleProgram(3));
  device.RecordWaveform(path);
  ASSERT_TRUE(program.Launch().Wait(std::chrono::seconds(60)));
  device.RecordWaveform({});
  const auto size = std::filesystem::file_size(path);
  EXPECT_GT(size, 1000u);
  ASSERT_TRUE(program.Launch().Wait(std::chrono::seconds(60)));
  EXPECT_EQ(std::filesystem::file_size(path), size);  // closed: the second launch is not in it
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Memories, TimelineRtl, testing::Values("rtl", "rtl?memory=ideal"),
                         [](const auto& param) { return param.param == "rtl" ? "Hbm" : "Ideal"; });

}  // namespace
