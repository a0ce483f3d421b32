// The decoding both Systole target modules share — SystoleDevice (a DeviceModel behind
// annotated sockets) and ClockedSoc (the Verilated SoC on an sc_clock): which accesses the
// register and memory maps accept, and how byte enables select bytes. One copy, so that the two
// answer every access alike (the rules are listed in systole_device.hpp and docs/SYSTEMC.md).
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>

#include "arch/config/config.hpp"

namespace systole::systemc {

// Every register of arch/regs/regmap.hpp lies below this offset.
inline constexpr std::uint64_t kRegisterWindowBytes = 0x1000;
inline constexpr std::uint64_t kRegisterWordBytes = 4;

// One device cycle: 1 / config.clock_mhz (1 ns for a configuration without a clock), rounded
// to the kernel's time resolution.
sc_core::sc_time ClockPeriodOf(const Config& config);

// Byte `i` of the transaction is enabled (TLM-2.0's repeating byte-enable pattern).
bool ByteEnabled(const tlm::tlm_generic_payload& trans, std::uint64_t i);
// No byte of the transaction is disabled.
bool AllBytesEnabled(const tlm::tlm_generic_payload& trans);

// TLM_OK_RESPONSE when a register access may go ahead; otherwise what to answer, nothing
// touched: TLM_BURST_ERROR_RESPONSE for a length that is not a non-zero multiple of a word or
// a streaming width other than the length, TLM_ADDRESS_ERROR_RESPONSE for a misaligned offset,
// a word past the window or naming no register, or no device (`present` false). Byte enables
// are the caller's to check (a write must have every byte enabled).
tlm::tlm_response_status CheckRegisterAccess(const tlm::tlm_generic_payload& trans, bool present);

// Everything a register access is refused for, in this order: CheckRegisterAccess's answers,
// TLM_GENERIC_ERROR_RESPONSE when the device has stopped (`failed`), and
// TLM_BYTE_ENABLE_ERROR_RESPONSE for a write with a disabled byte. TLM_OK_RESPONSE otherwise.
tlm::tlm_response_status RegisterAccessRefusal(const tlm::tlm_generic_payload& trans, bool present, bool failed);

// TLM_OK_RESPONSE when a memory access may go ahead: TLM_BURST_ERROR_RESPONSE for a streaming
// width other than the length, TLM_ADDRESS_ERROR_RESPONSE when any byte lies at or past
// `memory_bytes` (0: no device).
tlm::tlm_response_status CheckMemoryAccess(const tlm::tlm_generic_payload& trans, std::uint64_t memory_bytes);

// CheckMemoryAccess's answers, then TLM_GENERIC_ERROR_RESPONSE when the device has stopped
// (`failed`): what every memory access is refused for before byte enables, which the two
// modules treat differently. TLM_OK_RESPONSE otherwise.
tlm::tlm_response_status MemoryAccessRefusal(const tlm::tlm_generic_payload& trans, std::uint64_t memory_bytes,
                                             bool failed);

// Word `index` of a register transaction: the value a write carries (little-endian), and the
// enabled bytes of a value a read returns.
std::uint32_t RegisterWordOf(const tlm::tlm_generic_payload& trans, std::uint64_t index);
void PutRegisterWord(tlm::tlm_generic_payload& trans, std::uint64_t index, std::uint32_t value);

}  // namespace systole::systemc
