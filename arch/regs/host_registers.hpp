// What reading and writing the control, status, interrupt and counter registers does, defined
// once for every device model kept in C++: the golden model (sim/model/registers.cpp) and the
// device server's per-client register windows (driver/server/session.hpp). The RTL register
// block (rtl/control/systole_regs.sv) implements the same rules in hardware and is held to the
// golden model by the whole-core tests.
//
// HostRegisters keeps the state those registers show: CMD_PC, CMD_COUNT, ERROR_CODE and
// FAULT_PC (the first error sticks), LAUNCHES_DONE, the interrupt registers and the 64-bit
// performance counters (reading LO latches HI). What only the device knows — whether it is
// busy, how many launches wait, what a soft reset, an abort or a doorbell does to its queue —
// it asks of a HostRegisterOwner, in the order docs/REGISTERS.md gives for CTRL's actions.
// Identity registers describe the owner's configuration: Read leaves them to the owner.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "arch/regs/regmap.hpp"

namespace systole::regs {

// The PERF_* registers come in LO/HI pairs, one pair per counter, in register order.
consteval std::size_t CountCounterRegisters() {
  std::size_t registers = 0;
  for (const Register& reg : kRegisters) {
    if (reg.group == "perf") ++registers;
  }
  return registers / 2;
}
inline constexpr std::size_t kNumCounters = CountCounterRegisters();
using CounterValues = std::array<std::uint64_t, kNumCounters>;

struct Launch {
  std::uint64_t pc = 0;
  std::uint32_t count = 0;
};

// The device behind a HostRegisters.
class HostRegisterOwner {
 public:
  virtual ~HostRegisterOwner() = default;
  // STATUS.BUSY and STATUS.CMDQ_LEVEL (launches waiting, not the one running) as of now.
  virtual bool Busy() const = 0;
  virtual std::uint32_t WaitingLaunches() const = 0;
  // CTRL.SOFT_RESET: reset the units and drop every queued launch. The registers have already
  // cleared their own error, interrupt status and code, and LAUNCHES_DONE.
  virtual void SoftReset() = 0;
  // CTRL.ABORT: stop the launch that runs and drop the rest; RaiseError(kAborted, its pc)
  // when there was one.
  virtual void Abort() = 0;
  // DOORBELL, with CMD_PC and CMD_COUNT: queue the launch, or RaiseError(kCmdqOverflow, pc)
  // when the command queue is full.
  virtual void Doorbell(Launch launch) = 0;
};

class HostRegisters {
 public:
  // The register's value, or nullopt for an identity register (the owner's to answer).
  // Write-only registers read as 0. Throws std::out_of_range for an offset that names no
  // register.
  std::optional<std::uint32_t> Read(std::uint32_t offset, const HostRegisterOwner& owner);
  // Applies a write: host-written registers take the value, IRQ_STATUS clears the bits written
  // as 1, CTRL's actions run in bit order (SOFT_RESET, ABORT, CLEAR_ERROR, CLEAR_COUNTERS),
  // DOORBELL rings the owner; read-only registers ignore it. Throws std::out_of_range for an
  // offset that names no register.
  void Write(std::uint32_t offset, std::uint32_t value, HostRegisterOwner& owner);

  // ---- What the device reports --------------------------------------------------------------
  // The first error sticks (ERROR_CODE, FAULT_PC) until CLEAR_ERROR or SOFT_RESET; every one
  // raises IRQ_STATUS.ERROR. True when this one stuck.
  bool RaiseError(ErrorCode code, std::uint64_t pc);
  void LaunchDone();                           // IRQ_STATUS.DONE, LAUNCHES_DONE + 1
  void UserInterrupt(std::uint32_t code);      // IRQ_STATUS.USER with IRQ_CODE = code
  CounterValues& counters() { return counters_; }
  const CounterValues& counters() const { return counters_; }

  // ---- State ----------------------------------------------------------------------------
  ErrorCode error() const { return error_; }
  std::uint64_t fault_pc() const { return fault_pc_; }
  std::uint32_t irq_status() const { return irq_status_; }
  std::uint32_t irq_enable() const { return irq_enable_; }
  bool InterruptLine() const { return (irq_status_ & irq_enable_) != 0; }

 private:
  void ResetForSoftReset();

  std::uint64_t cmd_pc_ = 0;
  std::uint32_t cmd_count_ = 0;
  ErrorCode error_ = ErrorCode::kNone;
  std::uint64_t fault_pc_ = 0;
  std::uint32_t launches_done_ = 0;
  std::uint32_t irq_enable_ = 0;
  std::uint32_t irq_status_ = 0;
  std::uint32_t irq_code_ = 0;
  CounterValues counters_{};
  std::array<std::uint32_t, kNumCounters> high_latch_{};
};

}  // namespace systole::regs
