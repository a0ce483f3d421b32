// `systole report run.json -o report.html`: one self-contained page (inline SVG and CSS, no
// scripts, nothing fetched) from a timeline that `systole run --trace` wrote — per-launch
// (per-layer, for a model) utilization and busiest unit, the launches grouped by the unit that
// bounds them with the cycles each group lost, the stall breakdown by unit and cause, and a
// timeline overview with one row per unit.
#pragma once

#include <string>

namespace systole::trace {

// `trace_json`: the text of a Chrome trace-event file written by Timeline::WriteChromeTrace.
// `title`: shown at the top (usually the file name). Throws std::runtime_error naming what is
// missing when the file is not such a timeline.
std::string HtmlReport(const std::string& trace_json, const std::string& title);

}  // namespace systole::trace
