#include "sim/trace/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

namespace systole::trace {
namespace {

using nlohmann::json;

struct Interval {
  std::uint64_t begin = 0, end = 0;
};

struct LaunchRow {
  std::string name;
  Interval at;
  std::map<std::string, std::uint64_t> counters;
  std::map<std::string, std::uint64_t> stalls;  // cause → unit-cycles
};

struct Report {
  std::string device, config;
  unsigned rows = 0, cols = 0, clock_mhz = 0;
  std::vector<LaunchRow> launches;
  std::vector<std::string> units;                                // track order
  std::map<std::string, std::vector<Interval>> busy;             // unit → instruction spans
  std::map<std::string, std::vector<Interval>> stalled;          // unit → stall runs
  std::map<std::string, std::map<std::string, std::uint64_t>> stall_cycles;  // unit → cause → cycles
  std::map<std::string, std::uint64_t> bytes;                    // unit → DMA bytes
  std::uint64_t end = 0;
};

std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// "MXU #2" → "MXU"; "LOAD stalls" → "LOAD".
std::string UnitOf(const std::string& thread) { return thread.substr(0, thread.find(' ')); }

const json& Require(const json& object, const char* key, const char* what) {
  if (!object.is_object() || !object.contains(key)) {
    throw std::runtime_error(fmt::format("not a systole timeline: {} has no '{}'", what, key));
  }
  return object.at(key);
}

Report Read(const std::string& text) {
  json trace;
  try {
    trace = json::parse(text);
  } catch (const json::parse_error& error) {
    throw std::runtime_error(fmt::format("not JSON: {}", error.what()));
  }
  const json& other = Require(trace, "otherData", "the file");
  const json& events = Require(trace, "traceEvents", "the file");
  Report r;
  r.device = other.value("device", "");
  r.config = other.value("config", "");
  r.rows = other.value("rows", 0u);
  r.cols = other.value("cols", 0u);
  r.clock_mhz = other.value("clock_mhz", 0u);
  std::map<int, std::string> threads;
  for (const json& e : events) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
      threads[e.value("tid", 0)] = e.at("args").value("name", "");
    }
  }
  for (const json& e : events) {
    if (e.value("ph", "") != "X") continue;
    const json& args = Require(e, "args", "an event");
    const Interval at{args.value("cycle", std::uint64_t{0}),
                      args.value("cycle", std::uint64_t{0}) + args.value("cycles", std::uint64_t{0})};
    r.end = std::max(r.end, at.end);
    const std::string category = e.value("cat", "");
    const std::string unit = UnitOf(threads[e.value("tid", 0)]);
    if (category == "launch") {
      LaunchRow launch{e.value("name", ""), at, {}, {}};
      if (args.contains("counters")) {
        for (const auto& [name, value] : args.at("counters").items()) launch.counters[name] = value.get<std::uint64_t>();
      }
      r.launches.push_back(std::move(launch));
    } else if (category == "instruction") {
      if (std::find(r.units.begin(), r.units.end(), unit) == r.units.end()) r.units.push_back(unit);
      r.busy[unit].push_back(at);
      r.bytes[unit] += args.value("bytes", std::uint64_t{0});
    } else if (category == "stall") {
      std::string cause = e.value("name", "");
      if (cause.starts_with("stall: ")) cause = cause.substr(7);
      r.stalled[unit].push_back(at);
      r.stall_cycles[unit][cause] += at.end - at.begin;
    }
  }
  // Stalls are attributed to launches once all launches are known (events come in any order).
  for (const json& e : events) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "stall") continue;
    const std::uint64_t begin = e.at("args").value("cycle", std::uint64_t{0});
    const std::uint64_t cycles = e.at("args").value("cycles", std::uint64_t{0});
    std::string cause = e.value("name", "");
    if (cause.starts_with("stall: ")) cause = cause.substr(7);
    for (LaunchRow& launch : r.launches) {
      if (begin >= launch.at.begin && begin < launch.at.end) launch.stalls[cause] += cycles;
    }
  }
  std::stable_sort(r.launches.begin(), r.launches.end(),
                   [](const LaunchRow& a, const LaunchRow& b) { return a.at.begin < b.at.begin; });
  for (const char* unit : {"SEQUENCER"}) {
    if (r.stalled.contains(unit)) r.units.push_back(unit);
  }
  return r;
}

