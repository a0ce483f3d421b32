#include "systole/launch_footprint.hpp"

#include <algorithm>

namespace systole {

using isa::Field;
using isa::Opcode;

std::optional<TouchedRange> DmaRangeOf(const isa::Instruction& insn, const Config& config) {
  // Field widths bound every product below ((2^16 - 1) * (2^32 - 1) + 2^20), so nothing
  // overflows; rows is at least 1 for every decodable instruction.
  switch (insn.opcode) {
    case Opcode::kLoad:
    case Opcode::kStore: {
      const std::uint64_t element = isa::DmaElementBytes(insn, ElementBytes(config.dtype));
      const std::uint64_t rows = insn[Field::kRows];
      const std::uint64_t span = (rows == 0 ? 0 : (rows - 1) * insn[Field::kStride]) +
                                 insn[Field::kElems] * element;
      return TouchedRange{insn[Field::kDram], span, insn.opcode == Opcode::kStore, 0};
    }
    case Opcode::kLoadWeights: {
      const std::uint64_t rows = insn[Field::kRows];
      const std::uint64_t span = (rows == 0 ? 0 : (rows - 1) * insn[Field::kStride]) +
                                 insn[Field::kCols] * ElementBytes(config.dtype);
      return TouchedRange{insn[Field::kDram], span, false, 0};
    }
    default: return std::nullopt;
  }
}

LaunchFootprint FootprintOf(std::span<const isa::Word> words, const Config& config) {
  LaunchFootprint footprint;
  for (std::size_t index = 0; index < words.size(); ++index) {
    ++footprint.fetched;
    isa::Instruction insn;
    if (isa::Decode(words[index], insn)) break;  // the sequencer faults here, before any effect
    if (auto range = DmaRangeOf(insn, config)) {
      range->instruction = index;
      footprint.data.push_back(*range);
    }
    if (insn.opcode == Opcode::kHalt) break;
  }
  return footprint;
}

// The same checks, in the same order, as the golden model's CheckDma and CheckLoadWeights
// (sim/model/dma.cpp), which the RTL matches; tests/driver/server_launch_test.cpp compares them.
std::optional<regs::ErrorCode> OperandFault(const isa::Instruction& insn, const Config& config) {
  const std::uint64_t element = ElementBytes(config.dtype);
  switch (insn.opcode) {
    case Opcode::kLoad:
    case Opcode::kStore: {
      const bool acc = insn[Field::kMem] == static_cast<unsigned>(isa::MemSpace::kAcc);
      const std::uint64_t size = isa::DmaElementBytes(insn, ElementBytes(config.dtype));
      if (insn[Field::kDram] % size != 0 || insn[Field::kStride] % size != 0) {
        return regs::ErrorCode::kMisaligned;
      }
      const std::uint64_t ub_width = std::max(config.rows, config.cols);
      if (insn[Field::kCol] + insn[Field::kElems] > (acc ? config.cols : ub_width)) {
        return regs::ErrorCode::kShape;
      }
      const std::uint64_t buffer_rows = acc ? config.accumulator_bytes / (config.cols * kAccumulatorElementBytes)
                                            : config.unified_buffer_bytes / (ub_width * element);
      if (insn[Field::kRow] + insn[Field::kRows] > buffer_rows) {
        return acc ? regs::ErrorCode::kAccRange : regs::ErrorCode::kUbRange;
      }
      return std::nullopt;
    }
    case Opcode::kLoadWeights:
      if (insn[Field::kDram] % element != 0 || insn[Field::kStride] % element != 0) {
        return regs::ErrorCode::kMisaligned;
      }
      if (insn[Field::kRows] > config.rows || insn[Field::kCols] > config.cols) {
        return regs::ErrorCode::kShape;
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace systole
