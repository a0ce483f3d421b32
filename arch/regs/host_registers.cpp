#include "arch/regs/host_registers.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace systole::regs {
namespace {

constexpr std::uint32_t kFirstCounter = OffsetOf("PERF_CYCLES_LO");
constexpr std::uint32_t kCountersEnd = kFirstCounter + 8 * kNumCounters;
constexpr std::uint32_t kCtrlSoftReset = Mask(FieldOf("CTRL", "SOFT_RESET"));
constexpr std::uint32_t kCtrlAbort = Mask(FieldOf("CTRL", "ABORT"));
constexpr std::uint32_t kCtrlClearError = Mask(FieldOf("CTRL", "CLEAR_ERROR"));
constexpr std::uint32_t kCtrlClearCounters = Mask(FieldOf("CTRL", "CLEAR_COUNTERS"));
constexpr std::uint32_t kIrqDone = Mask(FieldOf("IRQ_STATUS", "DONE"));
constexpr std::uint32_t kIrqError = Mask(FieldOf("IRQ_STATUS", "ERROR"));
constexpr std::uint32_t kIrqUser = Mask(FieldOf("IRQ_STATUS", "USER"));
constexpr std::uint32_t kIrqAll = kIrqDone | kIrqError | kIrqUser;

// The counters are contiguous LO/HI pairs in register order, so a counter's index is
// (offset - first) / 8.
consteval bool CountersAreContiguousPairs() {
  std::size_t index = 0;
  for (const Register& reg : kRegisters) {
    if (reg.group != "perf") continue;
    if (reg.offset != kFirstCounter + 4 * index) return false;
    ++index;
  }
  return index == 2 * kNumCounters;
}
static_assert(CountersAreContiguousPairs(), "PERF_* registers must be contiguous LO/HI pairs");

constexpr std::uint32_t Low(std::uint64_t value) { return static_cast<std::uint32_t>(value); }
constexpr std::uint32_t High(std::uint64_t value) { return static_cast<std::uint32_t>(value >> 32); }
constexpr std::uint64_t SetLow(std::uint64_t value, std::uint32_t low) {
  return (value & 0xFFFFFFFF00000000ull) | low;
}
constexpr std::uint64_t SetHigh(std::uint64_t value, std::uint32_t high) {
  return (value & 0xFFFFFFFFull) | std::uint64_t{high} << 32;
}

const Register& FindOrThrow(std::uint32_t offset, const char* access) {
  const Register* reg = FindRegister(offset);
  if (reg == nullptr) {
    throw std::out_of_range(fmt::format(
        "register {} at offset 0x{:03x}: no register there{}", access, offset,
        offset % 4 != 0 ? " (offsets are multiples of 4)" : ""));
  }
  return *reg;
}

}  // namespace

std::optional<std::uint32_t> HostRegisters::Read(std::uint32_t offset,
                                                 const HostRegisterOwner& owner) {
  const Register& reg = FindOrThrow(offset, "read");
  if (reg.group == "identity") return std::nullopt;
  if (offset >= kFirstCounter && offset < kCountersEnd) {
    // Reading LO latches HI, so that a LO-then-HI pair is one consistent 64-bit value.
    const std::size_t index = (offset - kFirstCounter) / 8;
    if ((offset - kFirstCounter) % 8 == 0) {
      high_latch_[index] = High(counters_[index]);
      return Low(counters_[index]);
    }
    return high_latch_[index];
  }
  switch (offset) {
    case OffsetOf("STATUS"):
      return Place(owner.Busy() ? 1u : 0u, FieldOf("STATUS", "BUSY")) |
             Place(error_ != ErrorCode::kNone ? 1u : 0u, FieldOf("STATUS", "ERROR")) |
             Place(owner.WaitingLaunches(), FieldOf("STATUS", "CMDQ_LEVEL"));
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

void HostRegisters::Write(std::uint32_t offset, std::uint32_t value, HostRegisterOwner& owner) {
  FindOrThrow(offset, "write");
  switch (offset) {
    case OffsetOf("CTRL"):
      // Actions in bit order when several are written at once.
      if ((value & kCtrlSoftReset) != 0) {
        ResetForSoftReset();
        owner.SoftReset();
      }
      if ((value & kCtrlAbort) != 0) owner.Abort();
      if ((value & kCtrlClearError) != 0) {
        error_ = ErrorCode::kNone;
        fault_pc_ = 0;
      }
      if ((value & kCtrlClearCounters) != 0) {
        counters_ = {};
        high_latch_ = {};
      }
      break;
    case OffsetOf("CMD_PC_LO"): cmd_pc_ = SetLow(cmd_pc_, value); break;
    case OffsetOf("CMD_PC_HI"): cmd_pc_ = SetHigh(cmd_pc_, value); break;
    case OffsetOf("CMD_COUNT"): cmd_count_ = value; break;
    case OffsetOf("DOORBELL"): owner.Doorbell({cmd_pc_, cmd_count_}); break;
    case OffsetOf("IRQ_ENABLE"): irq_enable_ = value & kIrqAll; break;
    case OffsetOf("IRQ_STATUS"): irq_status_ &= ~value; break;  // write 1 to clear
    default: break;  // read-only registers ignore writes
  }
}

bool HostRegisters::RaiseError(ErrorCode code, std::uint64_t pc) {
  irq_status_ |= kIrqError;
  if (error_ != ErrorCode::kNone) return false;
  error_ = code;
  fault_pc_ = pc;
  return true;
}

void HostRegisters::LaunchDone() {
  ++launches_done_;
  irq_status_ |= kIrqDone;
}

void HostRegisters::UserInterrupt(std::uint32_t code) {
  irq_code_ = code;
  irq_status_ |= kIrqUser;
}

// A soft reset keeps the host-written registers (CMD_PC, CMD_COUNT, IRQ_ENABLE) and the
// counters.
void HostRegisters::ResetForSoftReset() {
  error_ = ErrorCode::kNone;
  fault_pc_ = 0;
  irq_status_ = 0;
  irq_code_ = 0;
  launches_done_ = 0;
}

}  // namespace systole::regs
