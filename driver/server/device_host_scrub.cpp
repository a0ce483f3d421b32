// The on-chip state one client leaves for the next. Device memory is zeroed when it is freed
// (device_host.cpp), but the unified buffer and the accumulators keep their contents from one
// launch to the next (docs/ISA.md), so a client's launch could read what another client's left
// there. Before a launch of a client other than the last one, the server runs a launch of its
// own that overwrites both with zeros: LOADs with stride 0 of one zero row, from a few bytes of
// device memory the server keeps for itself. It is a program like any other, so it works on
// every device the server can host. The weight FIFO and the stationary tile need nothing: the
// ISA empties them at the start of every launch.
#include <fmt/format.h>

#include <algorithm>

#include "driver/server/device_host.hpp"

namespace systole::server {

using isa::Field;
using isa::Opcode;
using regs::FieldOf;
using regs::OffsetOf;

namespace {

constexpr std::uint64_t kMaxRowsPerLoad = 65535;  // the LOAD rows field

void ClearRows(std::vector<isa::Instruction>& program, isa::MemSpace mem, std::uint64_t zeros,
               std::uint64_t rows, std::uint64_t elems) {
  for (std::uint64_t row = 0; row < rows; row += kMaxRowsPerLoad) {
    program.push_back(isa::MakeInstruction(
        Opcode::kLoad,
        {{Field::kMem, static_cast<std::uint64_t>(mem)}, {Field::kDram, zeros},
         {Field::kStride, 0}, {Field::kRow, row}, {Field::kCol, 0},
         {Field::kRows, std::min(kMaxRowsPerLoad, rows - row)}, {Field::kElems, elems}},
        0, 0));
  }
}

}  // namespace

void DeviceHost::ReserveScrubProgram() {
  const Config& c = config_;
  const std::uint64_t zero_row = (std::max(c.UbRowBytes(), c.AccRowBytes()) + 31) / 32 * 32;
  // The program's address is known only once its size is: build it once to size it.
  auto build = [&](std::uint64_t zeros) {
    std::vector<isa::Instruction> program;
    ClearRows(program, isa::MemSpace::kUb, zeros, c.UbRows(), std::max(c.rows, c.cols));
    ClearRows(program, isa::MemSpace::kAcc, zeros, c.AccRows(), c.cols);
    program.push_back(isa::MakeInstruction(Opcode::kHalt, {}, 0, 0));
    return program;
  };
  const std::uint64_t bytes = zero_row + build(0).size() * isa::kInstructionBytes;
  const std::uint64_t size = MemoryAllocator::RoundedSize(bytes);
  if (size >= c.memory_bytes) {
    throw std::runtime_error(fmt::format("device memory ({} bytes) has no room for the {} bytes "
                                         "the server keeps to clear on-chip buffers",
                                         c.memory_bytes, size));
  }
  const std::uint64_t address = (c.memory_bytes - size) / kAllocationAlignment * kAllocationAlignment;
  if (!allocator_.AllocateAt(address, bytes)) {
    throw std::logic_error("the scrub program's memory is taken");
  }
  std::vector<std::uint8_t> image(zero_row, 0);
  for (const isa::Instruction& insn : build(address)) {
    const isa::Word word = isa::EncodeOrThrow(insn);
    image.insert(image.end(), word.begin(), word.end());
  }
  device_->WriteMemory(address, image);
  scrub_pc_ = address + zero_row;
  scrub_count_ = static_cast<std::uint32_t>((image.size() - zero_row) / isa::kInstructionBytes);
}

void DeviceHost::ScrubIfAnotherClient(std::uint64_t session) {
  if (last_owner_ == session) return;
  Link& device = *device_;
  StartOnDevice({scrub_pc_, scrub_count_});
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
  const Outcome outcome = CollectOutcome();
  if (outcome.error != regs::ErrorCode::kNone) {
    // The next client's launch must not see this one's data: it does not run.
    throw std::runtime_error(fmt::format("clearing the on-chip buffers failed: {} at 0x{:x}",
                                         regs::ErrorName(outcome.error), outcome.fault_pc));
  }
  last_owner_ = session;
}

}  // namespace systole::server
