// The golden model's host-visible registers. The rules of the control, status, interrupt and
// counter registers are regs::HostRegisters' (arch/regs/host_registers.hpp, shared with the
// device server); this file gives the model's side of them — its command queue, soft reset,
// abort and doorbell — and the identity registers that describe its configuration.
#include <fmt/format.h>

#include <stdexcept>

#include "arch/regs/identity.hpp"
#include "sim/model/golden_model.hpp"

namespace systole::model {

namespace {

using regs::ErrorCode;
using regs::OffsetOf;

// Perf enum order must be register order, so a counter's index is (offset - first) / 8.
constexpr std::array<std::string_view, kNumPerfCounters> kPerfRegisterNames = {
    "PERF_CYCLES_LO",           "PERF_INSNS_LO",           "PERF_MXU_BUSY_LO",
    "PERF_MACS_LO",             "PERF_STALL_TOKEN_LO",     "PERF_STALL_WFIFO_LO",
    "PERF_STALL_MEMORY_LO",     "PERF_STALL_DISPATCH_LO",  "PERF_BYTES_DRAM_TO_UB_LO",
    "PERF_BYTES_DRAM_TO_ACC_LO", "PERF_BYTES_WEIGHTS_LO",  "PERF_BYTES_UB_TO_DRAM_LO",
    "PERF_BYTES_ACC_TO_DRAM_LO", "PERF_BYTES_HOST_LO"};
constexpr std::uint32_t kFirstPerf = OffsetOf("PERF_CYCLES_LO");

consteval bool PerfCountersMatchRegisterMap() {
  if (regs::kNumCounters != kNumPerfCounters) return false;
  for (unsigned i = 0; i < kNumPerfCounters; ++i) {
    if (OffsetOf(kPerfRegisterNames[i]) != kFirstPerf + 8 * i) return false;
  }
  return true;
}
static_assert(PerfCountersMatchRegisterMap(), "Perf (perf_counters.hpp) disagrees with kRegisters");

}  // namespace

// What the registers ask of the model (regs::HostRegisterOwner). Launches run when the host
// waits (RunUntilIdle, RunUntil), so every queued launch is waiting; one that RunUntil paused
// is BUSY (and counts as running, not waiting) while a register is written.
class GoldenModel::RegisterOwner final : public regs::HostRegisterOwner {
 public:
  explicit RegisterOwner(GoldenModel& model) : model_(model) {}
  bool Busy() const override { return model_.busy_; }
  std::uint32_t WaitingLaunches() const override {
    return static_cast<std::uint32_t>(model_.command_queue_.size());
  }
  void SoftReset() override { model_.SoftReset(); }
  void Abort() override {
    if (model_.launch_.active) {
      // A launch RunUntil paused stops before its next instruction; the rest are dropped.
      const std::uint64_t pc = model_.launch_.pc + model_.launch_.next * isa::kInstructionBytes;
      model_.launch_ = LaunchState{};
      model_.busy_ = false;
      model_.RaiseError(ErrorCode::kAborted, pc, "aborted by the host");
      model_.command_queue_.clear();
      return;
    }
    if (model_.command_queue_.empty()) return;
    // The oldest queued launch is the one the hardware would be running: it stops before its
    // first instruction, and the rest are dropped.
    model_.RaiseError(ErrorCode::kAborted, model_.command_queue_.front().pc, "aborted by the host");
    model_.command_queue_.clear();
  }
  void Doorbell(regs::Launch launch) override {
    if (model_.command_queue_.size() >= model_.config_.command_queue_depth) {
      model_.RaiseError(ErrorCode::kCmdqOverflow, launch.pc,
                        fmt::format("doorbell for pc 0x{:x}: the command queue already holds {} "
                                    "launches",
                                    launch.pc, model_.command_queue_.size()));
    } else {
      model_.command_queue_.push_back(launch);
    }
  }

 private:
  GoldenModel& model_;
};

// The identity block is what arch/regs/identity.cpp says every device reports (the driver decodes
// it with the same file's DecodeIdentity); offsets outside it read as zero.
std::uint32_t GoldenModel::IdentityRegister(std::uint32_t offset) const {
  for (const auto& [at, value] : regs::IdentityRegisters(config_)) {
    if (at == offset) return value;
  }
  return 0;
}

std::uint32_t GoldenModel::ReadRegister(std::uint32_t offset) {
  const std::optional<std::uint32_t> value = registers_.Read(offset, RegisterOwner(*this));
  return value ? *value : IdentityRegister(offset);
}

void GoldenModel::WriteRegister(std::uint32_t offset, std::uint32_t value) {
  RegisterOwner owner(*this);
  registers_.Write(offset, value, owner);
}

// Resets the sequencer, the units and the queue (the registers have reset their error and
// interrupt state). Device memory, the unified buffer and the accumulators keep their
// contents; so do the host-written registers (CMD_PC, CMD_COUNT, IRQ_ENABLE) and the
// performance counters.
void GoldenModel::SoftReset() {
  command_queue_.clear();
  launch_ = LaunchState{};
  busy_ = false;
  last_error_message_.clear();
}

// The first error sticks until CLEAR_ERROR (or SOFT_RESET), with its message; later ones only
// raise the IRQ.
void GoldenModel::RaiseError(ErrorCode code, std::uint64_t pc, std::string message) {
  if (registers_.RaiseError(code, pc)) last_error_message_ = std::move(message);
}

void GoldenModel::RunUntilIdle() { RunUntil(std::chrono::steady_clock::time_point::max()); }

bool GoldenModel::RunUntil(std::chrono::steady_clock::time_point deadline) {
  busy_ = true;
  for (;;) {
    if (!launch_.active) {
      if (command_queue_.empty() || registers_.error() != ErrorCode::kNone) break;
      const QueuedLaunch launch = command_queue_.front();
      command_queue_.pop_front();
      BeginLaunch(launch.pc, launch.count);
    }
    if (!StepLaunch() && deadline != std::chrono::steady_clock::time_point::max() &&
        std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
  }
  busy_ = false;
  return true;
}

}  // namespace systole::model
