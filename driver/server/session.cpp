// A session's own register window (see session.hpp): the rules are regs::HostRegisters' (shared
// with the golden model); the launch queue is the session's.
#include "driver/server/session.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace systole::server {

using regs::FieldOf;

std::optional<std::uint32_t> Session::ReadRegister(std::uint32_t offset) {
  return registers_.Read(offset, *this);
}

void Session::WriteRegister(std::uint32_t offset, std::uint32_t value) {
  registers_.Write(offset, value, *this);
}

// While none of the session's launches is on the device, the front of its queue counts as
// running: from the client's side the device would be running it now.
std::uint32_t Session::WaitingLaunches() const {
  return static_cast<std::uint32_t>(launches_.size() - (!running_ && Runnable() ? 1 : 0));
}

void Session::SoftReset() {
  launches_.clear();
  if (running_) stop_ = Stop::kReset;
}

void Session::Abort() {
  if (running_) {
    stop_ = Stop::kAbort;  // the device host aborts it; the device says where it stopped
    launches_.clear();
    return;
  }
  if (launches_.empty()) return;
  registers_.RaiseError(regs::ErrorCode::kAborted, launches_.front().pc);
  launches_.clear();
}

void Session::Doorbell(regs::Launch launch) {
  if (launches_.size() >= command_queue_depth_) {
    registers_.RaiseError(regs::ErrorCode::kCmdqOverflow, launch.pc);
  } else {
    launches_.push_back(launch);
  }
}

QueuedLaunch Session::PopLaunch() {
  const QueuedLaunch launch = launches_.front();
  launches_.pop_front();
  running_ = true;
  stop_ = Stop::kNone;
  return launch;
}

void Session::FinishLaunch(std::uint32_t irq_status, std::uint32_t irq_code,
                           regs::ErrorCode error, std::uint64_t fault_pc,
                           const std::array<std::uint64_t, kNumCounters>& counts) {
  const bool reset = stop_ == Stop::kReset;
  running_ = false;
  stop_ = Stop::kNone;
  for (std::size_t i = 0; i < kNumCounters; ++i) registers_.counters()[i] += counts[i];
  if (reset) return;
  if ((irq_status & regs::Mask(FieldOf("IRQ_STATUS", "USER"))) != 0) registers_.UserInterrupt(irq_code);
  if ((irq_status & regs::Mask(FieldOf("IRQ_STATUS", "DONE"))) != 0) registers_.LaunchDone();
  if (error != regs::ErrorCode::kNone) registers_.RaiseError(error, fault_pc);
}

void Session::RefuseLaunch(regs::ErrorCode error, std::uint64_t fault_pc) {
  running_ = false;
  stop_ = Stop::kNone;
  registers_.RaiseError(error, fault_pc);
}

void Session::CountHostBytes(std::uint64_t bytes) {
  static const std::size_t index = [] {
    std::size_t i = 0;
    for (const regs::Counter& counter : regs::Counters()) {
      if (counter.name == "BYTES_HOST") return i;
      ++i;
    }
    throw std::logic_error("no BYTES_HOST counter");
  }();
  registers_.counters()[index] += bytes;
}

void AddRange(RangeMap& ranges, std::uint64_t start, std::uint64_t end) {
  if (start >= end) return;
  auto it = ranges.upper_bound(start);
  if (it != ranges.begin() && std::prev(it)->second >= start) {
    --it;
    start = it->first;
  }
  while (it != ranges.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = ranges.erase(it);
  }
  ranges.emplace(start, end);
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> TakeRanges(RangeMap& ranges,
                                                                std::uint64_t start,
                                                                std::uint64_t end) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;
  auto it = ranges.upper_bound(start);
  if (it != ranges.begin()) --it;
  while (it != ranges.end() && it->first < end) {
    const auto [first, last] = *it;
    if (last <= start) {
      ++it;
      continue;
    }
    it = ranges.erase(it);
    if (first < start) ranges.emplace(first, start);
    if (last > end) ranges.emplace(end, last);
    taken.emplace_back(std::max(first, start), std::min(last, end));
  }
  return taken;
}

}  // namespace systole::server
