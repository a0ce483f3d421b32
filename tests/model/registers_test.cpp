// The register file: identity for every shipped configuration, access rules, the command
// queue, interrupts (W1C), CTRL actions and the 64-bit counters.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

#include "tests/model/model_test_util.hpp"

namespace systole::model {
namespace {

using namespace testing;  // NOLINT: test helpers

TEST(Registers, IdentityOfEveryShippedConfiguration) {
  const std::vector<std::string> names = ListConfigs();
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const Config config = LoadConfig(name);
    GoldenModel model(config);
    const std::uint32_t element_bytes = config.dtype == DType::kInt8 ? 1 : 2;
    const std::uint32_t ub_width = std::max(config.rows, config.cols);
    unsigned interleave_log2 = 0;
    while ((1u << interleave_log2) < config.interleave_bytes) ++interleave_log2;

    EXPECT_EQ(Register(model, "ID_MAGIC"), 0x53595354u);
    EXPECT_EQ(Register(model, "ID_VERSION"), 0x0102u);  // ISA 1.2
    EXPECT_EQ(Register(model, "CFG_ARRAY"), config.rows | config.cols << 16);
    EXPECT_EQ(Register(model, "CFG_DTYPE"), config.dtype == DType::kInt8 ? 0u : 1u);
    EXPECT_EQ(Register(model, "CFG_UB_ROWS"),
              config.unified_buffer_bytes / (ub_width * element_bytes));
    EXPECT_EQ(Register(model, "CFG_ACC_ROWS"), config.accumulator_bytes / (config.cols * 4));
    EXPECT_EQ(Register(model, "CFG_QUEUES"), config.weight_fifo_tiles |
                                                 config.command_queue_depth << 8 |
                                                 config.token_capacity << 16 |
                                                 config.load_credits << 24);
    EXPECT_EQ(Register(model, "CFG_MEM_SIZE_LO"), config.memory_bytes & 0xFFFFFFFF);
    EXPECT_EQ(Register(model, "CFG_MEM_SIZE_HI"), config.memory_bytes >> 32);
    EXPECT_EQ(Register(model, "CFG_MEM"), config.memory_channels | interleave_log2 << 8);
    EXPECT_EQ(Register(model, "CFG_CLOCK_MHZ"), config.clock_mhz);
    std::string name_from_registers;
    for (const char* reg : {"CFG_NAME0", "CFG_NAME1", "CFG_NAME2", "CFG_NAME3"}) {
      const std::uint32_t word = Register(model, reg);
      for (std::uint32_t i = 0; i < 4; ++i) {
        const char c = static_cast<char>(word >> (8 * i) & 0xFF);
        if (c != '\0') name_from_registers += c;
      }
    }
    EXPECT_EQ(name_from_registers, config.name);
  }
}

TEST(Registers, NamePaddingIsLittleEndianAndNul) {
  GoldenModel model(LoadConfig("tiny"));
  EXPECT_EQ(Register(model, "CFG_NAME0"), 0x796E6974u);  // "tiny"
  EXPECT_EQ(Register(model, "CFG_NAME1"), 0u);
  GoldenModel small(LoadConfig("small-int8"));
  EXPECT_EQ(Register(small, "CFG_NAME1"), 0x6E692D6Cu);  // "l-in"
  EXPECT_EQ(Register(small, "CFG_NAME2"), 0x00003874u);  // "t8\0\0"
}

TEST(Registers, UnknownOffsetsThrowNamingTheOffset) {
  GoldenModel model(LoadConfig("tiny"));
  for (std::uint32_t offset : {0x02Cu, 0x002u, 0x041u, 0x200u, 0xFFFFFFFCu}) {
    try {
      model.ReadRegister(offset);
      ADD_FAILURE() << "read of 0x" << std::hex << offset << " did not throw";
    } catch (const std::out_of_range& error) {
      EXPECT_NE(std::string(error.what()).find(fmt::format("0x{:03x}", offset)),
                std::string::npos)
          << error.what();
    }
    EXPECT_THROW(model.WriteRegister(offset, 1), std::out_of_range);
  }
}

TEST(Registers, AccessRules) {
  GoldenModel model(LoadConfig("tiny"));
  SetRegister(model, "ID_MAGIC", 0);  // read-only: ignored
  EXPECT_EQ(Register(model, "ID_MAGIC"), 0x53595354u);
  EXPECT_EQ(Register(model, "CTRL"), 0u);  // write-only: reads 0
  EXPECT_EQ(Register(model, "DOORBELL"), 0u);
  SetRegister(model, "CMD_PC_LO", 0x12345678);
  SetRegister(model, "CMD_PC_HI", 0x9A);
  SetRegister(model, "CMD_COUNT", 77);
  EXPECT_EQ(Register(model, "CMD_PC_LO"), 0x12345678u);
  EXPECT_EQ(Register(model, "CMD_PC_HI"), 0x9Au);
  EXPECT_EQ(Register(model, "CMD_COUNT"), 77u);
  SetRegister(model, "IRQ_ENABLE", 0xFFFFFFFF);
  EXPECT_EQ(Register(model, "IRQ_ENABLE"), 0x7u);  // DONE, ERROR, USER
  EXPECT_EQ(Register(model, "STATUS"), 0u);
}

// Puts `program` in memory and rings the doorbell for it.
void Queue(GoldenModel& model, const std::vector<isa::Instruction>& program, std::uint64_t pc) {
  std::vector<std::uint8_t> bytes;
  for (const auto& insn : program) {
    const auto word = isa::EncodeOrThrow(insn);
    bytes.insert(bytes.end(), word.begin(), word.end());
  }
  model.WriteMemory(pc, bytes);
  SetRegister(model, "CMD_PC_LO", static_cast<std::uint32_t>(pc));
  SetRegister(model, "CMD_PC_HI", static_cast<std::uint32_t>(pc >> 32));
  SetRegister(model, "CMD_COUNT", static_cast<std::uint32_t>(program.size()));
  SetRegister(model, "DOORBELL", 1);
}

TEST(Registers, DoorbellRunsLaunchesAndRaisesDone) {
  GoldenModel model(LoadConfig("tiny"));
  Queue(model, {Sync(), Halt()}, 0x100);
  Queue(model, {Halt()}, 0x200);
  EXPECT_EQ(Register(model, "STATUS") >> 8 & 0xFF, 2u);  // CMDQ_LEVEL
  EXPECT_FALSE(model.InterruptLine());
  model.RunUntilIdle();
  EXPECT_EQ(Register(model, "STATUS"), 0u);
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 2u);
  EXPECT_EQ(Register(model, "IRQ_STATUS"), 0x1u);  // DONE
  EXPECT_FALSE(model.InterruptLine());             // not enabled
  SetRegister(model, "IRQ_ENABLE", 0x1);
  EXPECT_TRUE(model.InterruptLine());
  EXPECT_EQ(model.Counter("INSNS"), 3u);
}

