// `systole run --trace` and `systole report` end to end: a program and a model on the golden
// model, the timeline a standard viewer would open, the page made from it, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_runner.hpp"

namespace {

using namespace systole::cli_test;
using ::testing::HasSubstr;
using nlohmann::json;

class CliTrace : public TempDir {};

// What a Chrome trace-event viewer needs: traceEvents with ph/ts/pid/tid, complete events with a
// duration, and thread names for every thread that has events.
void ExpectViewerReadable(const json& trace) {
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::set<int> named, used;
  for (const json& e : trace["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid")) << e.dump();
    if (e["ph"] == "M" && e["name"] == "thread_name") named.insert(e["tid"].get<int>());
    if (e["ph"] == "X") {
      used.insert(e["tid"].get<int>());
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_GE(e["ts"].get<double>(), 0.0);
    }
  }
  EXPECT_FALSE(used.empty());
  for (int tid : used) EXPECT_TRUE(named.contains(tid)) << "thread " << tid << " has no name";
}

TEST_F(CliTrace, AProgramsTimelineAndReport) {
  CliResult run = Systole({"run", Source("examples/asm/mlp_int8.s"), "--device", "ref", "--json", "--trace",
                           Path("mlp.json")});
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const json summary = json::parse(run.out);
  const json trace = json::parse(ReadText(Path("mlp.json")));
  ExpectViewerReadable(trace);
  std::uint64_t launch_cycles = 0;
  std::size_t matmuls = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "launch") launch_cycles += e["args"]["cycles"].get<std::uint64_t>();
    if (e["ph"] == "X" && e["name"] == "matmul") ++matmuls;
  }
  EXPECT_EQ(launch_cycles, summary["cycles"].get<std::uint64_t>());
  EXPECT_EQ(matmuls, 2u);  // the two layers

  run = Systole({"report", Path("mlp.json"), "-o", Path("mlp.html")});
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const std::string html = ReadText(Path("mlp.html"));
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("small-int8"));
  EXPECT_THAT(html, HasSubstr(">MXU<"));
  EXPECT_THAT(html, HasSubstr(std::to_string(summary["cycles"].get<std::uint64_t>()) + " cycles"));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("<script")));  // self-contained, readable offline
}

TEST_F(CliTrace, AModelsTimelineNamesItsSteps) {
  const CliResult run = Systole({"run", Source("examples/hlo/small_cnn_f32.hlo"), "--device", "ref",
                                 "--random-inputs", "1", "-q", "--json", "--trace", Path("model.json")});
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const json summary = json::parse(run.out);
  const json trace = json::parse(ReadText(Path("model.json")));
  ExpectViewerReadable(trace);
  std::size_t launches = 0;
  std::uint64_t macs = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] != "launch") continue;
    ++launches;
    EXPECT_THAT(e["name"].get<std::string>(), HasSubstr("("));  // "instruction (kernel)"
    macs += e["args"]["counters"]["MACS"].get<std::uint64_t>();
  }
  EXPECT_EQ(launches, summary["device_steps"].get<std::size_t>());
  EXPECT_EQ(macs, summary["macs"].get<std::uint64_t>());
}

TEST_F(CliTrace, ErrorsNameTheFileAndTheDevice) {
  Write("not_a_trace.json", "{\"traceEvents\": []}");
  CliResult result = Systole({"report", Path("not_a_trace.json"), "-o", Path("x.html")});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.out, HasSubstr("not_a_trace.json"));
  EXPECT_THAT(result.out, HasSubstr("otherData"));
  EXPECT_FALSE(std::filesystem::exists(Path("x.html")));
  result = Systole({"run", Source("examples/asm/mlp_int8.s"), "--device", "ref", "--wave", Path("x.fst")});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.out, HasSubstr("device ref"));
  EXPECT_THAT(result.out, HasSubstr("no waveform"));
  Write("broken.json", "{");
  result = Systole({"report", Path("broken.json"), "-o", Path("x.html")});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.out, HasSubstr("not JSON"));
}

}  // namespace
