// The fair launch queue: vet a session's launch against its allocations, run it on the device,
// and fold the results back into the session.
#include <fmt/format.h>

#include "driver/server/device_host.hpp"
#include "systole/launch_footprint.hpp"

namespace systole::server {

using regs::FieldOf;
using regs::OffsetOf;

namespace {

constexpr std::uint64_t kWordsPerRead = 4096;

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

}  // namespace

void DeviceHost::RunNextLaunch() {
  while (!ready_.empty()) {
    const std::uint64_t id = ready_.front();
    ready_.pop_front();
    const auto it = sessions_.find(id);
    if (it == sessions_.end() || !it->second.Runnable()) continue;  // closed or stopped since
    Session& session = it->second;
    const QueuedLaunch launch = session.PopLaunch();
    try {
      RunVetted(session, launch);
    } catch (const std::exception& error) {
      fmt::print(stderr, "systole serve: launch at 0x{:x} failed on the device: {}\n", launch.pc,
                 error.what());
      session.FinishLaunch(regs::Mask(FieldOf("IRQ_STATUS", "ERROR")), 0,
                           regs::ErrorCode::kAborted, launch.pc, {});
    }
    ++launches_run_;
    if (session.Runnable()) ready_.push_back(id);  // its next launch waits for everyone's turn
    return;
  }
}

// The ISA has no indirect addressing and no branches, so the bytes a launch can touch are known
// before it runs (launch_footprint.hpp): it runs only if all of them are the session's, and if
// no STORE writes over its own instructions (which could turn a vetted word into another).
void DeviceHost::RunVetted(Session& session, const QueuedLaunch& launch) {
  if (launch.pc % isa::kInstructionBytes != 0 || launch.count == 0) {
    RunOnDevice(session, launch, {});  // the device faults before it fetches anything
    return;
  }
  const Fetched fetched = FetchWords(*device_, session.allocations, launch);
  const LaunchFootprint footprint = FootprintOf(fetched.words, config_);
  const std::uint64_t text_end = launch.pc + footprint.fetched * isa::kInstructionBytes;
  for (const TouchedRange& range : footprint.data) {
    const std::uint64_t pc = launch.pc + range.instruction * isa::kInstructionBytes;
    const bool over_text = range.written && range.address < text_end &&
                           range.address + range.bytes > launch.pc;
    if (!Covers(session.allocations, range.address, range.bytes) || over_text) {
      session.RefuseLaunch(pc);
      return;
    }
  }
  if (fetched.outside_at) {
    session.RefuseLaunch(*fetched.outside_at);
    return;
  }
  RunOnDevice(session, launch, footprint.data);
}

void DeviceHost::RunOnDevice(Session& session, const QueuedLaunch& launch,
                             const std::vector<TouchedRange>& ranges) {
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
  const auto deadline = std::chrono::steady_clock::now() + options_.launch_timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !device.WaitForInterrupt(left)) {
      device.WriteRegister(OffsetOf("CTRL"), regs::Place(1, FieldOf("CTRL", "ABORT")));
      break;
    }
    const std::uint32_t status = device.ReadRegister(OffsetOf("STATUS"));
    if (regs::Extract(status, FieldOf("STATUS", "BUSY")) == 0 &&
        regs::Extract(status, FieldOf("STATUS", "CMDQ_LEVEL")) == 0) {
      break;
    }
  }
  const std::uint32_t irq = device.ReadRegister(OffsetOf("IRQ_STATUS"));
  device.WriteRegister(OffsetOf("IRQ_STATUS"), irq);
  const auto error = static_cast<regs::ErrorCode>(device.ReadRegister(OffsetOf("ERROR_CODE")));
  const std::uint64_t fault_pc = device.ReadRegister(OffsetOf("FAULT_PC_LO")) |
                                 (std::uint64_t{device.ReadRegister(OffsetOf("FAULT_PC_HI"))} << 32);
  const std::uint32_t irq_code = device.ReadRegister(OffsetOf("IRQ_CODE"));
  std::array<std::uint64_t, kNumCounters> counts{};
  std::size_t i = 0;
  for (const regs::Counter& counter : regs::Counters()) {
    const std::uint64_t low = device.ReadRegister(counter.lo);  // latches the high half
    counts[i++] = low | (std::uint64_t{device.ReadRegister(counter.lo + 4)} << 32);
  }
  if (error != regs::ErrorCode::kNone) {
    device.WriteRegister(OffsetOf("CTRL"), regs::Place(1, FieldOf("CTRL", "CLEAR_ERROR")));
  }
  session.FinishLaunch(irq, irq_code, error, fault_pc, counts);
  for (const TouchedRange& range : ranges) {
    if (range.written) AddRange(session.dirty, range.address, range.address + range.bytes);
  }
}

}  // namespace systole::server