// Cycles covered by the union of `spans`.
std::uint64_t Covered(std::vector<Interval> spans) {
  std::sort(spans.begin(), spans.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::uint64_t covered = 0, reach = 0;
  for (const Interval& s : spans) {
    const std::uint64_t from = std::max(s.begin, reach);
    if (s.end > from) covered += s.end - from;
    reach = std::max(reach, s.end);
  }
  return covered;
}

// The unit that had an instruction in flight for the largest share of a launch (spans clipped
// to it): the unit whose pace the launch ran at. A launch whose busiest unit is below
// kBoundShare has no single bound (its units waited on each other).
constexpr double kBoundShare = 0.9;
struct Busiest {
  std::string unit;
  double share = 0;
};
Busiest BusiestUnit(const Report& r, const LaunchRow& launch) {
  Busiest best;
  const std::uint64_t cycles = launch.at.end - launch.at.begin;
  if (cycles == 0) return best;
  for (const auto& [unit, spans] : r.busy) {
    std::vector<Interval> inside;
    for (const Interval& s : spans) {
      const std::uint64_t begin = std::max(s.begin, launch.at.begin), end = std::min(s.end, launch.at.end);
      if (begin < end) inside.push_back({begin, end});
    }
    const double share = static_cast<double>(Covered(std::move(inside))) / static_cast<double>(cycles);
    if (share > best.share) best = {unit, share};
  }
  return best;
}

std::uint64_t MacsOf(const LaunchRow& launch) {
  return launch.counters.contains("MACS") ? launch.counters.at("MACS") : 0;
}

// Launches grouped by the unit that bounds them, with the cycles each group lost against an
// array busy with useful MACs every cycle: where a designer looks first.
std::string BoundsTable(const Report& r, const std::vector<Busiest>& busiest, double peak) {
  struct Group {
    std::size_t launches = 0;
    std::uint64_t cycles = 0;
    double lost = 0;
  };
  std::map<std::string, Group> groups;
  double total_cycles = 0;
  for (std::size_t i = 0; i < r.launches.size(); ++i) {
    const LaunchRow& l = r.launches[i];
    const std::uint64_t n = l.at.end - l.at.begin;
    const std::string key = busiest[i].share >= kBoundShare ? busiest[i].unit
                                                            : fmt::format("no unit ≥ {:.0f}%", 100 * kBoundShare);
    Group& g = groups[key];
    ++g.launches;
    g.cycles += n;
    g.lost += static_cast<double>(n) - (peak > 0 ? static_cast<double>(MacsOf(l)) / peak : 0.0);
    total_cycles += static_cast<double>(n);
  }
  std::vector<std::pair<std::string, Group>> ordered(groups.begin(), groups.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second.lost > b.second.lost; });
  std::string html = fmt::format(
      "<h2>What bounds each launch</h2>\n<p>Each launch is put down to the unit that had an instruction in flight "
      "for the largest share of it, when that share is at least {:.0f}%; lost cycles are the launch's cycles less "
      "MACS / (rows x cols), the cycles a full array would have needed.</p>\n<table><tr><th>bound</th><th>launches</th>"
      "<th>cycles</th><th>lost cycles</th><th>lost, share of all cycles</th><th>utilization</th></tr>\n",
      100 * kBoundShare);
  for (const auto& [bound, g] : ordered) {
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.0f}</td><td>{:.1f}%</td><td>{:.1f}%</td></tr>\n",
                        Escape(bound), g.launches, g.cycles, g.lost,
                        total_cycles > 0 ? 100 * g.lost / total_cycles : 0.0,
                        g.cycles ? 100 * (1 - g.lost / static_cast<double>(g.cycles)) : 0.0);
  }
  return html + "</table>\n";
}

