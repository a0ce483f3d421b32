// What each unit did, cycle by cycle: a timeline recorded while a device runs, written in the
// Chrome trace-event format (Perfetto, chrome://tracing) by `systole run --trace`.
//
// Two sides fill it. The host side (the driver, at each launch) says which instructions the
// launch runs and, optionally, what the launch is called (a model's step). The device side (the
// golden model's timing, or the Verilated core's trace ports) reports, per unit and in that
// unit's program order, when each instruction began and ended, and the cycles a unit stalled
// and why. The k-th instruction a unit reports is the k-th instruction of the launch that runs
// on that unit: units run their instructions in program order (docs/ISA.md), so no instruction
// address has to cross the device boundary.
//
// Times are device cycles. Each launch's cycles are counted from its own start, and the launches
// are laid end to end on one time axis, so `ref` (whose model starts every launch at cycle 0)
// and `rtl` (whose clock runs on between launches) give comparable timelines.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/isa/isa.hpp"

namespace systole::trace {

enum class StallCause : std::uint8_t {
  kMemory,      // a DMA waiting for device memory (PERF_STALL_MEMORY)
  kWeightFifo,  // a MATMUL waiting for its weight tile (PERF_STALL_WFIFO)
  kToken,       // an instruction waiting for another unit's token (PERF_STALL_TOKEN)
  kDispatch,    // the sequencer waiting for room in a unit's queue (PERF_STALL_DISPATCH)
};
std::string_view StallCauseName(StallCause cause);  // "memory", "weight fifo", "token", "dispatch"

// The sequencer's own track (dispatch stalls), after the five units.
inline constexpr unsigned kSequencerTrack = isa::kNumUnits;

// One instruction's time on its unit, with what the host knows about it.
struct Span {
  unsigned unit = 0;
  std::uint64_t begin = 0, end = 0;  // cycles on the timeline's axis; end > begin
  std::size_t launch = 0;            // index into Timeline::launches()
  std::optional<std::size_t> index;  // instruction index in the launch, when the host said
  std::optional<isa::Instruction> instruction;
  std::uint64_t bytes = 0;           // device-memory bytes a DMA moves (0 for other units)
};

struct Stall {
  unsigned unit = 0;  // or kSequencerTrack
  StallCause cause = StallCause::kMemory;
  std::uint64_t begin = 0, end = 0;
  std::size_t launch = 0;
};

struct Launch {
  std::string name;                  // a model's step name, or "launch N"
  std::uint64_t begin = 0, end = 0;  // on the timeline's axis
  // The device's performance counters after the launch, when the host read them ("MACS", …).
  std::vector<std::pair<std::string, std::uint64_t>> counters;
};

class Timeline {
 public:
  explicit Timeline(const Config& config, std::string device = "");

  // Host side. Before a launch: its instructions (empty when unknown) and, optionally, its name.
  void NameNextLaunch(std::string name) { next_name_ = std::move(name); }
  void BeginLaunch(std::span<const isa::Word> program);
  // After a launch: the counters the host read (cleared before the launch), for per-launch
  // utilization in reports.
  void SetLaunchCounters(std::vector<std::pair<std::string, std::uint64_t>> counters);

  // Device side, during the launch that BeginLaunch announced. `cycle` values are the device's
  // own clock; the first call of a launch is LaunchStarted with the cycle it began at.
  void LaunchStarted(std::uint64_t cycle);
  void UnitInstruction(unsigned unit, std::uint64_t begin, std::uint64_t end);
  void UnitStall(unsigned unit, StallCause cause, std::uint64_t begin, std::uint64_t end);
  // The launch ended at `cycle`, which may lie after its last span (the golden model's HALT
  // ends it the cycle after the last `done`, as the RTL's busy span does).
  void LaunchEnded(std::uint64_t cycle);

  const Config& config() const { return config_; }
  const std::string& device() const { return device_; }
  const std::vector<Span>& spans() const { return spans_; }
  const std::vector<Stall>& stalls() const { return stalls_; }
  const std::vector<Launch>& launches() const { return launches_; }

  // Appends `other`'s launches (recorded on another device, for the same configuration) after
  // this timeline's, as if they had run next: its spans and stalls move along the axis with
  // them. A launch of this timeline still being recorded is closed first.
  void Append(const Timeline& other);

  // Instructions the device reported beyond those the host announced (0 when all matched).
  std::uint64_t unmatched() const { return unmatched_; }

  // The Chrome trace-event JSON (one process, a thread per unit lane and per stall track;
  // timestamps in microseconds at the configuration's clock, cycles in each event's args).
  std::string ChromeTraceJson() const;
  // Writes ChromeTraceJson() to `path`; throws std::runtime_error naming the path on failure.
  void WriteChromeTrace(const std::filesystem::path& path) const;

 private:
  std::uint64_t ToAxis(std::uint64_t cycle) const;
  void Extend(std::uint64_t axis_end);

  Config config_;
  std::string device_;
  std::string next_name_;
  std::vector<Launch> launches_;
  std::vector<Span> spans_;
  std::vector<Stall> stalls_;
  std::uint64_t unmatched_ = 0;
  // The current launch: its device start cycle, where it sits on the axis, and per unit the
  // announced instructions (indices into program_) not yet reported.
  bool started_ = false;
  std::uint64_t device_start_ = 0;
  std::uint64_t axis_start_ = 0;
  std::vector<isa::Instruction> program_;
  std::vector<std::vector<std::size_t>> pending_;  // per unit, in program order
  std::vector<std::size_t> next_pending_;          // per unit, how many were reported
};

}  // namespace systole::trace
