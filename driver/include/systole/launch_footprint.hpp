// Which device-memory bytes a launch can touch, found statically. The ISA has no indirect
// addressing and no branches, so this is exact: the sequencer fetches words in order until the
// first HALT (or the first word that does not decode, where it faults before any effect), and
// only LOAD, STORE and LOAD_WEIGHTS reach device memory, at addresses written in the words.
//
// The device server uses it to keep each client inside its own allocations; Device::Load uses
// it to find every range a program needs when it must move the program elsewhere.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/isa/isa.hpp"
#include "arch/regs/regmap.hpp"

namespace systole {

struct TouchedRange {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  bool written = false;          // STORE
  std::size_t instruction = 0;   // index of the instruction (of the first, for the text)
  bool operator==(const TouchedRange&) const = default;
};

struct LaunchFootprint {
  // The instruction words the sequencer fetches: [pc, pc + 32 * fetched).
  std::uint64_t fetched = 0;
  // One entry per LOAD, STORE and LOAD_WEIGHTS among them, in program order.
  std::vector<TouchedRange> data;
};

// The footprint of launching `words` (CMD_COUNT = words.size()); `fetched` counts from CMD_PC.
LaunchFootprint FootprintOf(std::span<const isa::Word> words, const Config& config);

// The device-memory range an instruction's DMA touches, or nullopt for instructions that touch
// none. Used by FootprintOf and by relocation.
std::optional<TouchedRange> DmaRangeOf(const isa::Instruction& instruction, const Config& config);

// The fault a device reports for a LOAD, STORE or LOAD_WEIGHTS before it checks the device-memory
// range (docs/ISA.md: MISALIGNED, SHAPE, then UB_RANGE or ACC_RANGE), or nullopt when its
// operands are fine up to the range. A device server that refuses an instruction for its range
// reports this instead when there is one, so that the error reads as the device's own.
std::optional<regs::ErrorCode> OperandFault(const isa::Instruction& instruction,
                                            const Config& config);

}  // namespace systole