TEST(Registers, IrqStatusIsWriteOneToClear) {
  GoldenModel model(LoadConfig("tiny"));
  Queue(model, {Insn(Opcode::kInterrupt, {{Field::kCode, 0xBEEF}}), Halt()}, 0x100);
  model.RunUntilIdle();
  EXPECT_EQ(Register(model, "IRQ_STATUS"), 0x5u);  // DONE | USER
  EXPECT_EQ(Register(model, "IRQ_CODE"), 0xBEEFu);
  SetRegister(model, "IRQ_ENABLE", 0x4);
  EXPECT_TRUE(model.InterruptLine());
  SetRegister(model, "IRQ_STATUS", 0x0);  // writing zeros clears nothing
  EXPECT_EQ(Register(model, "IRQ_STATUS"), 0x5u);
  SetRegister(model, "IRQ_STATUS", 0x4);
  EXPECT_EQ(Register(model, "IRQ_STATUS"), 0x1u);
  EXPECT_FALSE(model.InterruptLine());
}

TEST(Registers, CommandQueueOverflowIsAnError) {
  GoldenModel model(LoadConfig("tiny"));  // command queue depth 2
  Queue(model, {Halt()}, 0x100);
  Queue(model, {Halt()}, 0x200);
  Queue(model, {Halt()}, 0x300);
  EXPECT_EQ(Register(model, "ERROR_CODE"), static_cast<std::uint32_t>(ErrorCode::kCmdqOverflow));
  EXPECT_EQ(Register(model, "FAULT_PC_LO"), 0x300u);
  EXPECT_EQ(Register(model, "STATUS"), 0x2u | 2u << 8);  // ERROR, two launches waiting
  EXPECT_EQ(Register(model, "IRQ_STATUS"), 0x2u);
  model.RunUntilIdle();  // STATUS.ERROR blocks every launch
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 0u);
  SetRegister(model, "CTRL", 0x4);  // CLEAR_ERROR
  EXPECT_EQ(Register(model, "ERROR_CODE"), 0u);
  EXPECT_EQ(Register(model, "FAULT_PC_LO"), 0u);
  model.RunUntilIdle();
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 2u);
}

