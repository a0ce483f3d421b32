// Timelines (sim/trace, `systole run --trace`): the Timeline's bookkeeping and Chrome trace
// JSON, and what the golden model records through the driver, checked against its counters.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/trace/timeline.hpp"
#include "systole/device.hpp"
#include "systole/server.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "tests/driver/timeline_checks.hpp"

namespace {

using namespace systole;
using isa::Field;
using isa::Opcode;
using nlohmann::json;
using trace::StallCause;

std::vector<isa::Word> Words(std::initializer_list<isa::Instruction> instructions) {
  std::vector<isa::Word> words;
  for (const isa::Instruction& insn : instructions) words.push_back(isa::EncodeOrThrow(insn));
  return words;
}

// A LOAD, a MATMUL and a STORE on `tiny` (4x4 int8).
std::vector<isa::Word> ThreeUnits() {
  return Words({isa::MakeInstruction(Opcode::kLoad, {{Field::kRows, 2}, {Field::kElems, 4}, {Field::kStride, 4}}),
                isa::MakeInstruction(Opcode::kMatmul, {{Field::kRows, 2}, {Field::kK, 4}}),
                isa::MakeInstruction(Opcode::kStore, {{Field::kRows, 2}, {Field::kElems, 4},
                                                      {Field::kStride, 16}, {Field::kMem, 1}}),
                isa::MakeInstruction(Opcode::kHalt, {})});
}

TEST(Timeline, LabelsEachUnitsSpansInProgramOrder) {
  trace::Timeline timeline(LoadConfig("tiny"), "test");
  timeline.BeginLaunch(ThreeUnits());
  timeline.LaunchStarted(100);
  timeline.UnitInstruction(0, 100, 110);  // LOAD
  timeline.UnitInstruction(4, 120, 130);  // STORE
  timeline.UnitInstruction(2, 110, 118);  // MXU
  timeline.UnitInstruction(2, 118, 119);  // a second MATMUL the host did not announce
  ASSERT_EQ(timeline.spans().size(), 4u);
  EXPECT_EQ(timeline.spans()[0].index, 0u);
  EXPECT_EQ(timeline.spans()[0].bytes, 2u * 4u);  // int8 rows into the unified buffer
  EXPECT_EQ(timeline.spans()[0].begin, 0u);       // launch-relative
  EXPECT_EQ(timeline.spans()[1].index, 2u);
  EXPECT_EQ(timeline.spans()[1].bytes, 2u * 4u * 4u);  // int32 accumulator rows
  EXPECT_EQ(timeline.spans()[2].index, 1u);
  EXPECT_FALSE(timeline.spans()[3].index.has_value());
  EXPECT_EQ(timeline.unmatched(), 1u);
  EXPECT_EQ(timeline.launches()[0].end, 30u);
}

TEST(Timeline, LaunchesAreLaidEndToEnd) {
  trace::Timeline timeline(LoadConfig("tiny"), "test");
  timeline.NameNextLaunch("conv1");
  timeline.BeginLaunch(ThreeUnits());
  timeline.LaunchStarted(0);
  timeline.UnitInstruction(0, 0, 50);
  timeline.BeginLaunch(ThreeUnits());
  timeline.LaunchStarted(7000);  // the rtl clock ran on between the launches
  timeline.UnitInstruction(0, 7000, 7010);
  timeline.UnitStall(0, StallCause::kMemory, 7001, 7004);
  ASSERT_EQ(timeline.launches().size(), 2u);
  EXPECT_EQ(timeline.launches()[0].name, "conv1");
  EXPECT_EQ(timeline.launches()[1].name, "launch 1");
  EXPECT_EQ(timeline.launches()[1].begin, 50u);
  EXPECT_EQ(timeline.spans()[1].begin, 50u);
  EXPECT_EQ(timeline.spans()[1].end, 60u);
  EXPECT_EQ(timeline.stalls()[0].begin, 51u);
  EXPECT_EQ(timeline.stalls()[0].launch, 1u);
}

// ExecuteParallel records each step on its own timeline and appends them in step order.
TEST(Timeline, AppendedLaunchesFollowTheLastOneWithTheirSpansAndStalls) {
  trace::Timeline timeline(LoadConfig("tiny"), "rtl");
  timeline.NameNextLaunch("conv1");
  timeline.BeginLaunch(ThreeUnits());
  timeline.LaunchStarted(0);
  timeline.UnitInstruction(0, 0, 50);
  trace::Timeline other(LoadConfig("tiny"), "rtl");
  other.NameNextLaunch("conv2");
  other.BeginLaunch(ThreeUnits());
  other.LaunchStarted(900);  // another device, its clock elsewhere
  other.UnitInstruction(2, 905, 920);
  other.UnitInstruction(2, 920, 921);  // not announced
  other.UnitStall(2, StallCause::kWeightFifo, 901, 905);
  other.SetLaunchCounters({{"MACS", 32}});
  timeline.Append(other);
  ASSERT_EQ(timeline.launches().size(), 2u);
  EXPECT_EQ(timeline.launches()[1].name, "conv2");
  EXPECT_EQ(timeline.launches()[1].begin, 50u);
  EXPECT_EQ(timeline.launches()[1].end, 71u);
  EXPECT_EQ(timeline.launches()[1].counters.size(), 1u);
  ASSERT_EQ(timeline.spans().size(), 3u);
  EXPECT_EQ(timeline.spans()[1].begin, 55u);
  EXPECT_EQ(timeline.spans()[1].end, 70u);
  EXPECT_EQ(timeline.spans()[1].launch, 1u);
  EXPECT_EQ(timeline.spans()[1].index, 1u);  // the MATMUL, as the other timeline matched it
  ASSERT_EQ(timeline.stalls().size(), 1u);
  EXPECT_EQ(timeline.stalls()[0].begin, 51u);
  EXPECT_EQ(timeline.stalls()[0].launch, 1u);
  EXPECT_EQ(timeline.unmatched(), 1u);
  // A launch recorded afterwards starts where the appended ones end.
  timeline.BeginLaunch(ThreeUnits());
  timeline.LaunchStarted(5);
  timeline.UnitInstruction(0, 5, 6);
  EXPECT_EQ(timeline.launches()[2].begin, 71u);
  EXPECT_EQ(timeline.spans().back().begin, 71u);
}

TEST(Timeline, ChromeTraceHasAThreadPerUnitLaneAndMicrosecondTimes) {
  const Config config = LoadConfig("tiny");
  trace::Timeline timeline(config, "ref");
  timeline.BeginLaunch(ThreeUnits());
  timeline.LaunchStarted(0);
  timeline.UnitInstruction(2, 0, 96);
  timeline.UnitInstruction(2, 48, 144);  // overlaps the first: a second MXU lane
  timeline.UnitStall(2, StallCause::kWeightFifo, 144, 192);
  timeline.SetLaunchCounters({{"MACS", 32}});
  const json trace = json::parse(timeline.ChromeTraceJson());
  std::map<int, std::string> threads;
  std::vector<json> instructions, stalls;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "X" && e["cat"] == "instruction") instructions.push_back(e);
    if (e["ph"] == "X" && e["cat"] == "stall") stalls.push_back(e);
  }
  ASSERT_EQ(instructions.size(), 2u);
  EXPECT_EQ(instructions[0]["name"], "matmul");
  EXPECT_EQ(threads[instructions[0]["tid"]], "MXU");
  EXPECT_EQ(threads[instructions[1]["tid"]], "MXU #2");
  EXPECT_DOUBLE_EQ(instructions[1]["ts"].get<double>(), 48.0 / config.clock_mhz);
  EXPECT_DOUBLE_EQ(instructions[1]["dur"].get<double>(), 96.0 / config.clock_mhz);
  EXPECT_EQ(instructions[0]["args"]["rows"], 2);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0]["name"], "stall: weight fifo");
  EXPECT_EQ(threads[stalls[0]["tid"]], "MXU stalls");
  EXPECT_EQ(trace["otherData"]["config"], "tiny");
  bool launch_found = false;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "launch") {
      launch_found = true;
      EXPECT_EQ(e["args"]["counters"]["MACS"], 32);
    }
  }
  EXPECT_TRUE(launch_found);
}

