// The fair launch queue: vet a session's launch against its allocations (vetting.hpp), run it
// on the device, both a slice at a time, and fold the results back into the session.
#include <fmt/format.h>

#include "driver/server/device_host.hpp"

namespace systole::server {

using regs::FieldOf;
using regs::OffsetOf;

namespace {

// Device time a launch gets before the worker answers requests again: the longest a request
// waits for a launch (plus one instruction on `ref`, one 4096-cycle step on `rtl`).
constexpr std::chrono::milliseconds kLaunchSlice{5};
// Instructions vetted per slice: about 5 ms of reading and decoding in a release build.
constexpr std::uint64_t kVettedPerSlice = 8192;

}  // namespace

void DeviceHost::StartNextLaunch() {
  while (!ready_.empty()) {
    const std::uint64_t id = ready_.front();
    ready_.pop_front();
    const auto it = sessions_.find(id);
    if (it == sessions_.end() || !it->second.Runnable()) continue;  // closed or stopped since
    const QueuedLaunch launch = it->second.PopLaunch();
    ++launches_run_;
    active_ = ActiveLaunch{id, launch, std::nullopt, false, {}, std::nullopt, {}};
    // A misaligned pc or a count of 0: the device faults before it fetches anything.
    if (launch.pc % isa::kInstructionBytes == 0 && launch.count != 0) active_->vetting.emplace(launch);
    return;
  }
}

void DeviceHost::StartVetted() {
  ActiveLaunch& active = *active_;
  Session& session = sessions_.at(active.session);
  if (active.vetting) {
    Vetting& vetting = *active.vetting;
    if (vetting.refusal() && vetting.runnable() == 0) {
      session.RefuseLaunch(vetting.refusal()->first, vetting.refusal()->second);
      if (session.Runnable()) ready_.push_back(active.session);
      active_.reset();
      return;
    }
    active.launch.count = vetting.runnable();
    active.ranges = std::move(vetting.ranges());
    if (vetting.refusal()) active.refusal = Refusal{vetting.refusal()->first, vetting.refusal()->second};
    active.vetting.reset();
  }
  ScrubIfAnotherClient(active.session);
  active.deadline = std::chrono::steady_clock::now() + options_.launch_timeout;
  active.on_device = true;
  StartOnDevice(active.launch);
}

void DeviceHost::StepLaunch() {
  Link& device = *device_;
  const auto it = sessions_.find(active_->session);
  if (it == sessions_.end() || it->second.stop_requested()) return AbortActiveLaunch();
  if (!active_->on_device) {
    try {
      if (!active_->vetting || active_->vetting->Step(device, it->second.allocations, config_,
                                                      kVettedPerSlice)) {
        StartVetted();
      }
    } catch (const std::exception& error) {
      fmt::print(stderr, "systole serve: launch at 0x{:x} failed on the device: {}\n",
                 active_->launch.pc, error.what());
      AbortActiveLaunch();
    }
    return;
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      active_->deadline - std::chrono::steady_clock::now());
  try {
    if (left.count() <= 0) return AbortActiveLaunch();  // past its budget
    if (!device.WaitForInterrupt(std::min(left, kLaunchSlice))) return;  // still running
    const std::uint32_t status = device.ReadRegister(OffsetOf("STATUS"));
    if (regs::Extract(status, FieldOf("STATUS", "BUSY")) == 0 &&
        regs::Extract(status, FieldOf("STATUS", "CMDQ_LEVEL")) == 0) {
      FinishActiveLaunch();
    }
  } catch (const std::exception& error) {
    fmt::print(stderr, "systole serve: launch at 0x{:x} failed on the device: {}\n",
               active_->launch.pc, error.what());
    AbortActiveLaunch();
  }
}

void DeviceHost::AbortActiveLaunch() {
  if (!active_->on_device) {  // still being vetted (or its start failed): nothing to stop
    const ActiveLaunch active = std::move(*active_);
    active_.reset();
    if (auto it = sessions_.find(active.session); it != sessions_.end()) {
      Session& session = it->second;
      session.FinishLaunch(regs::Mask(FieldOf("IRQ_STATUS", "ERROR")), 0,
                           regs::ErrorCode::kAborted, active.launch.pc, {});
      for (const auto& [start, end] : std::exchange(session.frees_after_launch, {})) {
        ReleaseRange(session, start, end);
      }
      if (session.Runnable()) ready_.push_back(active.session);
    }
    return;
  }
  try {
    device_->WriteRegister(OffsetOf("CTRL"), regs::Place(1, FieldOf("CTRL", "ABORT")));
  } catch (const std::exception& error) {
    fmt::print(stderr, "systole serve: aborting a launch: {}\n", error.what());
  }
  FinishActiveLaunch();
}

void DeviceHost::FinishActiveLaunch() {
  const ActiveLaunch active = std::move(*active_);
  active_.reset();
  Outcome outcome;
  try {
    outcome = CollectOutcome();
  } catch (const std::exception& error) {
    fmt::print(stderr, "systole serve: reading a launch's outcome: {}\n", error.what());
    outcome.irq = regs::Mask(FieldOf("IRQ_STATUS", "ERROR"));
    outcome.error = regs::ErrorCode::kAborted;
    outcome.fault_pc = active.launch.pc;
  }
  const auto it = sessions_.find(active.session);
  if (it == sessions_.end()) return;
  Session& session = it->second;
  // The device ran the instructions before the refused one: unless it faulted earlier, it
  // stopped there with PROGRAM_OVERRUN, which reads as the refusal.
  const std::uint64_t refused_pc = active.refusal ? active.refusal->pc : 0;
  if (active.refusal && outcome.error == regs::ErrorCode::kProgramOverrun &&
      outcome.fault_pc == refused_pc) {
    outcome.error = active.refusal->error;
  }
  session.FinishLaunch(outcome.irq, outcome.irq_code, outcome.error, outcome.fault_pc,
                       outcome.counts);
  for (const TouchedRange& range : active.ranges) {
    if (range.written) AddRange(session.dirty, range.address, range.address + range.bytes);
  }
  for (const auto& [start, end] : std::exchange(session.frees_after_launch, {})) {
    ReleaseRange(session, start, end);
  }
  if (session.Runnable()) ready_.push_back(active.session);  // its next launch waits its turn
}

void DeviceHost::StartOnDevice(const QueuedLaunch& launch) {
  Link& device = *device_;
  const std::uint32_t irq_done_error = regs::Mask(FieldOf("IRQ_STATUS", "DONE")) |
                                       regs::Mask(FieldOf("IRQ_STATUS", "ERROR"));
  device.WriteRegister(OffsetOf("CTRL"), regs::Place(1, FieldOf("CTRL", "CLEAR_COUNTERS")) |
                                             regs::Place(1, FieldOf("CTRL", "CLEAR_ERROR")));
  device.WriteRegister(OffsetOf("IRQ_STATUS"), ~0u);
  device.WriteRegister(OffsetOf("IRQ_ENABLE"), irq_done_error);
  device.WriteRegister(OffsetOf("CMD_PC_LO"), static_cast<std::uint32_t>(launch.pc));
  device.WriteRegister(OffsetOf("CMD_PC_HI"), static_cast<std::uint32_t>(launch.pc >> 32));
  device.WriteRegister(OffsetOf("CMD_COUNT"), launch.count);
  device.WriteRegister(OffsetOf("DOORBELL"), 1);
}

DeviceHost::Outcome DeviceHost::CollectOutcome() {
  Link& device = *device_;
  Outcome outcome;
  outcome.irq = device.ReadRegister(OffsetOf("IRQ_STATUS"));
  device.WriteRegister(OffsetOf("IRQ_STATUS"), outcome.irq);
  outcome.error = static_cast<regs::ErrorCode>(device.ReadRegister(OffsetOf("ERROR_CODE")));
  outcome.fault_pc = device.ReadRegister(OffsetOf("FAULT_PC_LO")) |
                     (std::uint64_t{device.ReadRegister(OffsetOf("FAULT_PC_HI"))} << 32);
  outcome.irq_code = device.ReadRegister(OffsetOf("IRQ_CODE"));
  std::size_t i = 0;
  for (const regs::Counter& counter : regs::Counters()) {
    const std::uint64_t low = device.ReadRegister(counter.lo);  // latches the high half
    outcome.counts[i++] = low | (std::uint64_t{device.ReadRegister(counter.lo + 4)} << 32);
  }
  if (outcome.error != regs::ErrorCode::kNone) {
    device.WriteRegister(OffsetOf("CTRL"), regs::Place(1, FieldOf("CTRL", "CLEAR_ERROR")));
  }
  return outcome;
}

}  // namespace systole::server
