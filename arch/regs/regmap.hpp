// The Systole control/status register map, defined once.
//
// kRegisters is the only place an offset or a bit position is written. Code names a register
// with OffsetOf("STATUS") and a bit field with FieldOf("STATUS", "BUSY"); both are consteval, so
// a misspelt name fails to compile. docs/REGISTERS.md's tables and the RTL header
// rtl/generated/systole_regs.svh are generated from this table (`systole gen`), and a test
// fails when a checked-in copy is stale.
//
// All registers are 32 bits wide and little-endian. 64-bit counters are LO/HI pairs; reading
// LO latches HI so that a LO-then-HI read is consistent.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace systole::regs {

inline constexpr std::uint32_t kMagic = 0x53595354;  // "SYST"

enum class Access : std::uint8_t {
  kRO,   // read-only
  kRW,   // read/write
  kWO,   // write-only: an action; reads return 0
  kW1C,  // read; writing 1 to a bit clears it
};
std::string_view AccessName(Access access);

struct BitField {
  std::string_view name;
  std::uint8_t lsb;
  std::uint8_t width;
  std::string_view doc;
};

struct Register {
  std::string_view name;
  std::uint32_t offset;
  Access access;
  std::string_view group;
  std::string_view doc;
  std::span<const BitField> fields = {};
};

// Error codes reported in ERROR_CODE (and by the ISA encoder/decoder and the models).
enum class ErrorCode : std::uint32_t {
  kNone = 0,
  kIllegalOpcode = 1,    // opcode not defined
  kReservedBits = 2,     // a reserved bit is set
  kIllegalField = 3,     // a field value outside its legal range
  kUbRange = 4,          // unified-buffer rows outside the buffer
  kAccRange = 5,         // accumulator rows outside the accumulators
  kDramRange = 6,        // device-memory bytes outside device memory (also instruction fetch)
  kMisaligned = 7,       // device address or stride not a multiple of the element size
  kShape = 8,            // a count exceeds the array or the buffer row width
  kWfifoUnderflow = 9,   // MATMUL pops a tile no earlier LOAD_WEIGHTS provides
  kWfifoOverflow = 10,   // LOAD_WEIGHTS beyond the FIFO depth with no earlier pop to make room
  kTokenUnderflow = 11,  // a wait no earlier signal satisfies (the program would deadlock)
  kTokenOverflow = 12,   // more outstanding tokens on a unit pair than queues.token_capacity
  kNoWeights = 13,       // MATMUL without pop before any tile is stationary
  kProgramOverrun = 14,  // CMD_COUNT instructions executed without HALT
  kCmdqOverflow = 15,    // DOORBELL rung with the command queue full
  kAborted = 16,         // the host wrote CTRL.ABORT
};
inline constexpr std::uint32_t kNumErrorCodes = 17;
std::string_view ErrorName(ErrorCode code);         // "ILLEGAL_OPCODE"
std::string_view ErrorDescription(ErrorCode code);  // one line for messages and docs

namespace detail {
inline constexpr std::array<BitField, 2> kIdVersion = {{
    {"MINOR", 0, 8, "ISA minor version"},
    {"MAJOR", 8, 8, "ISA major version"},
}};
inline constexpr std::array<BitField, 2> kCfgArray = {{
    {"ROWS", 0, 16, "MXU rows R"},
    {"COLS", 16, 16, "MXU columns C"},
}};
inline constexpr std::array<BitField, 1> kCfgDtype = {{
    {"DTYPE", 0, 8, "0 = int8 (int32 accumulators), 1 = bf16 (fp32 accumulators)"},
}};
inline constexpr std::array<BitField, 4> kCfgQueues = {{
    {"WFIFO_TILES", 0, 8, "weight FIFO depth in tiles"},
    {"CMDQ_DEPTH", 8, 8, "command queue depth"},
    {"TOKEN_CAPACITY", 16, 8, "dependency tokens each unit pair can hold"},
    {"LOAD_CREDITS", 24, 8, "32-byte words a LOAD keeps requested or buffered"},
}};
inline constexpr std::array<BitField, 2> kCfgMem = {{
    {"CHANNELS", 0, 8, "device-memory channels"},
    {"INTERLEAVE_LOG2", 8, 8, "log2 of the channel interleave in bytes"},
}};
inline constexpr std::array<BitField, 4> kCtrl = {{
    {"SOFT_RESET", 0, 1, "reset the sequencer, units, queues and error state (memories kept)"},
    {"ABORT", 1, 1, "stop the running launch with error ABORTED; drop queued launches"},
    {"CLEAR_ERROR", 2, 1, "clear ERROR_CODE and FAULT_PC so queued launches may start"},
    {"CLEAR_COUNTERS", 3, 1, "zero every PERF_* counter"},
}};
inline constexpr std::array<BitField, 3> kStatus = {{
    {"BUSY", 0, 1, "a launch is executing"},
    {"ERROR", 1, 1, "stopped on an error; see ERROR_CODE and FAULT_PC"},
    {"CMDQ_LEVEL", 8, 8, "launches waiting in the command queue"},
}};
inline constexpr std::array<BitField, 3> kIrq = {{
    {"DONE", 0, 1, "a launch reached HALT"},
    {"ERROR", 1, 1, "a launch stopped on an error"},
    {"USER", 2, 1, "an INTERRUPT instruction executed"},
}};
}  // namespace detail

