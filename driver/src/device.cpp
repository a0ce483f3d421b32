// Device, Buffer, Run and Counters (program.cpp has Program and Device::Load).
#include <fmt/format.h>

#include "arch/regs/identity.hpp"
#include "driver/src/device_state.hpp"
#include "sim/trace/timeline.hpp"

namespace systole {

using detail::Guarded;
using regs::FieldOf;
using regs::OffsetOf;

DeviceError::DeviceError(std::string device, std::string operation, std::string cause)
    : std::runtime_error(fmt::format("device {}: {}: {}", device, operation, cause)),
      device_(std::move(device)),
      operation_(std::move(operation)),
      cause_(std::move(cause)) {}

RunError::RunError(std::string device, regs::ErrorCode code, std::uint64_t fault_pc)
    : DeviceError(std::move(device), "run",
                  fmt::format("stopped with {} ({}) at pc 0x{:x}", regs::ErrorName(code),
                              regs::ErrorDescription(code), fault_pc)),
      code_(code),
      fault_pc_(fault_pc) {}

std::uint64_t Counters::operator[](std::string_view name) const {
  for (const auto& [counter, value] : values) {
    if (counter == name) return value;
  }
  throw std::out_of_range(fmt::format("no performance counter called '{}'", name));
}

// ---- Buffer ------------------------------------------------------------------------------------

detail::BufferState::~BufferState() {
  try {
    device->link->Free(address);
  } catch (...) {
    // A destructor cannot report; a link that is gone has freed everything anyway.
  }
}

std::uint64_t Buffer::address() const { return state_ ? state_->address : 0; }
std::uint64_t Buffer::size() const { return state_ ? state_->size : 0; }

namespace {
void CheckInside(const detail::BufferState* state, std::string_view operation,
                 std::uint64_t offset, std::uint64_t bytes) {
  if (state == nullptr) throw DeviceError("(none)", std::string(operation), "empty Buffer handle");
  if (offset > state->size || bytes > state->size - offset) {
    throw DeviceError(state->device->uri, std::string(operation),
                      fmt::format("{} bytes at offset {} overrun the buffer of {} bytes at 0x{:x}",
                                  bytes, offset, state->size, state->address));
  }
}
}  // namespace

void Buffer::Write(std::span<const std::uint8_t> bytes, std::uint64_t offset) {
  CheckInside(state_.get(), "write buffer", offset, bytes.size());
  Guarded(*state_->device, "write buffer",
          [&] { state_->device->link->WriteMemory(state_->address + offset, bytes); });
}

void Buffer::Read(std::span<std::uint8_t> out, std::uint64_t offset) const {
  CheckInside(state_.get(), "read buffer", offset, out.size());
  Guarded(*state_->device, "read buffer",
          [&] { state_->device->link->ReadMemory(state_->address + offset, out); });
}

std::vector<std::uint8_t> Buffer::Read() const {
  std::vector<std::uint8_t> bytes(size());
  Read(bytes);
  return bytes;
}

// ---- Run ---------------------------------------------------------------------------------------

bool Run::Wait(std::chrono::milliseconds timeout) {
  if (!state_) throw DeviceError("(none)", "wait", "empty Run handle");
  detail::RunState& run = *state_;
  if (run.finished) {
    if (run.error) throw *run.error;
    return true;
  }
  detail::DeviceState& device = *run.device;
  Link& link = *device.link;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  return Guarded(device, "wait", [&] {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (!link.WaitForInterrupt(std::max(left, std::chrono::milliseconds(0)))) return false;
      const std::uint32_t status = link.ReadRegister(OffsetOf("STATUS"));
      const bool error = regs::Extract(status, FieldOf("STATUS", "ERROR")) != 0;
      const bool idle = regs::Extract(status, FieldOf("STATUS", "BUSY")) == 0 &&
                        regs::Extract(status, FieldOf("STATUS", "CMDQ_LEVEL")) == 0;
      if (error || idle) {
        link.WriteRegister(OffsetOf("IRQ_STATUS"), link.ReadRegister(OffsetOf("IRQ_STATUS")));
        run.finished = true;
        device.launch_unfinished = false;
        if (!error) return true;
        const auto code = static_cast<regs::ErrorCode>(link.ReadRegister(OffsetOf("ERROR_CODE")));
        const std::uint64_t fault_pc =
            link.ReadRegister(OffsetOf("FAULT_PC_LO")) |
            (std::uint64_t{link.ReadRegister(OffsetOf("FAULT_PC_HI"))} << 32);
        link.WriteRegister(OffsetOf("CTRL"), regs::Place(1, FieldOf("CTRL", "CLEAR_ERROR")));
        run.error.emplace(device.uri, code, fault_pc);
        throw *run.error;
      }
      if (std::chrono::steady_clock::now() >= deadline) return false;
    }
  });
}

// ---- Device ------------------------------------------------------------------------------------

Device Device::Open(std::string_view uri, const Config& config) {
  std::unique_ptr<Link> link;
  try {
    link = OpenLink(uri, config);
  } catch (const LinkError& error) {
    throw DeviceError(RedactUri(uri), "open", error.cause());
  }
  return Device(std::move(link));
}

