// The shared register and memory map rules (socket_rules.hpp).
#include "sim/systemc/socket_rules.hpp"

#include "arch/regs/regmap.hpp"

namespace systole::systemc {

using tlm::tlm_generic_payload;

sc_core::sc_time ClockPeriodOf(const Config& config) {
  if (config.clock_mhz == 0) return sc_core::sc_time(1, sc_core::SC_NS);
  return sc_core::sc_time(1.0 / config.clock_mhz, sc_core::SC_US);
}

bool ByteEnabled(const tlm_generic_payload& trans, std::uint64_t i) {
  const unsigned char* enables = trans.get_byte_enable_ptr();
  if (enables == nullptr) return true;
  return enables[i % trans.get_byte_enable_length()] == TLM_BYTE_ENABLED;
}

bool AllBytesEnabled(const tlm_generic_payload& trans) {
  for (std::uint64_t i = 0; i < trans.get_data_length(); ++i) {
    if (!ByteEnabled(trans, i)) return false;
  }
  return true;
}

tlm::tlm_response_status CheckRegisterAccess(const tlm_generic_payload& trans, bool present) {
  const std::uint64_t address = trans.get_address();
  const std::uint64_t length = trans.get_data_length();
  if (length == 0 || length % kRegisterWordBytes != 0 || trans.get_streaming_width() != length) {
    return tlm::TLM_BURST_ERROR_RESPONSE;
  }
  const bool inside = present && address % kRegisterWordBytes == 0 && address < kRegisterWindowBytes &&
                      length <= kRegisterWindowBytes - address;
  if (!inside) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  // Every word must name a register before any is touched.
  for (std::uint64_t i = 0; i < length; i += kRegisterWordBytes) {
    if (regs::FindRegister(static_cast<std::uint32_t>(address + i)) == nullptr) {
      return tlm::TLM_ADDRESS_ERROR_RESPONSE;
    }
  }
  return tlm::TLM_OK_RESPONSE;
}

tlm::tlm_response_status RegisterAccessRefusal(const tlm_generic_payload& trans, bool present, bool failed) {
  if (const tlm::tlm_response_status status = CheckRegisterAccess(trans, present); status != tlm::TLM_OK_RESPONSE) {
    return status;
  }
  if (failed) return tlm::TLM_GENERIC_ERROR_RESPONSE;
  if (trans.is_write() && !AllBytesEnabled(trans)) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  return tlm::TLM_OK_RESPONSE;
}

tlm::tlm_response_status MemoryAccessRefusal(const tlm_generic_payload& trans, std::uint64_t memory_bytes,
                                             bool failed) {
  if (const tlm::tlm_response_status status = CheckMemoryAccess(trans, memory_bytes); status != tlm::TLM_OK_RESPONSE) {
    return status;
  }
  return failed ? tlm::TLM_GENERIC_ERROR_RESPONSE : tlm::TLM_OK_RESPONSE;
}

tlm::tlm_response_status CheckMemoryAccess(const tlm_generic_payload& trans, std::uint64_t memory_bytes) {
  const std::uint64_t address = trans.get_address();
  const std::uint64_t length = trans.get_data_length();
  if (trans.get_streaming_width() != length) return tlm::TLM_BURST_ERROR_RESPONSE;
  if (length > memory_bytes || address > memory_bytes - length) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  return tlm::TLM_OK_RESPONSE;
}

std::uint32_t RegisterWordOf(const tlm_generic_payload& trans, std::uint64_t index) {
  const unsigned char* data = trans.get_data_ptr() + index * kRegisterWordBytes;
  std::uint32_t value = 0;
  for (std::uint64_t b = 0; b < kRegisterWordBytes; ++b) value |= std::uint32_t{data[b]} << (8 * b);
  return value;
}

void PutRegisterWord(tlm_generic_payload& trans, std::uint64_t index, std::uint32_t value) {
  unsigned char* data = trans.get_data_ptr() + index * kRegisterWordBytes;
  for (std::uint64_t b = 0; b < kRegisterWordBytes; ++b) {
    if (ByteEnabled(trans, index * kRegisterWordBytes + b)) data[b] = static_cast<unsigned char>(value >> (8 * b));
  }
}

}  // namespace systole::systemc