TEST(Registers, ErrorStopsLaterLaunchesUntilCleared) {
  GoldenModel model(LoadConfig("tiny"));
  Queue(model, {Sync(), Matmul(0, 0, 1, 1, false, false), Halt()}, 0x100);  // NO_WEIGHTS
  Queue(model, {Halt()}, 0x200);
  model.RunUntilIdle();
  EXPECT_EQ(Register(model, "ERROR_CODE"), static_cast<std::uint32_t>(ErrorCode::kNoWeights));
  EXPECT_EQ(Register(model, "FAULT_PC_LO"), 0x120u);
  EXPECT_EQ(Register(model, "STATUS"), 0x2u | 1u << 8);
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 0u);
  EXPECT_NE(model.LastErrorMessage().find("NO_WEIGHTS"), std::string::npos);
  SetRegister(model, "CTRL", 0x4);
  model.RunUntilIdle();
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 1u);
  EXPECT_EQ(Register(model, "STATUS"), 0u);
}

// RunUntil with a deadline already past runs one instruction per call, so a host that waits
// with a timeout gets its thread back between instructions; the launch resumes, or ABORT ends it.
TEST(Registers, RunUntilPausesBetweenInstructionsAndResumes) {
  const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  GoldenModel model(LoadConfig("tiny"));
  Queue(model, {Sync(), Sync(), Sync(), Halt()}, 0x100);
  EXPECT_FALSE(model.RunUntil(past));
  EXPECT_EQ(model.Counter("INSNS"), 1u);
  EXPECT_EQ(Register(model, "STATUS") & 1u, 1u) << "BUSY while paused";
  EXPECT_FALSE(model.RunUntil(past));
  EXPECT_EQ(model.Counter("INSNS"), 2u);
  EXPECT_TRUE(model.RunUntil(std::chrono::steady_clock::now() + std::chrono::seconds(60)));
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 1u);
  EXPECT_EQ(Register(model, "STATUS"), 0u);

  GoldenModel aborted(LoadConfig("tiny"));
  Queue(aborted, {Sync(), Sync(), Sync(), Halt()}, 0x100);
  EXPECT_FALSE(aborted.RunUntil(past));
  EXPECT_FALSE(aborted.RunUntil(past));
  SetRegister(aborted, "CTRL", 0x2);  // ABORT the paused launch
  EXPECT_EQ(Register(aborted, "ERROR_CODE"), static_cast<std::uint32_t>(ErrorCode::kAborted));
  EXPECT_EQ(Register(aborted, "FAULT_PC_LO"), 0x140u) << "stopped before its third instruction";
  EXPECT_EQ(Register(aborted, "STATUS") & 1u, 0u);
  EXPECT_TRUE(aborted.RunUntil(past));
  EXPECT_EQ(aborted.Counter("INSNS"), 2u);
  EXPECT_EQ(Register(aborted, "LAUNCHES_DONE"), 0u);
}

TEST(Registers, AbortDropsQueuedLaunches) {
  GoldenModel model(LoadConfig("tiny"));
  Queue(model, {Halt()}, 0x100);
  Queue(model, {Halt()}, 0x200);
  SetRegister(model, "CTRL", 0x2);  // ABORT
  EXPECT_EQ(Register(model, "ERROR_CODE"), static_cast<std::uint32_t>(ErrorCode::kAborted));
  EXPECT_EQ(Register(model, "FAULT_PC_LO"), 0x100u);
  EXPECT_EQ(Register(model, "STATUS"), 0x2u);  // nothing queued any more
  SetRegister(model, "CTRL", 0x4);
  model.RunUntilIdle();
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 0u);
}