// clang-format off
inline constexpr std::array kRegisters = std::to_array<Register>({
  // Identity and configuration (read-only) -------------------------------------------------
  {"ID_MAGIC",        0x000, Access::kRO, "identity", "0x53595354 (\"SYST\"): a Systole device is here"},
  {"ID_VERSION",      0x004, Access::kRO, "identity", "ISA version", detail::kIdVersion},
  {"CFG_ARRAY",       0x008, Access::kRO, "identity", "systolic array size", detail::kCfgArray},
  {"CFG_DTYPE",       0x00C, Access::kRO, "identity", "element type", detail::kCfgDtype},
  {"CFG_UB_ROWS",     0x010, Access::kRO, "identity", "unified-buffer rows (each max(R,C) elements)"},
  {"CFG_ACC_ROWS",    0x014, Access::kRO, "identity", "accumulator rows (each C elements)"},
  {"CFG_QUEUES",      0x018, Access::kRO, "identity", "queue depths", detail::kCfgQueues},
  {"CFG_MEM_SIZE_LO", 0x01C, Access::kRO, "identity", "device-memory bytes, bits 31:0"},
  {"CFG_MEM_SIZE_HI", 0x020, Access::kRO, "identity", "device-memory bytes, bits 63:32"},
  {"CFG_MEM",         0x024, Access::kRO, "identity", "device-memory organisation", detail::kCfgMem},
  {"CFG_CLOCK_MHZ",   0x028, Access::kRO, "identity", "clock assumed for reports, MHz"},
  {"CFG_NAME0",       0x030, Access::kRO, "identity", "configuration name, bytes 0-3 (ASCII, NUL-padded)"},
  {"CFG_NAME1",       0x034, Access::kRO, "identity", "configuration name, bytes 4-7"},
  {"CFG_NAME2",       0x038, Access::kRO, "identity", "configuration name, bytes 8-11"},
  {"CFG_NAME3",       0x03C, Access::kRO, "identity", "configuration name, bytes 12-15"},
  // Control and status ---------------------------------------------------------------------
  {"CTRL",            0x040, Access::kWO, "control", "actions; each bit acts when written as 1", detail::kCtrl},
  {"STATUS",          0x044, Access::kRO, "control", "execution state", detail::kStatus},
  {"ERROR_CODE",      0x048, Access::kRO, "control", "why the last launch stopped (see error codes)"},
  {"FAULT_PC_LO",     0x04C, Access::kRO, "control", "device address of the faulting instruction, bits 31:0"},
  {"FAULT_PC_HI",     0x050, Access::kRO, "control", "device address of the faulting instruction, bits 63:32"},
  // Command queue --------------------------------------------------------------------------
  {"CMD_PC_LO",       0x060, Access::kRW, "command", "device address of the program's first instruction, bits 31:0"},
  {"CMD_PC_HI",       0x064, Access::kRW, "command", "device address of the program's first instruction, bits 63:32"},
  {"CMD_COUNT",       0x068, Access::kRW, "command", "instructions in the program (a launch faults PROGRAM_OVERRUN past them)"},
  {"DOORBELL",        0x06C, Access::kWO, "command", "any write queues a launch of {CMD_PC, CMD_COUNT}"},
  {"LAUNCHES_DONE",   0x070, Access::kRO, "command", "launches completed since reset (wraps)"},
  // Interrupts -----------------------------------------------------------------------------
  {"IRQ_ENABLE",      0x080, Access::kRW, "interrupt", "which IRQ_STATUS bits raise the interrupt line", detail::kIrq},
  {"IRQ_STATUS",      0x084, Access::kW1C, "interrupt", "pending interrupt causes", detail::kIrq},
  {"IRQ_CODE",        0x088, Access::kRO, "interrupt", "code of the last INTERRUPT instruction"},
  // Performance counters (64-bit: LO then HI) ----------------------------------------------
  {"PERF_CYCLES_LO",            0x100, Access::kRO, "perf", "cycles with a launch executing"},
  {"PERF_CYCLES_HI",            0x104, Access::kRO, "perf", ""},
  {"PERF_INSNS_LO",             0x108, Access::kRO, "perf", "instructions retired"},
  {"PERF_INSNS_HI",             0x10C, Access::kRO, "perf", ""},
  {"PERF_MXU_BUSY_LO",          0x110, Access::kRO, "perf", "cycles the MXU streamed input rows"},
  {"PERF_MXU_BUSY_HI",          0x114, Access::kRO, "perf", ""},
  {"PERF_MACS_LO",              0x118, Access::kRO, "perf", "multiply-accumulates issued: sum of rows x k x C over MATMULs"},
  {"PERF_MACS_HI",              0x11C, Access::kRO, "perf", ""},
  {"PERF_STALL_TOKEN_LO",       0x120, Access::kRO, "perf", "unit-cycles spent waiting for a dependency token"},
  {"PERF_STALL_TOKEN_HI",       0x124, Access::kRO, "perf", ""},
  {"PERF_STALL_WFIFO_LO",       0x128, Access::kRO, "perf", "cycles the MXU waited for a weight tile"},
  {"PERF_STALL_WFIFO_HI",       0x12C, Access::kRO, "perf", ""},
  {"PERF_STALL_MEMORY_LO",      0x130, Access::kRO, "perf", "unit-cycles DMA waited for device memory"},
  {"PERF_STALL_MEMORY_HI",      0x134, Access::kRO, "perf", ""},
  {"PERF_STALL_DISPATCH_LO",    0x138, Access::kRO, "perf", "cycles the sequencer waited for a full unit queue"},
  {"PERF_STALL_DISPATCH_HI",    0x13C, Access::kRO, "perf", ""},
  {"PERF_BYTES_DRAM_TO_UB_LO",  0x140, Access::kRO, "perf", "bytes LOAD moved into the unified buffer"},
  {"PERF_BYTES_DRAM_TO_UB_HI",  0x144, Access::kRO, "perf", ""},
  {"PERF_BYTES_DRAM_TO_ACC_LO", 0x148, Access::kRO, "perf", "bytes LOAD moved into the accumulators"},
  {"PERF_BYTES_DRAM_TO_ACC_HI", 0x14C, Access::kRO, "perf", ""},
  {"PERF_BYTES_WEIGHTS_LO",     0x150, Access::kRO, "perf", "bytes LOAD_WEIGHTS read from device memory"},
  {"PERF_BYTES_WEIGHTS_HI",     0x154, Access::kRO, "perf", ""},
  {"PERF_BYTES_UB_TO_DRAM_LO",  0x158, Access::kRO, "perf", "bytes STORE moved out of the unified buffer"},
  {"PERF_BYTES_UB_TO_DRAM_HI",  0x15C, Access::kRO, "perf", ""},
  {"PERF_BYTES_ACC_TO_DRAM_LO", 0x160, Access::kRO, "perf", "bytes STORE moved out of the accumulators"},
  {"PERF_BYTES_ACC_TO_DRAM_HI", 0x164, Access::kRO, "perf", ""},
  {"PERF_BYTES_HOST_LO",        0x168, Access::kRO, "perf", "bytes the host read or wrote in device memory"},
  {"PERF_BYTES_HOST_HI",        0x16C, Access::kRO, "perf", ""},
});
// clang-format on