Device::Device(std::unique_ptr<Link> link) : state_(std::make_shared<detail::DeviceState>()) {
  state_->uri = std::string(link->Uri());
  state_->link = std::move(link);
  state_->config = Guarded(*state_, "read identity", [&] {
    return regs::DecodeIdentity(
        [this](std::uint32_t offset) { return state_->link->ReadRegister(offset); });
  });
}

const std::string& Device::uri() const { return state_->uri; }
const Config& Device::config() const { return state_->config; }
Link& Device::link() { return *state_->link; }

Buffer Device::Allocate(std::uint64_t bytes, std::uint64_t alignment) {
  return Guarded(*state_, "allocate", [&] {
    const std::uint64_t address = state_->link->Allocate(bytes, alignment, std::nullopt);
    return Buffer(std::shared_ptr<detail::BufferState>(
        new detail::BufferState{state_, address, bytes}));
  });
}

Buffer Device::AllocateAt(std::uint64_t address, std::uint64_t bytes) {
  return Guarded(*state_, "allocate", [&] {
    state_->link->Allocate(bytes, kAllocationAlignment, address);
    return Buffer(std::shared_ptr<detail::BufferState>(
        new detail::BufferState{state_, address, bytes}));
  });
}

Run Device::Launch(std::uint64_t pc, std::uint32_t count) { return Launch(pc, count, {}); }

Run Device::Launch(std::uint64_t pc, std::uint32_t count, std::span<const isa::Word> instructions) {
  if (auto previous = state_->run_in_flight.lock(); previous && !previous->finished) {
    throw DeviceError(state_->uri, "launch", "a run is still in flight: wait for it first");
  }
  if (state_->launch_unfinished) {
    // A new launch would queue behind the old one, which would then run on whatever the caller
    // has written since (a retried step's operands, a restored state): refuse while it runs.
    Guarded(*state_, "launch", [&] {
      Link& link = *state_->link;
      const std::uint32_t status = link.ReadRegister(OffsetOf("STATUS"));
      if (regs::Extract(status, FieldOf("STATUS", "BUSY")) != 0 ||
          regs::Extract(status, FieldOf("STATUS", "CMDQ_LEVEL")) != 0) {
        throw DeviceError(state_->uri, "launch",
                          "an earlier launch was not waited for to its end (its wait failed or gave up) and the device "
                          "is still running it; open the device again");
      }
      // It ended meanwhile: its completion (or its fault, which nobody will read) is cleared.
      if (regs::Extract(status, FieldOf("STATUS", "ERROR")) != 0) {
        link.WriteRegister(OffsetOf("CTRL"), regs::Place(1, FieldOf("CTRL", "CLEAR_ERROR")));
      }
      link.WriteRegister(OffsetOf("IRQ_STATUS"), link.ReadRegister(OffsetOf("IRQ_STATUS")));
    });
    state_->launch_unfinished = false;
  }
  if (state_->timeline != nullptr) state_->timeline->BeginLaunch(instructions);
  state_->launch_unfinished = true;  // from here on, even if a write fails: the doorbell may have rung
  Guarded(*state_, "launch", [&] {
    Link& link = *state_->link;
    link.WriteRegister(OffsetOf("IRQ_ENABLE"), regs::Mask(FieldOf("IRQ_ENABLE", "DONE")) |
                                                   regs::Mask(FieldOf("IRQ_ENABLE", "ERROR")));
    link.WriteRegister(OffsetOf("CMD_PC_LO"), static_cast<std::uint32_t>(pc));
    link.WriteRegister(OffsetOf("CMD_PC_HI"), static_cast<std::uint32_t>(pc >> 32));
    link.WriteRegister(OffsetOf("CMD_COUNT"), count);
    link.WriteRegister(OffsetOf("DOORBELL"), 1);
  });
  auto run = std::make_shared<detail::RunState>();
  run->device = state_;
  state_->run_in_flight = run;
  return Run(run);
}

Counters Device::ReadCounters() {
  return Guarded(*state_, "read counters", [&] {
    Counters counters;
    for (const regs::Counter& counter : regs::Counters()) {
      const std::uint64_t low = state_->link->ReadRegister(counter.lo);  // latches the high half
      const std::uint64_t high = state_->link->ReadRegister(counter.lo + 4);
      counters.values.emplace_back(std::string(counter.name), low | (high << 32));
    }
    return counters;
  });
}

void Device::Record(trace::Timeline* timeline) {
  Guarded(*state_, "record a timeline", [&] { state_->link->Record(timeline); });
  state_->timeline = timeline;
}

trace::Timeline* Device::recording() const { return state_->timeline; }

void Device::RecordWaveform(const std::filesystem::path& path) {
  Guarded(*state_, "record a waveform", [&] { state_->link->RecordWaveform(path); });
}

void Device::ClearCounters() {
  Guarded(*state_, "clear counters", [&] {
    state_->link->WriteRegister(OffsetOf("CTRL"), regs::Place(1, FieldOf("CTRL", "CLEAR_COUNTERS")));
  });
}

}  // namespace systole
