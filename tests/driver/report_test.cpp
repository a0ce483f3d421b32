// `systole report`'s page from a timeline written by hand, so that every figure it must show is
// known in advance: which unit bounds each launch and the cycles each group of launches lost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/trace/report.hpp"

namespace {

using ::testing::HasSubstr;
using nlohmann::json;

json Span(int tid, const char* category, const char* name, std::uint64_t begin, std::uint64_t end) {
  return {{"ph", "X"}, {"pid", 1}, {"tid", tid}, {"cat", category}, {"name", name}, {"ts", begin}, {"dur", end - begin},
          {"args", {{"cycle", begin}, {"cycles", end - begin}}}};
}

json Launch(const char* name, std::uint64_t begin, std::uint64_t end, std::uint64_t macs) {
  json e = Span(0, "launch", name, begin, end);
  e["args"]["counters"] = {{"MACS", macs}, {"CYCLES", end - begin}};
  return e;
}

// On a 4x4 array (16 MACs a cycle), three launches of 100 cycles:
//   a: LOAD busy [0, 60) on its first track and [55, 95) on its second: 95 % — LOAD-bound;
//      800 MACs = 50 full-array cycles, so 50 lost.
//   b: the MXU busy [100, 195): 95 % — MXU-bound; 1 440 MACs = 90 cycles, 10 lost.
//   c: the vector unit busy half of it, no MACs: no unit at 90 %, all 100 cycles lost.
std::string HandWrittenTimeline() {
  json events = json::array();
  const std::pair<int, const char*> threads[] = {{0, "launches"}, {1, "LOAD"}, {2, "LOAD #2"}, {3, "MXU"}, {4, "VECTOR"}};
  for (const auto& [tid, name] : threads) {
    events.push_back({{"ph", "M"}, {"pid", 1}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", name}}}});
  }
  events.push_back(Launch("a (load-bound)", 0, 100, 800));
  events.push_back(Span(1, "instruction", "load", 0, 60));
  events.push_back(Span(2, "instruction", "load", 55, 95));
  events.push_back(Span(3, "instruction", "matmul", 10, 60));
  events.push_back(Launch("b (mxu-bound)", 100, 200, 1440));
  events.push_back(Span(1, "instruction", "load", 100, 110));
  events.push_back(Span(3, "instruction", "matmul", 100, 195));
  events.push_back(Launch("c (no MACs)", 200, 300, 0));
  events.push_back(Span(4, "instruction", "pool", 200, 250));
  return json{{"otherData", {{"device", "ref"}, {"config", "tiny"}, {"rows", 4}, {"cols", 4}, {"clock_mhz", 100}}},
              {"traceEvents", events}}
      .dump();
}

TEST(Report, GroupsLaunchesByTheUnitThatBoundsThemWithTheCyclesEachGroupLost) {
  const std::string html = systole::trace::HtmlReport(HandWrittenTimeline(), "bounds");
  // bound, launches, cycles, lost, lost as a share of all 300 cycles, utilization; most lost first.
  const std::string none = "<tr><td>no unit ≥ 90%</td><td>1</td><td>100</td><td>100</td><td>33.3%</td><td>0.0%</td></tr>";
  const std::string load = "<tr><td>LOAD</td><td>1</td><td>100</td><td>50</td><td>16.7%</td><td>50.0%</td></tr>";
  const std::string mxu = "<tr><td>MXU</td><td>1</td><td>100</td><td>10</td><td>3.3%</td><td>90.0%</td></tr>";
  ASSERT_THAT(html, HasSubstr(none));
  ASSERT_THAT(html, HasSubstr(load));
  ASSERT_THAT(html, HasSubstr(mxu));
  EXPECT_LT(html.find(none), html.find(load));
  EXPECT_LT(html.find(load), html.find(mxu));
  // Each launch's busiest unit, its two LOAD tracks counted once where they overlap.
  EXPECT_THAT(html, HasSubstr("<td>LOAD 95%</td>"));
  EXPECT_THAT(html, HasSubstr("<td>MXU 95%</td>"));
  EXPECT_THAT(html, HasSubstr("<td>VECTOR 50%</td>"));
}

}  // namespace
