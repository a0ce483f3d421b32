// Timeline → the Chrome trace-event format ("JSON Object Format" of the Trace Event Format
// document that Perfetto and chrome://tracing read): complete events ("ph": "X") on one thread
// per unit lane, stall events on a thread per unit, launches on a thread of their own, and
// "M" metadata events naming and ordering the threads.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

#include "sim/trace/timeline.hpp"

namespace systole::trace {
namespace {

using nlohmann::json;

// Thread ids: launches first, then every unit's lanes (instructions that overlap on one unit,
// such as back-to-back MATMULs whose results are still draining, go on lanes below it), then
// the stall tracks.
constexpr unsigned kLaunchThread = 1;
constexpr unsigned kMaxLanes = 8;
unsigned LaneThread(unsigned unit, unsigned lane) { return 10 + unit * kMaxLanes + lane; }
unsigned StallThread(unsigned track) { return 100 + track; }

std::string TrackName(unsigned track) {
  if (track == kSequencerTrack) return "SEQUENCER";
  std::string name(isa::UnitName(static_cast<isa::Unit>(track)));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

json ThreadMeta(unsigned tid, const std::string& name) {
  return json::array({
      {{"ph", "M"}, {"pid", 1}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", name}}}},
      {{"ph", "M"}, {"pid", 1}, {"tid", tid}, {"name", "thread_sort_index"},
       {"args", {{"sort_index", tid}}}},
  });
}

json InstructionArgs(const Span& span) {
  json args = {{"cycle", span.begin}, {"cycles", span.end - span.begin}};
  if (span.index) args["index"] = *span.index;
  if (span.bytes != 0) args["bytes"] = span.bytes;
  if (span.instruction) {
    const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(span.instruction->opcode));
    if (spec != nullptr) {
      for (const isa::FieldSpec& field : spec->fields) args[std::string(field.name)] = (*span.instruction)[field.field];
    }
    if (span.instruction->wait != 0) args["wait"] = span.instruction->wait;
    if (span.instruction->signal != 0) args["signal"] = span.instruction->signal;
  }
  return args;
}

std::string InstructionName(const Span& span) {
  if (!span.instruction) return "?";
  const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(span.instruction->opcode));
  return spec != nullptr ? std::string(spec->mnemonic) : "?";
}

}  // namespace

std::string Timeline::ChromeTraceJson() const {
  const double us_per_cycle = 1.0 / std::max<std::uint32_t>(config_.clock_mhz, 1);
  json events = json::array();
  auto add_meta = [&](unsigned tid, const std::string& name) {
    for (json& e : ThreadMeta(tid, name)) events.push_back(std::move(e));
  };
  events.push_back({{"ph", "M"}, {"pid", 1}, {"name", "process_name"},
                    {"args", {{"name", "systole " + device_ + " (" + config_.name + ")"}}}});
  add_meta(kLaunchThread, "launches");
  auto complete = [&](unsigned tid, std::string name, std::string category, std::uint64_t begin,
                      std::uint64_t end, json args) {
    events.push_back({{"ph", "X"}, {"pid", 1}, {"tid", tid}, {"name", std::move(name)},
                      {"cat", std::move(category)}, {"ts", static_cast<double>(begin) * us_per_cycle},
                      {"dur", static_cast<double>(end - begin) * us_per_cycle}, {"args", std::move(args)}});
  };
  for (const Launch& launch : launches_) {
    json args = {{"cycle", launch.begin}, {"cycles", launch.end - launch.begin}};
    if (!launch.counters.empty()) {
      json counters = json::object();
      for (const auto& [name, value] : launch.counters) counters[name] = value;
      args["counters"] = std::move(counters);
    }
    complete(kLaunchThread, launch.name, "launch", launch.begin, launch.end, std::move(args));
  }

  // Lanes: each span goes on the first lane of its unit that is free at its start.
  std::vector<std::vector<std::uint64_t>> lane_free(isa::kNumUnits);
  std::vector<const Span*> ordered;
  for (const Span& span : spans_) ordered.push_back(&span);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Span* a, const Span* b) { return a->begin < b->begin; });
  for (const Span* span : ordered) {
    if (span->unit >= isa::kNumUnits) continue;
    auto& lanes = lane_free[span->unit];
    unsigned lane = 0;
    while (lane < lanes.size() && lanes[lane] > span->begin) ++lane;
    if (lane == lanes.size()) {
      if (lane == kMaxLanes) lane = kMaxLanes - 1;  // more overlap than lanes: share the last
      else lanes.push_back(0);
    }
    lanes[lane] = std::max(lanes[lane], span->end);
    complete(LaneThread(span->unit, lane), InstructionName(*span), "instruction", span->begin,
             span->end, InstructionArgs(*span));
  }
  for (unsigned unit = 0; unit < isa::kNumUnits; ++unit) {
    for (unsigned lane = 0; lane < std::max<std::size_t>(lane_free[unit].size(), 1); ++lane) {
      add_meta(LaneThread(unit, lane), TrackName(unit) + (lane == 0 ? "" : " #" + std::to_string(lane + 1)));
    }
  }

  std::vector<bool> stall_track(isa::kNumUnits + 1, false);
  for (const Stall& stall : stalls_) {
    stall_track[stall.unit] = true;
    complete(StallThread(stall.unit), "stall: " + std::string(StallCauseName(stall.cause)), "stall",
             stall.begin, stall.end, {{"cycle", stall.begin}, {"cycles", stall.end - stall.begin}});
  }
  for (unsigned track = 0; track < stall_track.size(); ++track) {
    if (stall_track[track]) add_meta(StallThread(track), TrackName(track) + " stalls");
  }

  json trace = {{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ns"},
                {"otherData",
                 {{"generator", "systole run --trace"},
                  {"device", device_},
                  {"config", config_.name},
                  {"clock_mhz", config_.clock_mhz},
                  {"rows", config_.rows},
                  {"cols", config_.cols},
                  {"unmatched_instructions", unmatched_}}}};
  return trace.dump();
}

}  // namespace systole::trace