TEST(Registers, SoftResetKeepsMemoriesAndClearsState) {
  GoldenModel model(LoadConfig("tiny"));
  WriteArray<std::int8_t>(model, kDataAddress, {1, 2, 3, 4});
  RunOk(model, {Dma(Opcode::kLoad, isa::MemSpace::kUb, kDataAddress, 4, 5, 0, 1, 4), Halt()});
  Queue(model, {Halt()}, 0x100);
  Queue(model, {Halt()}, 0x200);
  Queue(model, {Halt()}, 0x300);  // overflow: an error to reset
  SetRegister(model, "IRQ_ENABLE", 0x3);
  SetRegister(model, "CTRL", 0x1);  // SOFT_RESET
  EXPECT_EQ(Register(model, "STATUS"), 0u);
  EXPECT_EQ(Register(model, "ERROR_CODE"), 0u);
  EXPECT_EQ(Register(model, "IRQ_STATUS"), 0u);
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 0u);
  EXPECT_EQ(Register(model, "IRQ_ENABLE"), 0x3u);
  EXPECT_EQ(model.UbInt8(5, 3), 4);
  EXPECT_EQ(ReadArray<std::int8_t>(model, kDataAddress, 4)[2], 3);
  model.RunUntilIdle();
  EXPECT_EQ(Register(model, "LAUNCHES_DONE"), 0u);  // the queue was emptied
}

TEST(Registers, ClearCountersZeroesEveryCounter) {
  GoldenModel model(LoadConfig("tiny"));
  RunOk(model, {Sync(), Halt()});
  EXPECT_EQ(model.Counter("INSNS"), 2u);
  EXPECT_GT(model.Counter("BYTES_HOST"), 0u);
  SetRegister(model, "CTRL", 0x8);
  for (const regs::Counter& counter : regs::Counters()) {
    EXPECT_EQ(model.ReadRegister(counter.lo), 0u) << counter.name;
    EXPECT_EQ(model.ReadRegister(counter.lo + 4), 0u) << counter.name;
  }
}

TEST(Registers, ReadingLoLatchesHi) {
  // A memory latency of 2^33 cycles makes one LOAD push PERF_CYCLES past 32 bits.
  TimingParameters timing;
  timing.memory = TimingParameters::Memory::kFixed;
  timing.memory_latency = std::uint64_t{1} << 33;
  GoldenModel model(LoadConfig("tiny"), timing);
  RunOk(model, {Dma(Opcode::kLoad, isa::MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Halt()});
  const std::uint64_t cycles = model.Counter("CYCLES");
  ASSERT_GT(cycles, std::uint64_t{1} << 33);
  EXPECT_EQ(Register(model, "PERF_CYCLES_HI"), 0u);  // nothing latched yet
  EXPECT_EQ(Register(model, "PERF_CYCLES_LO"), static_cast<std::uint32_t>(cycles));
  EXPECT_EQ(Register(model, "PERF_CYCLES_HI"), static_cast<std::uint32_t>(cycles >> 32));
  RunOk(model, {Dma(Opcode::kLoad, isa::MemSpace::kUb, kDataAddress, 4, 0, 0, 1, 4), Halt()});
  EXPECT_EQ(Register(model, "PERF_CYCLES_HI"), static_cast<std::uint32_t>(cycles >> 32));  // stale
  EXPECT_EQ(Register(model, "PERF_CYCLES_LO"), static_cast<std::uint32_t>(2 * cycles));
  EXPECT_EQ(Register(model, "PERF_CYCLES_HI"), static_cast<std::uint32_t>(2 * cycles >> 32));
}

TEST(Registers, HostMemoryAccessIsCheckedAndCounted) {
  GoldenModel model(LoadConfig("tiny"));  // 1 MiB
  std::vector<std::uint8_t> bytes(16, 7);
  model.WriteMemory((1 << 20) - 16, bytes);
  model.ReadMemory(0, bytes);
  EXPECT_EQ(model.Counter("BYTES_HOST"), 32u);
  EXPECT_THROW(model.WriteMemory((1 << 20) - 15, bytes), std::out_of_range);
  EXPECT_THROW(model.ReadMemory(~std::uint64_t{0} - 4, bytes), std::out_of_range);
  EXPECT_EQ(model.Counter("BYTES_HOST"), 32u);
}

}  // namespace
}  // namespace systole::model
