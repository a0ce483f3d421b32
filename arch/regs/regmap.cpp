#include "arch/regs/regmap.hpp"

#include <algorithm>
#include <vector>

namespace systole::regs {

namespace {
// Offsets must be word-aligned, unique, increasing and inside the window; fields inside 32 bits
// and disjoint. Checked at compile time so a bad edit to kRegisters does not build.
consteval bool TableIsWellFormed() {
  std::uint32_t previous = 0;
  bool first = true;
  for (const Register& reg : kRegisters) {
    if (reg.offset % 4 != 0 || reg.offset >= kWindowBytes) return false;
    if (!first && reg.offset <= previous) return false;
    previous = reg.offset;
    first = false;
    std::uint32_t used = 0;
    for (const BitField& field : reg.fields) {
      if (field.width == 0 || field.lsb + field.width > 32) return false;
      if ((used & Mask(field)) != 0) return false;
      used |= Mask(field);
    }
  }
  return true;
}
static_assert(TableIsWellFormed(), "kRegisters is malformed");

struct ErrorInfo {
  std::string_view name;
  std::string_view description;
};
constexpr std::array<ErrorInfo, kNumErrorCodes> kErrors = {{
    {"NONE", "no error"},
    {"ILLEGAL_OPCODE", "opcode not defined"},
    {"RESERVED_BITS", "a reserved instruction bit is set"},
    {"ILLEGAL_FIELD", "a field value is outside its legal range"},
    {"UB_RANGE", "unified-buffer rows outside the buffer"},
    {"ACC_RANGE", "accumulator rows outside the accumulators"},
    {"DRAM_RANGE", "device-memory bytes outside device memory"},
    {"MISALIGNED", "device address or stride not a multiple of the element size"},
    {"SHAPE", "a count exceeds the array or the buffer row width"},
    {"WFIFO_UNDERFLOW", "MATMUL pops a weight tile that no earlier LOAD_WEIGHTS provides"},
    {"WFIFO_OVERFLOW", "LOAD_WEIGHTS overfills the weight FIFO"},
    {"TOKEN_UNDERFLOW", "a wait that no earlier signal satisfies (would deadlock)"},
    {"TOKEN_OVERFLOW", "more outstanding tokens on a unit pair than the configured capacity"},
    {"NO_WEIGHTS", "MATMUL without pop before any weight tile is stationary"},
    {"PROGRAM_OVERRUN", "CMD_COUNT instructions executed without HALT"},
    {"CMDQ_OVERFLOW", "DOORBELL rung with the command queue full"},
    {"ABORTED", "the host aborted the launch"},
}};
}  // namespace

std::string_view AccessName(Access access) {
  switch (access) {
    case Access::kRO: return "RO";
    case Access::kRW: return "RW";
    case Access::kWO: return "WO";
    case Access::kW1C: return "W1C";
  }
  return "?";
}

std::string_view ErrorName(ErrorCode code) {
  const auto index = static_cast<std::uint32_t>(code);
  return index < kNumErrorCodes ? kErrors[index].name : "UNKNOWN";
}

std::string_view ErrorDescription(ErrorCode code) {
  const auto index = static_cast<std::uint32_t>(code);
  return index < kNumErrorCodes ? kErrors[index].description : "unknown error code";
}

const Register* FindRegister(std::uint32_t offset) {
  const auto* it = std::find_if(kRegisters.begin(), kRegisters.end(),
                                [offset](const Register& reg) { return reg.offset == offset; });
  return it == kRegisters.end() ? nullptr : &*it;
}

const Register* FindRegister(std::string_view name) {
  const auto* it = std::find_if(kRegisters.begin(), kRegisters.end(),
                                [name](const Register& reg) { return reg.name == name; });
  return it == kRegisters.end() ? nullptr : &*it;
}

std::span<const Counter> Counters() {
  static const std::vector<Counter> counters = [] {
    std::vector<Counter> result;
    for (const Register& reg : kRegisters) {
      if (reg.group == "perf" && reg.name.ends_with("_LO")) {
        // "PERF_CYCLES_LO" -> "CYCLES"
        result.push_back({reg.name.substr(5, reg.name.size() - 8), reg.offset});
      }
    }
    return result;
  }();
  return counters;
}

}  // namespace systole::regs
