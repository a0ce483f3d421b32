// regs::HostRegisters: the register rules the golden model and the device server share.
#include "arch/regs/host_registers.hpp"

#include <gmock/gmock.h>

#include <deque>
#include <stdexcept>

namespace systole::regs {
namespace {

// A device that records what the registers asked of it, in order.
class RecordingOwner final : public HostRegisterOwner {
 public:
  explicit RecordingOwner(HostRegisters& registers) : registers_(registers) {}
  bool Busy() const override { return busy; }
  std::uint32_t WaitingLaunches() const override { return static_cast<std::uint32_t>(queue.size()); }
  void SoftReset() override {
    calls.push_back("soft_reset");
    queue.clear();
  }
  void Abort() override {
    calls.push_back("abort");
    if (!queue.empty()) registers_.RaiseError(ErrorCode::kAborted, queue.front().pc);
    queue.clear();
  }
  void Doorbell(Launch launch) override {
    calls.push_back("doorbell");
    queue.push_back(launch);
  }

  bool busy = false;
  std::deque<Launch> queue;
  std::vector<std::string> calls;

 private:
  HostRegisters& registers_;
};

std::uint32_t Read(HostRegisters& registers, const RecordingOwner& owner, std::uint32_t offset) {
  return registers.Read(offset, owner).value();
}

TEST(HostRegisters, DoorbellQueuesCmdPcAndCount) {
  HostRegisters registers;
  RecordingOwner owner(registers);
  registers.Write(OffsetOf("CMD_PC_LO"), 0x200, owner);
  registers.Write(OffsetOf("CMD_PC_HI"), 1, owner);
  registers.Write(OffsetOf("CMD_COUNT"), 7, owner);
  registers.Write(OffsetOf("DOORBELL"), 1, owner);
  ASSERT_EQ(owner.queue.size(), 1u);
  EXPECT_EQ(owner.queue.front().pc, 0x1'0000'0200ull);
  EXPECT_EQ(owner.queue.front().count, 7u);
  EXPECT_EQ(Read(registers, owner, OffsetOf("CMD_PC_HI")), 1u);
  EXPECT_EQ(Read(registers, owner, OffsetOf("DOORBELL")), 0u) << "write-only registers read as 0";
  owner.busy = true;
  EXPECT_EQ(Read(registers, owner, OffsetOf("STATUS")),
            Place(1, FieldOf("STATUS", "BUSY")) | Place(1, FieldOf("STATUS", "CMDQ_LEVEL")));
}

TEST(HostRegisters, IdentityRegistersAreTheOwners) {
  HostRegisters registers;
  RecordingOwner owner(registers);
  EXPECT_FALSE(registers.Read(OffsetOf("ID_MAGIC"), owner).has_value());
  EXPECT_FALSE(registers.Read(OffsetOf("CFG_ARRAY"), owner).has_value());
  EXPECT_THROW(registers.Read(0xFFC, owner), std::out_of_range);
  EXPECT_THROW(registers.Write(0x2, 1, owner), std::out_of_range);
}

TEST(HostRegisters, FirstErrorSticksAndEveryOneRaisesTheInterrupt) {
  HostRegisters registers;
  RecordingOwner owner(registers);
  EXPECT_TRUE(registers.RaiseError(ErrorCode::kShape, 0x40));
  EXPECT_FALSE(registers.RaiseError(ErrorCode::kUbRange, 0x80));
  EXPECT_EQ(Read(registers, owner, OffsetOf("ERROR_CODE")), static_cast<std::uint32_t>(ErrorCode::kShape));
  EXPECT_EQ(Read(registers, owner, OffsetOf("FAULT_PC_LO")), 0x40u);
  EXPECT_EQ(Read(registers, owner, OffsetOf("IRQ_STATUS")), Mask(FieldOf("IRQ_STATUS", "ERROR")));
  EXPECT_FALSE(registers.InterruptLine());
  registers.Write(OffsetOf("IRQ_ENABLE"), 0xFFFF'FFFF, owner);
  EXPECT_TRUE(registers.InterruptLine());
  // IRQ_STATUS is write-1-to-clear; CLEAR_ERROR clears the code and the pc, not the interrupt.
  registers.Write(OffsetOf("CTRL"), Mask(FieldOf("CTRL", "CLEAR_ERROR")), owner);
  EXPECT_EQ(registers.error(), ErrorCode::kNone);
  EXPECT_EQ(Read(registers, owner, OffsetOf("FAULT_PC_LO")), 0u);
  EXPECT_TRUE(registers.InterruptLine());
  registers.Write(OffsetOf("IRQ_STATUS"), Mask(FieldOf("IRQ_STATUS", "ERROR")), owner);
  EXPECT_FALSE(registers.InterruptLine());
}

TEST(HostRegisters, CtrlActionsRunInBitOrder) {
  HostRegisters registers;
  RecordingOwner owner(registers);
  owner.queue.push_back({0x100, 3});
  // ABORT raises an error that CLEAR_ERROR, a later bit of the same write, clears again.
  registers.Write(OffsetOf("CTRL"),
                  Mask(FieldOf("CTRL", "ABORT")) | Mask(FieldOf("CTRL", "CLEAR_ERROR")), owner);
  EXPECT_EQ(owner.calls, std::vector<std::string>{"abort"});
  EXPECT_EQ(registers.error(), ErrorCode::kNone);
  EXPECT_EQ(Read(registers, owner, OffsetOf("IRQ_STATUS")), Mask(FieldOf("IRQ_STATUS", "ERROR")));
  // SOFT_RESET clears the registers' own state before the owner's, and keeps the counters.
  registers.LaunchDone();
  registers.UserInterrupt(9);
  registers.counters()[0] = 5;
  registers.Write(OffsetOf("CTRL"), Mask(FieldOf("CTRL", "SOFT_RESET")), owner);
  EXPECT_EQ(Read(registers, owner, OffsetOf("LAUNCHES_DONE")), 0u);
  EXPECT_EQ(Read(registers, owner, OffsetOf("IRQ_STATUS")), 0u);
  EXPECT_EQ(Read(registers, owner, OffsetOf("IRQ_CODE")), 0u);
  EXPECT_EQ(Read(registers, owner, OffsetOf("PERF_CYCLES_LO")), 5u);
  registers.Write(OffsetOf("CTRL"), Mask(FieldOf("CTRL", "CLEAR_COUNTERS")), owner);
  EXPECT_EQ(Read(registers, owner, OffsetOf("PERF_CYCLES_LO")), 0u);
}

TEST(HostRegisters, ReadingLoLatchesHi) {
  HostRegisters registers;
  RecordingOwner owner(registers);
  registers.counters()[3] = 0x0000'0001'FFFF'FFFFull;
  const std::uint32_t lo = Read(registers, owner, OffsetOf("PERF_MACS_LO"));
  registers.counters()[3] += 1;  // carries into HI between the two reads
  EXPECT_EQ(lo, 0xFFFF'FFFFu);
  EXPECT_EQ(Read(registers, owner, OffsetOf("PERF_MACS_HI")), 1u) << "HI as it was when LO was read";
  EXPECT_EQ(Read(registers, owner, OffsetOf("PERF_MACS_LO")), 0u);
  EXPECT_EQ(Read(registers, owner, OffsetOf("PERF_MACS_HI")), 2u);
}

}  // namespace
}  // namespace systole::regs