// The golden model's schedule, recorded through the driver: every instruction once, and the
// stall spans add up to the model's own stall counters.
TEST(TimelineRef, SpansAndStallsMatchTheModelsCounters) {
  const Config config = LoadConfig("tiny");
  const std::vector<std::pair<std::string, image::Program>> programs = {
      {"conv_pool_tiny.s", assembly::AssembleFile(driver_test::Example("conv_pool_tiny.s"))},
      {"scale 3", driver_test::ScaleProgram(3)}};
  Device device = Device::Open("ref", config);
  trace::Timeline timeline(config, "ref");
  device.Record(&timeline);
  for (std::size_t i = 0; i < programs.size(); ++i) {
    SCOPED_TRACE(programs[i].first);
    Program program = device.Load(programs[i].second);
    device.ClearCounters();
    ASSERT_TRUE(program.Launch().Wait(std::chrono::seconds(60)));
    const Counters counters = device.ReadCounters();
    ASSERT_EQ(timeline.launches().size(), i + 1);
    driver_test::ExpectTimelineMatches(timeline, i, programs[i].second, counters,
                                       {{StallCause::kMemory, "STALL_MEMORY"},
                                        {StallCause::kWeightFifo, "STALL_WFIFO"},
                                        {StallCause::kToken, "STALL_TOKEN"},
                                        {StallCause::kDispatch, "STALL_DISPATCH"}});
    const trace::Launch& launch = timeline.launches()[i];
    EXPECT_EQ(launch.end - launch.begin, counters["CYCLES"]);
  }
  device.Record(nullptr);
}

TEST(TimelineRef, ALinkThatCannotRecordSaysSo) {
  const Config config = LoadConfig("tiny");
  ServerOptions options = driver_test::LoopbackServerOptions();
  DeviceServer server(OpenRefLink(config), options);
  Device remote = Device::Open("tcp://" + server.endpoint(), config);
  trace::Timeline timeline(config, "tcp");
  try {
    remote.Record(&timeline);
    FAIL() << "tcp:// recorded a timeline";
  } catch (const DeviceError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot record a timeline"), std::string::npos) << error.what();
  }
  EXPECT_EQ(remote.recording(), nullptr);
}

}  // namespace