// One row of the overview: per pixel column, the fraction of its cycles covered by `spans`,
// drawn as runs of equal (quantized) opacity.
std::string OverviewRow(const std::vector<Interval>& spans, std::uint64_t end, double y, double width,
                        const char* colour) {
  const unsigned columns = static_cast<unsigned>(width);
  std::vector<double> cover(columns, 0.0);
  const double per_column = std::max(1.0, static_cast<double>(end) / columns);
  for (const Interval& s : spans) {
    const double a = static_cast<double>(s.begin) / per_column, b = static_cast<double>(s.end) / per_column;
    for (unsigned c = static_cast<unsigned>(a); c < columns && c < b; ++c) {
      cover[c] += std::min<double>(b, c + 1) - std::max<double>(a, c);
    }
  }
  std::string svg;
  unsigned c = 0;
  while (c < columns) {
    const int level = static_cast<int>(std::min(1.0, cover[c]) * 10 + 0.5);
    unsigned run = c + 1;
    while (run < columns && static_cast<int>(std::min(1.0, cover[run]) * 10 + 0.5) == level) ++run;
    if (level > 0) {
      svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="14" fill="{}" fill-opacity="{:.1f}"/>)", c, y,
                         run - c, colour, level / 10.0);
    }
    c = run;
  }
  return svg;
}

std::string Overview(const Report& r) {
  constexpr double kLabel = 90, kWidth = 900, kRow = 18;
  std::string svg;
  double y = 0;
  for (const std::string& unit : r.units) {
    svg += fmt::format(R"(<text x="0" y="{}" class="l">{}</text>)", y + 11, Escape(unit));
    svg += fmt::format("<g transform=\"translate({},0)\">", kLabel);
    if (r.busy.contains(unit)) svg += OverviewRow(r.busy.at(unit), r.end, y, kWidth, "#2f6fb0");
    svg += "</g>";
    y += kRow;
    if (r.stalled.contains(unit)) {
      svg += fmt::format(R"(<text x="0" y="{}" class="l s">{} stalls</text>)", y + 11, Escape(unit));
      svg += fmt::format("<g transform=\"translate({},0)\">", kLabel);
      svg += OverviewRow(r.stalled.at(unit), r.end, y, kWidth, "#c0392b");
      svg += "</g>";
      y += kRow;
    }
  }
  // Launch boundaries.
  for (const LaunchRow& launch : r.launches) {
    const double x = kLabel + kWidth * static_cast<double>(launch.at.begin) / std::max<double>(1, static_cast<double>(r.end));
    svg += fmt::format(R"(<line x1="{:.1f}" x2="{:.1f}" y1="0" y2="{}" class="b"><title>{}</title></line>)", x, x, y,
                       Escape(launch.name));
  }
  return fmt::format(R"(<svg width="{}" height="{}" role="img" aria-label="timeline overview">{}</svg>)",
                     kLabel + kWidth, y + 4, svg);
}

}  // namespace

std::string HtmlReport(const std::string& trace_json, const std::string& title) {
  const Report r = Read(trace_json);
  const double peak = static_cast<double>(r.rows) * r.cols;
  std::uint64_t macs = 0, cycles = 0;
  for (const LaunchRow& l : r.launches) {
    macs += MacsOf(l);
    cycles += l.at.end - l.at.begin;
  }
  std::string html = fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0} — systole report</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ padding: 2px 10px; border-bottom: 1px solid #ddd; text-align: right; }}
