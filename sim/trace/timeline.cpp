#include "sim/trace/timeline.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace systole::trace {

using isa::Field;
using isa::Opcode;

std::string_view StallCauseName(StallCause cause) {
  switch (cause) {
    case StallCause::kMemory: return "memory";
    case StallCause::kWeightFifo: return "weight fifo";
    case StallCause::kToken: return "token";
    case StallCause::kDispatch: return "dispatch";
  }
  return "?";
}

namespace {

// Device-memory bytes an instruction moves, by the ISA's semantics (docs/ISA.md): what the
// BYTES_* performance counters add up for it.
std::uint64_t DmaBytes(const Config& config, const isa::Instruction& insn) {
  const std::uint64_t element = ElementBytes(config.dtype);
  switch (insn.opcode) {
    case Opcode::kLoad:
    case Opcode::kStore:
      return insn[Field::kRows] * insn[Field::kElems] * isa::DmaElementBytes(insn, static_cast<unsigned>(element));
    case Opcode::kLoadWeights:
      return insn[Field::kRows] * insn[Field::kCols] * element;
    default:
      return 0;
  }
}

}  // namespace

Timeline::Timeline(const Config& config, std::string device)
    : config_(config), device_(std::move(device)) {}

void Timeline::BeginLaunch(std::span<const isa::Word> program) {
  Launch launch;
  launch.name = next_name_.empty() ? "launch " + std::to_string(launches_.size()) : next_name_;
  next_name_.clear();
  axis_start_ = launches_.empty() ? 0 : launches_.back().end;
  launch.begin = launch.end = axis_start_;
  launches_.push_back(std::move(launch));
  started_ = false;
  program_.clear();
  pending_.assign(isa::kNumUnits, {});
  next_pending_.assign(isa::kNumUnits, 0);
  for (const isa::Word& word : program) {
    isa::Instruction insn;
    if (isa::Decode(word, insn)) break;  // the device faults here: nothing after it runs
    const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(insn.opcode));
    if (spec != nullptr && spec->unit != isa::Unit::kSequencer) {
      pending_[static_cast<unsigned>(spec->unit)].push_back(program_.size());
    }
    program_.push_back(insn);
  }
}

void Timeline::Append(const Timeline& other) {
  const std::uint64_t offset = launches_.empty() ? 0 : launches_.back().end;
  const std::size_t first = launches_.size();
  const std::uint64_t other_start = other.launches_.empty() ? 0 : other.launches_.front().begin;
  for (Launch launch : other.launches_) {
    launch.begin = launch.begin - other_start + offset;
    launch.end = launch.end - other_start + offset;
    launches_.push_back(std::move(launch));
  }
  for (Span span : other.spans_) {
    span.begin = span.begin - other_start + offset;
    span.end = span.end - other_start + offset;
    span.launch += first;
    spans_.push_back(std::move(span));
  }
  for (Stall stall : other.stalls_) {
    stall.begin = stall.begin - other_start + offset;
    stall.end = stall.end - other_start + offset;
    stall.launch += first;
    stalls_.push_back(stall);
  }
  unmatched_ += other.unmatched_;
  started_ = false;  // the next launch begins after the appended ones (BeginLaunch)
}

void Timeline::SetLaunchCounters(std::vector<std::pair<std::string, std::uint64_t>> counters) {
  if (!launches_.empty()) launches_.back().counters = std::move(counters);
}

void Timeline::LaunchStarted(std::uint64_t cycle) {
  if (launches_.empty()) BeginLaunch({});  // a device launched without the host saying so
  device_start_ = cycle;
  started_ = true;
}

std::uint64_t Timeline::ToAxis(std::uint64_t cycle) const {
  return axis_start_ + (cycle >= device_start_ ? cycle - device_start_ : 0);
}

void Timeline::Extend(std::uint64_t axis_end) {
  launches_.back().end = std::max(launches_.back().end, axis_end);
}

void Timeline::LaunchEnded(std::uint64_t cycle) {
  if (!started_) LaunchStarted(0);
  Extend(ToAxis(cycle));
}

void Timeline::UnitInstruction(unsigned unit, std::uint64_t begin, std::uint64_t end) {
  if (!started_) LaunchStarted(begin);
  Span span;
  span.unit = unit;
  span.begin = ToAxis(begin);
  span.end = std::max(ToAxis(end), span.begin + 1);
  span.launch = launches_.size() - 1;
  if (unit < pending_.size() && next_pending_[unit] < pending_[unit].size()) {
    const std::size_t index = pending_[unit][next_pending_[unit]++];
    span.index = index;
    span.instruction = program_[index];
    span.bytes = DmaBytes(config_, program_[index]);
  } else {
    ++unmatched_;
  }
  Extend(span.end);
  spans_.push_back(span);
}

void Timeline::UnitStall(unsigned unit, StallCause cause, std::uint64_t begin, std::uint64_t end) {
  if (end <= begin) return;
  if (!started_) LaunchStarted(begin);
  stalls_.push_back({unit, cause, ToAxis(begin), ToAxis(end), launches_.size() - 1});
  Extend(stalls_.back().end);
}

void Timeline::WriteChromeTrace(const std::filesystem::path& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("trace: cannot write " + path.string());
  out << ChromeTraceJson();
  out.flush();
  if (!out) throw std::runtime_error("trace: cannot write " + path.string());
}

}  // namespace systole::trace
