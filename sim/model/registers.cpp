// The host-visible register file: identity, control, command queue, interrupts, counters.
// arch/regs/regmap.hpp defines every offset and bit; this file gives them behaviour.
#include <fmt/format.h>

#include <bit>
#include <stdexcept>

#include "golden_model.hpp"

namespace systole::model {

namespace {

using regs::ErrorCode;
using regs::FieldOf;
using regs::Mask;
using regs::OffsetOf;
using regs::Place;

// Perf enum order must be register order, so a counter's index is (offset - first) / 8.
constexpr std::array<std::string_view, kNumPerfCounters> kPerfRegisterNames = {
    "PERF_CYCLES_LO",           "PERF_INSNS_LO",           "PERF_MXU_BUSY_LO",
    "PERF_MACS_LO",             "PERF_STALL_TOKEN_LO",     "PERF_STALL_WFIFO_LO",
    "PERF_STALL_MEMORY_LO",     "PERF_STALL_DISPATCH_LO",  "PERF_BYTES_DRAM_TO_UB_LO",
    "PERF_BYTES_DRAM_TO_ACC_LO", "PERF_BYTES_WEIGHTS_LO",  "PERF_BYTES_UB_TO_DRAM_LO",
    "PERF_BYTES_ACC_TO_DRAM_LO", "PERF_BYTES_HOST_LO"};
constexpr std::uint32_t kFirstPerf = OffsetOf("PERF_CYCLES_LO");
constexpr std::uint32_t kPerfEnd = kFirstPerf + 8 * kNumPerfCounters;

consteval bool PerfCountersMatchRegisterMap() {
  unsigned perf_registers = 0;
  for (const regs::Register& reg : regs::kRegisters) perf_registers += reg.group == "perf";
  if (perf_registers != 2 * kNumPerfCounters) return false;
  for (unsigned i = 0; i < kNumPerfCounters; ++i) {
    if (OffsetOf(kPerfRegisterNames[i]) != kFirstPerf + 8 * i) return false;
  }
  return true;
}
static_assert(PerfCountersMatchRegisterMap(), "Perf (perf_counters.hpp) disagrees with kRegisters");

constexpr std::uint32_t kCtrlSoftReset = Mask(FieldOf("CTRL", "SOFT_RESET"));
constexpr std::uint32_t kCtrlAbort = Mask(FieldOf("CTRL", "ABORT"));
constexpr std::uint32_t kCtrlClearError = Mask(FieldOf("CTRL", "CLEAR_ERROR"));
constexpr std::uint32_t kCtrlClearCounters = Mask(FieldOf("CTRL", "CLEAR_COUNTERS"));
constexpr std::uint32_t kIrqError = Mask(FieldOf("IRQ_STATUS", "ERROR"));
constexpr std::uint32_t kIrqAll = Mask(FieldOf("IRQ_STATUS", "DONE")) | kIrqError |
                                  Mask(FieldOf("IRQ_STATUS", "USER"));

constexpr std::uint32_t Low(std::uint64_t value) { return static_cast<std::uint32_t>(value); }
constexpr std::uint32_t High(std::uint64_t value) { return static_cast<std::uint32_t>(value >> 32); }
constexpr std::uint64_t SetLow(std::uint64_t value, std::uint32_t low) {
  return (value & 0xFFFFFFFF00000000ull) | low;
}
constexpr std::uint64_t SetHigh(std::uint64_t value, std::uint32_t high) {
  return (value & 0xFFFFFFFFull) | std::uint64_t{high} << 32;
}

const regs::Register& FindOrThrow(std::uint32_t offset, const char* access) {
  const regs::Register* reg = regs::FindRegister(offset);
  if (reg == nullptr) {
    throw std::out_of_range(fmt::format(
        "register {} at offset 0x{:03x}: no register there{}", access, offset,
        offset % 4 != 0 ? " (offsets are multiples of 4)" : ""));
  }
  return *reg;
}

}  // namespace

std::uint32_t GoldenModel::IdentityRegister(std::uint32_t offset) const {
  switch (offset) {
    case OffsetOf("ID_MAGIC"): return regs::kMagic;
    case OffsetOf("ID_VERSION"):
      return Place(isa::kIsaVersionMajor, FieldOf("ID_VERSION", "MAJOR")) |
             Place(isa::kIsaVersionMinor, FieldOf("ID_VERSION", "MINOR"));
    case OffsetOf("CFG_ARRAY"):
      return Place(config_.rows, FieldOf("CFG_ARRAY", "ROWS")) |
             Place(config_.cols, FieldOf("CFG_ARRAY", "COLS"));
    case OffsetOf("CFG_DTYPE"): return static_cast<std::uint32_t>(config_.dtype);
    case OffsetOf("CFG_UB_ROWS"): return Low(ub_rows_);
    case OffsetOf("CFG_ACC_ROWS"): return Low(acc_rows_);
    case OffsetOf("CFG_QUEUES"):
      return Place(config_.weight_fifo_tiles, FieldOf("CFG_QUEUES", "WFIFO_TILES")) |
             Place(config_.command_queue_depth, FieldOf("CFG_QUEUES", "CMDQ_DEPTH")) |
             Place(config_.token_capacity, FieldOf("CFG_QUEUES", "TOKEN_CAPACITY"));
    case OffsetOf("CFG_MEM_SIZE_LO"): return Low(config_.memory_bytes);
    case OffsetOf("CFG_MEM_SIZE_HI"): return High(config_.memory_bytes);
    case OffsetOf("CFG_MEM"):
      return Place(config_.memory_channels, FieldOf("CFG_MEM", "CHANNELS")) |
             Place(static_cast<std::uint32_t>(std::countr_zero(config_.interleave_bytes)),
                   FieldOf("CFG_MEM", "INTERLEAVE_LOG2"));
    case OffsetOf("CFG_CLOCK_MHZ"): return config_.clock_mhz;
    case OffsetOf("CFG_NAME0"):
    case OffsetOf("CFG_NAME1"):
    case OffsetOf("CFG_NAME2"):
    case OffsetOf("CFG_NAME3"): {
      // Four name bytes, first in the low byte; NUL past the end of the name.
      const std::size_t first = (offset - OffsetOf("CFG_NAME0"));
      std::uint32_t word = 0;
      for (std::size_t i = 0; i < 4; ++i) {
        if (first + i < config_.name.size()) {
          word |= std::uint32_t{static_cast<std::uint8_t>(config_.name[first + i])} << (8 * i);
        }
      }
      return word;
    }
    default: return 0;
  }
}

std::uint32_t GoldenModel::ReadRegister(std::uint32_t offset) {
  const regs::Register& reg = FindOrThrow(offset, "read");
  if (offset >= kFirstPerf && offset < kPerfEnd) {
    // Reading LO latches HI, so that a LO-then-HI pair is one consistent 64-bit value.
    const std::size_t index = (offset - kFirstPerf) / 8;
    if ((offset - kFirstPerf) % 8 == 0) {
      perf_hi_latch_[index] = High(perf_[index]);
      return Low(perf_[index]);
    }
    return perf_hi_latch_[index];
  }
  switch (offset) {
    case OffsetOf("STATUS"):
      return Place(busy_ ? 1u : 0u, FieldOf("STATUS", "BUSY")) |
             Place(error_code_ != ErrorCode::kNone ? 1u : 0u, FieldOf("STATUS", "ERROR")) |
             Place(static_cast<std::uint32_t>(command_queue_.size()),
                   FieldOf("STATUS", "CMDQ_LEVEL"));
    case OffsetOf("ERROR_CODE"): return static_cast<std::uint32_t>(error_code_);
    case OffsetOf("FAULT_PC_LO"): return Low(fault_pc_);
    case OffsetOf("FAULT_PC_HI"): return High(fault_pc_);
    case OffsetOf("CMD_PC_LO"): return Low(cmd_pc_);
    case OffsetOf("CMD_PC_HI"): return High(cmd_pc_);
    case OffsetOf("CMD_COUNT"): return cmd_count_;
    case OffsetOf("LAUNCHES_DONE"): return launches_done_;
    case OffsetOf("IRQ_ENABLE"): return irq_enable_;
    case OffsetOf("IRQ_STATUS"): return irq_status_;
    case OffsetOf("IRQ_CODE"): return irq_code_;
    default: break;
  }
  if (reg.access == regs::Access::kWO) return 0;
  return IdentityRegister(offset);
}

void GoldenModel::WriteRegister(std::uint32_t offset, std::uint32_t value) {
  FindOrThrow(offset, "write");
  switch (offset) {
    case OffsetOf("CTRL"): Control(value); break;
    case OffsetOf("CMD_PC_LO"): cmd_pc_ = SetLow(cmd_pc_, value); break;
    case OffsetOf("CMD_PC_HI"): cmd_pc_ = SetHigh(cmd_pc_, value); break;
    case OffsetOf("CMD_COUNT"): cmd_count_ = value; break;
    case OffsetOf("DOORBELL"):
      if (command_queue_.size() >= config_.command_queue_depth) {
        RaiseError(ErrorCode::kCmdqOverflow, cmd_pc_,
                   fmt::format("doorbell for pc 0x{:x}: the command queue already holds {} "
                               "launches",
                               cmd_pc_, command_queue_.size()));
      } else {
        command_queue_.push_back({cmd_pc_, cmd_count_});
      }
      break;
    case OffsetOf("IRQ_ENABLE"): irq_enable_ = value & kIrqAll; break;
    case OffsetOf("IRQ_STATUS"): irq_status_ &= ~value; break;  // write 1 to clear
    default: break;  // read-only registers ignore writes
  }
}

// CTRL actions act in bit order when several are written at once.
void GoldenModel::Control(std::uint32_t value) {
  if ((value & kCtrlSoftReset) != 0) SoftReset();
  if ((value & kCtrlAbort) != 0 && !command_queue_.empty()) {
    // Launches run when the host waits, so the oldest queued launch is the one the hardware
    // would be running: it stops before its first instruction, and the rest are dropped.
    RaiseError(ErrorCode::kAborted, command_queue_.front().pc, "aborted by the host");
    command_queue_.clear();
  }
  if ((value & kCtrlClearError) != 0) {
    error_code_ = ErrorCode::kNone;
    fault_pc_ = 0;
  }
  if ((value & kCtrlClearCounters) != 0) {
    perf_ = {};
    perf_hi_latch_ = {};
  }
}

// Resets the sequencer, the units, the queues and the error state. Device memory, the unified
// buffer and the accumulators keep their contents; so do the host-written registers
// (CMD_PC, CMD_COUNT, IRQ_ENABLE) and the performance counters.
void GoldenModel::SoftReset() {
  command_queue_.clear();
  launch_ = LaunchState{};
  error_code_ = ErrorCode::kNone;
  fault_pc_ = 0;
  irq_status_ = 0;
  irq_code_ = 0;
  launches_done_ = 0;
  busy_ = false;
  last_error_message_.clear();
}

// The first error sticks until CLEAR_ERROR (or SOFT_RESET); later ones only raise the IRQ.
void GoldenModel::RaiseError(ErrorCode code, std::uint64_t pc, std::string message) {
  if (error_code_ == ErrorCode::kNone) {
    error_code_ = code;
    fault_pc_ = pc;
    last_error_message_ = std::move(message);
  }
  irq_status_ |= kIrqError;
}

void GoldenModel::RunUntilIdle() {
  busy_ = true;
  while (!command_queue_.empty() && error_code_ == ErrorCode::kNone) {
    const QueuedLaunch launch = command_queue_.front();
    command_queue_.pop_front();
    Execute(launch.pc, launch.count);
  }
  busy_ = false;
}

}  // namespace systole::model
