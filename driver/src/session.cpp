// A session's own register window (see session.hpp). The semantics follow the golden model's
// registers.cpp, which follows docs/REGISTERS.md.
#include "session.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace systole::server {

using regs::FieldOf;
using regs::OffsetOf;

namespace {
constexpr std::uint32_t kFirstCounter = OffsetOf("PERF_CYCLES_LO");
constexpr std::uint32_t kCountersEnd = kFirstCounter + 8 * kNumCounters;
constexpr std::uint32_t kIrqAll = regs::Mask(FieldOf("IRQ_STATUS", "DONE")) |
                                  regs::Mask(FieldOf("IRQ_STATUS", "ERROR")) |
                                  regs::Mask(FieldOf("IRQ_STATUS", "USER"));
constexpr std::uint32_t kIrqError = regs::Mask(FieldOf("IRQ_STATUS", "ERROR"));
constexpr std::uint32_t kIrqDone = regs::Mask(FieldOf("IRQ_STATUS", "DONE"));

std::uint32_t Low(std::uint64_t value) { return static_cast<std::uint32_t>(value); }
std::uint32_t High(std::uint64_t value) { return static_cast<std::uint32_t>(value >> 32); }
std::uint64_t SetLow(std::uint64_t value, std::uint32_t low) { return (value & ~0xFFFFFFFFull) | low; }
std::uint64_t SetHigh(std::uint64_t value, std::uint32_t high) {
  return (value & 0xFFFFFFFFull) | (std::uint64_t{high} << 32);
}

const regs::Register& FindOrThrow(std::uint32_t offset) {
  const regs::Register* reg = regs::FindRegister(offset);
  if (reg == nullptr) throw std::out_of_range(fmt::format("no register at offset 0x{:x}", offset));
  return *reg;
}
}  // namespace

std::optional<std::uint32_t> Session::ReadRegister(std::uint32_t offset) {
  const regs::Register& reg = FindOrThrow(offset);
  if (reg.group == "identity") return std::nullopt;
  if (offset >= kFirstCounter && offset < kCountersEnd) {
    const std::size_t index = (offset - kFirstCounter) / 8;
    if ((offset - kFirstCounter) % 8 == 0) {
      high_latch_[index] = High(counters_[index]);
      return Low(counters_[index]);
    }
    return high_latch_[index];
  }
  const bool busy = Runnable();
  switch (offset) {
    case OffsetOf("STATUS"):
      return regs::Place(busy ? 1u : 0u, FieldOf("STATUS", "BUSY")) |
             regs::Place(error_ != regs::ErrorCode::kNone ? 1u : 0u, FieldOf("STATUS", "ERROR")) |
             regs::Place(static_cast<std::uint32_t>(launches_.size() - (busy ? 1 : 0)),
                         FieldOf("STATUS", "CMDQ_LEVEL"));
    case OffsetOf("ERROR_CODE"): return static_cast<std::uint32_t>(error_);
    case OffsetOf("FAULT_PC_LO"): return Low(fault_pc_);
    case OffsetOf("FAULT_PC_HI"): return High(fault_pc_);
    case OffsetOf("CMD_PC_LO"): return Low(cmd_pc_);
    case OffsetOf("CMD_PC_HI"): return High(cmd_pc_);
    case OffsetOf("CMD_COUNT"): return cmd_count_;
    case OffsetOf("LAUNCHES_DONE"): return launches_done_;
    case OffsetOf("IRQ_ENABLE"): return irq_enable_;
    case OffsetOf("IRQ_STATUS"): return irq_status_;
    case OffsetOf("IRQ_CODE"): return irq_code_;
    default: return 0;  // write-only registers read as 0
  }
}

void Session::WriteRegister(std::uint32_t offset, std::uint32_t value) {
  FindOrThrow(offset);
  switch (offset) {
    case OffsetOf("CTRL"):
      if ((value & regs::Mask(FieldOf("CTRL", "SOFT_RESET"))) != 0) {
        launches_.clear();
        error_ = regs::ErrorCode::kNone;
        fault_pc_ = 0;
        irq_status_ = 0;
        irq_code_ = 0;
        launches_done_ = 0;
      }
      if ((value & regs::Mask(FieldOf("CTRL", "ABORT"))) != 0 && !launches_.empty()) {
        RaiseError(regs::ErrorCode::kAborted, launches_.front().pc);
        launches_.clear();
      }
      if ((value & regs::Mask(FieldOf("CTRL", "CLEAR_ERROR"))) != 0) {
        error_ = regs::ErrorCode::kNone;
        fault_pc_ = 0;
      }
      if ((value & regs::Mask(FieldOf("CTRL", "CLEAR_COUNTERS"))) != 0) {
        counters_ = {};
        high_latch_ = {};
      }
      break;
    case OffsetOf("CMD_PC_LO"): cmd_pc_ = SetLow(cmd_pc_, value); break;
    case OffsetOf("CMD_PC_HI"): cmd_pc_ = SetHigh(cmd_pc_, value); break;
    case OffsetOf("CMD_COUNT"): cmd_count_ = value; break;
    case OffsetOf("DOORBELL"):
      if (launches_.size() >= command_queue_depth_) {
        RaiseError(regs::ErrorCode::kCmdqOverflow, cmd_pc_);
      } else {
        launches_.push_back({cmd_pc_, cmd_count_});
      }
      break;
    case OffsetOf("IRQ_ENABLE"): irq_enable_ = value & kIrqAll; break;
    case OffsetOf("IRQ_STATUS"): irq_status_ &= ~value; break;
    default: break;  // read-only registers ignore writes
  }
}

QueuedLaunch Session::PopLaunch() {
  const QueuedLaunch launch = launches_.front();
  launches_.pop_front();
  return launch;
}

void Session::FinishLaunch(std::uint32_t irq_status, std::uint32_t irq_code,
                           regs::ErrorCode error, std::uint64_t fault_pc,
                           const std::array<std::uint64_t, kNumCounters>& counts) {
  for (std::size_t i = 0; i < kNumCounters; ++i) counters_[i] += counts[i];
  irq_status_ |= irq_status & kIrqAll;
  if ((irq_status & regs::Mask(FieldOf("IRQ_STATUS", "USER"))) != 0) irq_code_ = irq_code;
  if ((irq_status & kIrqDone) != 0) ++launches_done_;
  if (error != regs::ErrorCode::kNone) RaiseError(error, fault_pc);
}

void Session::RefuseLaunch(std::uint64_t fault_pc) {
  RaiseError(regs::ErrorCode::kDramRange, fault_pc);
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
  counters_[index] += bytes;
}

// The first error sticks until CLEAR_ERROR; later ones only raise the interrupt.
void Session::RaiseError(regs::ErrorCode code, std::uint64_t pc) {
  if (error_ == regs::ErrorCode::kNone) {
    error_ = code;
    fault_pc_ = pc;
  }
  irq_status_ |= kIrqError;
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
