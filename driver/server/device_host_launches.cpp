// The fair launch queue: vet a session's launch against its allocations, run it on the device
// a slice at a time, and fold the results back into the session.
#include <fmt/format.h>

#include "driver/server/device_host.hpp"
#include "systole/launch_footprint.hpp"

namespace systole::server {

using regs::FieldOf;
using regs::OffsetOf;

namespace {

constexpr std::uint64_t kWordsPerRead = 4096;
// Device time a launch gets before the worker answers requests again: the longest a request
// waits for a launch (plus one instruction on `ref`, one 4096-cycle step on `rtl`).
constexpr std::chrono::milliseconds kLaunchSlice{5};

// The words a launch fetches, read from device memory, and the pc of the first word it would
// fetch outside the session's memory (if it gets that far).
struct Fetched {
  std::vector<isa::Word> words;
  std::optional<std::uint64_t> outside_at;
};

Fetched FetchWords(Link& device, const RangeMap& allocations, const QueuedLaunch& launch) {
  Fetched fetched;
  std::vector<std::uint8_t> bytes;
  for (std::uint64_t index = 0; index < launch.count;) {
    const std::uint64_t address = launch.pc + index * isa::kInstructionBytes;
    if (!Covers(allocations, address, isa::kInstructionBytes)) {
      fetched.outside_at = address;
      return fetched;
    }
    std::uint64_t n = 1;
    while (n < kWordsPerRead && index + n < launch.count &&
           Covers(allocations, address + n * isa::kInstructionBytes, isa::kInstructionBytes)) {
      ++n;
    }
    bytes.resize(n * isa::kInstructionBytes);
    device.ReadMemory(address, bytes);
    for (std::uint64_t i = 0; i < n; ++i) {
      isa::Word word;
      std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(i * isa::kInstructionBytes),
                  isa::kInstructionBytes, word.begin());
      fetched.words.push_back(word);
      isa::Instruction insn;
      // The sequencer stops at the first HALT, and faults (with no effect) at a bad word.
      if (isa::Decode(word, insn) || insn.opcode == isa::Opcode::kHalt) return fetched;
    }
    index += n;
  }
  return fetched;
}


// The ISA has no indirect addressing and no branches, so the bytes a launch can touch are known
// before it runs (launch_footprint.hpp): it runs only as far as everything it touches is the
// session's, and no STORE writes over its own instructions (which could turn a vetted word into
// another). Where it may not go on, the device runs the instructions before that one (a device
// completes every instruction before a fault) and the outcome is the fault the device would
// report there: its own, if it faults earlier; else the instruction's operand fault, if any
// (docs/ISA.md checks operands before ranges); else DRAM_RANGE.
struct Vetted {
  std::uint32_t runnable = 0;  // instructions the device may run
  std::optional<std::pair<regs::ErrorCode, std::uint64_t>> refusal;  // error, pc
  std::vector<TouchedRange> ranges;
};

Vetted Vet(Link& device, const RangeMap& allocations, const QueuedLaunch& launch,
           const Config& config) {
  Vetted vetted;
  vetted.runnable = launch.count;
  const Fetched fetched = FetchWords(device, allocations, launch);
  const LaunchFootprint footprint = FootprintOf(fetched.words, config);
  const std::uint64_t text_end = launch.pc + footprint.fetched * isa::kInstructionBytes;
  for (const TouchedRange& range : footprint.data) {
    const bool over_text = range.written && range.address < text_end &&
                           range.address + range.bytes > launch.pc;
    if (!Covers(allocations, range.address, range.bytes) || over_text) {
      isa::Instruction insn;
      (void)isa::Decode(fetched.words[range.instruction], insn);  // decoded: it has a range
      vetted.runnable = static_cast<std::uint32_t>(range.instruction);
      vetted.refusal.emplace(OperandFault(insn, config).value_or(regs::ErrorCode::kDramRange),
                             launch.pc + range.instruction * isa::kInstructionBytes);
      return vetted;
    }
    vetted.ranges.push_back(range);
  }
  if (fetched.outside_at) {
    vetted.runnable = static_cast<std::uint32_t>((*fetched.outside_at - launch.pc) /
                                                 isa::kInstructionBytes);
    vetted.refusal.emplace(regs::ErrorCode::kDramRange, *fetched.outside_at);
  }
  return vetted;
}

}  // namespace

void DeviceHost::StartNextLaunch() {
  while (!ready_.empty()) {
    const std::uint64_t id = ready_.front();
    ready_.pop_front();
    const auto it = sessions_.find(id);
    if (it == sessions_.end() || !it->second.Runnable()) continue;  // closed or stopped since
    Session& session = it->second;
    const QueuedLaunch launch = session.PopLaunch();
    ++launches_run_;
    ActiveLaunch active{id, launch, {}, std::nullopt, {}};
    try {
      if (launch.pc % isa::kInstructionBytes == 0 && launch.count != 0) {
        // (otherwise the device faults before it fetches anything)
        Vetted vetted = Vet(*device_, session.allocations, launch, config_);
        if (vetted.refusal && vetted.runnable == 0) {
          session.RefuseLaunch(vetted.refusal->first, vetted.refusal->second);
          if (session.Runnable()) ready_.push_back(id);
          return;
        }
        active.launch.count = vetted.runnable;
        active.ranges = std::move(vetted.ranges);
        if (vetted.refusal) active.refusal = Refusal{vetted.refusal->first, vetted.refusal->second};
      }
      ScrubIfAnotherClient(id);
      active.deadline = std::chrono::steady_clock::now() + options_.launch_timeout;
      StartOnDevice(active.launch);
    } catch (const std::exception& error) {
      fmt::print(stderr, "systole serve: launch at 0x{:x} failed on the device: {}\n", launch.pc,
                 error.what());
      session.FinishLaunch(regs::Mask(FieldOf("IRQ_STATUS", "ERROR")), 0,
                           regs::ErrorCode::kAborted, launch.pc, {});
      if (session.Runnable()) ready_.push_back(id);
      return;
    }
    active_ = std::move(active);
    return;
  }
}

void DeviceHost::StepLaunch() {
  Link& device = *device_;
  const auto it = sessions_.find(active_->session);
  if (it != sessions_.end() && it->second.stop_requested()) return AbortActiveLaunch();
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