// Size of the register window in bytes (offsets are below this).
inline constexpr std::uint32_t kWindowBytes = 0x200;

consteval std::uint32_t OffsetOf(std::string_view name) {
  for (const Register& reg : kRegisters) {
    if (reg.name == name) return reg.offset;
  }
  throw "no register with this name";  // a compile-time error in a consteval context
}

consteval BitField FieldOf(std::string_view reg_name, std::string_view field_name) {
  for (const Register& reg : kRegisters) {
    if (reg.name != reg_name) continue;
    for (const BitField& field : reg.fields) {
      if (field.name == field_name) return field;
    }
  }
  throw "no such register field";
}

// Mask of a bit field in its register.
constexpr std::uint32_t Mask(BitField field) {
  return (field.width >= 32 ? ~0u : ((1u << field.width) - 1u)) << field.lsb;
}
constexpr std::uint32_t Extract(std::uint32_t value, BitField field) {
  return (value & Mask(field)) >> field.lsb;
}
constexpr std::uint32_t Place(std::uint32_t value, BitField field) {
  return (value << field.lsb) & Mask(field);
}

// Register by offset, or nullptr.
const Register* FindRegister(std::uint32_t offset);
const Register* FindRegister(std::string_view name);

// The 64-bit performance counters, in register order; `lo` is the offset of the LO half.
struct Counter {
  std::string_view name;  // "CYCLES", …
  std::uint32_t lo;
};
std::span<const Counter> Counters();

}  // namespace systole::regs