td:first-child, th:first-child {{ text-align: left; }}
.l {{ font: 11px sans-serif; }} .s {{ fill: #c0392b; }} .b {{ stroke: #999; stroke-width: 0.5; }}
.bar {{ fill: #2f6fb0; }} .stall {{ fill: #c0392b; }}
</style></head><body>
<h1>{0}</h1>
<p>Device <b>{1}</b>, configuration <b>{2}</b> ({3}x{4} array at {5} MHz): {6} launch(es), {7} cycles
({8:.1f} µs){9}.</p>
)",
                                 Escape(title), Escape(r.device), Escape(r.config), r.rows, r.cols, r.clock_mhz,
                                 r.launches.size(), cycles, r.clock_mhz ? static_cast<double>(cycles) / r.clock_mhz : 0.0,
                                 macs && cycles ? fmt::format(", MXU utilization {:.1f}% (MACS / (cycles x {} x {}))",
                                                              100.0 * static_cast<double>(macs) / (static_cast<double>(cycles) * peak),
                                                              r.rows, r.cols)
                                                : "");

  html += "<h2>Timeline</h2>\n<p>Each row is a unit; shading is the share of the time it was busy (blue) or "
          "stalled (red); grey lines mark launches.</p>\n" + Overview(r) + "\n";

  html += "<h2>Units</h2>\n<table><tr><th>unit</th><th>busy cycles</th><th>busy</th><th>DMA bytes</th>"
          "<th>stall cycles by cause</th></tr>\n";
  for (const std::string& unit : r.units) {
    const std::uint64_t busy = r.busy.contains(unit) ? Covered(r.busy.at(unit)) : 0;
    std::string causes;
    if (r.stall_cycles.contains(unit)) {
      for (const auto& [cause, n] : r.stall_cycles.at(unit)) causes += fmt::format("{}{}: {}", causes.empty() ? "" : ", ", cause, n);
    }
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td><td>{}</td></tr>\n", Escape(unit), busy,
                        r.end ? 100.0 * static_cast<double>(busy) / static_cast<double>(r.end) : 0.0,
                        r.bytes.contains(unit) ? r.bytes.at(unit) : 0, causes.empty() ? "—" : causes);
  }
  html += "</table>\n";

  std::vector<Busiest> busiest;
  for (const LaunchRow& l : r.launches) busiest.push_back(BusiestUnit(r, l));
  html += BoundsTable(r, busiest, peak);

  // Per launch: utilization as a bar, the busiest unit, stalls as a table column.
  html += "<h2>Launches</h2>\n<p>Utilization = MACS / (cycles x rows x cols), from the counters the host read "
          "after each launch.</p>\n<table><tr><th>launch</th><th>cycles</th><th>MACS</th><th>utilization</th>"
          "<th></th><th>busiest unit</th><th>stall unit-cycles</th></tr>\n";
  for (std::size_t i = 0; i < r.launches.size(); ++i) {
    const LaunchRow& l = r.launches[i];
    const std::uint64_t n = l.at.end - l.at.begin;
    const std::uint64_t launch_macs = MacsOf(l);
    const double util = n && peak > 0 ? static_cast<double>(launch_macs) / (static_cast<double>(n) * peak) : 0.0;
    std::string stalls;
    for (const auto& [cause, k] : l.stalls) stalls += fmt::format("{}{}: {}", stalls.empty() ? "" : ", ", cause, k);
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td><svg width=\"200\" height=\"12\">"
        "<rect width=\"200\" height=\"12\" fill=\"#eee\"/><rect class=\"bar\" width=\"{:.1f}\" height=\"12\"/></svg>"
        "</td><td>{}</td><td>{}</td></tr>\n",
        Escape(l.name), n, launch_macs, 100.0 * util, 200.0 * std::min(1.0, util),
        busiest[i].unit.empty() ? "—" : fmt::format("{} {:.0f}%", Escape(busiest[i].unit), 100 * busiest[i].share),
        stalls.empty() ? "—" : stalls);
  }
  html += "</table>\n<p>Made by <code>systole report</code> from a timeline of <code>systole run --trace</code> "
          "(docs/TRACE.md).</p>\n</body></html>\n";
  return html;
}

}  // namespace systole::trace
