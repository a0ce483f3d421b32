// The clocked bridge: sockets, the per-edge process and the bus handshakes (clocked_soc.hpp).
#include "sim/systemc/clocked_soc.hpp"

#include <fmt/format.h>

#include <exception>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/systemc/socket_rules.hpp"

namespace systole::systemc {

namespace {

using sc_core::sc_time;
using tlm::tlm_generic_payload;

// Edges a register read may wait for reg_rvalid, and a memory access per word (as
// DeviceSim's own transfers allow), before the bus counts as dead.
constexpr std::uint64_t kRegisterReadEdges = 16;
constexpr std::uint64_t kEdgesPerWord = 64;
constexpr std::uint64_t kTransferSlackEdges = 100000;

}  // namespace

ClockedSoc::ClockedSoc(const sc_core::sc_module_name& name, const Config& config,
                       const rtl::RtlDeviceOptions& options)
    : sc_core::sc_module(name),
      clk("clk"),
      irq("irq"),
      registers("registers"),
      memory("memory"),
      device_(rtl::MakeRtlDevice(config, options)),
      reset_cycles_(device_->Cycle()) {
  registers.register_b_transport(this, &ClockedSoc::RegistersTransport);
  registers.register_transport_dbg(this, &ClockedSoc::RegistersDebug);
  memory.register_b_transport(this, &ClockedSoc::MemoryTransport);
  memory.register_transport_dbg(this, &ClockedSoc::MemoryDebug);
  memory.register_get_direct_mem_ptr(this, &ClockedSoc::MemoryDmi);
  SC_METHOD(OnRisingEdge);
  sensitive << clk.pos();
  dont_initialize();
}

ClockedSoc::~ClockedSoc() {
  rtl::DestroyRtlDevice(std::move(device_));  // safe whatever models came and went before
}

sc_time ClockedSoc::ConfiguredPeriod() const { return ClockPeriodOf(config()); }

std::uint64_t ClockedSoc::Cycles() const { return device_->Cycle() - reset_cycles_; }

void ClockedSoc::OnRisingEdge() {
  if (failed_) return;  // the model threw: it is in no state to be clocked again
  const rtl::HostPinsIn pins = Drive();
  try {
    const rtl::HostPinsOut out = device_->ClockEdge(pins);
    Observe(pins, out);
    if (out.irq_after_edge != irq_level_) {
      irq_level_ = out.irq_after_edge;
      irq.write(irq_level_);
    }
  } catch (const std::exception& error) {
    // Never let an exception out of a SystemC process: keep the message, fail the access.
    failed_ = true;
    failure_ = error.what();
    if (access_ != nullptr) Finish();
  }
}

// The pins for this edge: the access's request, until the SoC has taken it.
rtl::HostPinsIn ClockedSoc::Drive() const {
  rtl::HostPinsIn pins;
  if (access_ == nullptr) return pins;
  const BusAccess& a = *access_;
  switch (a.kind) {
    case BusAccess::Kind::kRegisterRead:
    case BusAccess::Kind::kRegisterWrite:
      if (a.edges == 0) {  // the register bus is always ready: one edge carries the request
        pins.reg_valid = true;
        pins.reg_write = a.kind == BusAccess::Kind::kRegisterWrite;
        pins.reg_addr = a.offset;
        pins.reg_wdata = a.value;
      }
      break;
    case BusAccess::Kind::kMemory:
      if (a.next <= a.last) {
        // Word `next`: the bytes of [address, address + length) it holds are enabled.
        const std::uint64_t base = a.next * rtl::kHostWordBytes;
        pins.host_req_valid = true;
        pins.host_req_write = a.write;
        pins.host_req_addr = base;
        for (unsigned b = 0; b < rtl::kHostWordBytes; ++b) {
          const std::uint64_t at = base + b;
          if (at < a.address || at >= a.address + a.length) continue;
          pins.host_req_wstrb |= 1u << b;
          if (a.write) pins.host_req_wdata[b] = a.in[at - a.address];
        }
      }
      break;
    case BusAccess::Kind::kNone:
      break;
  }
  return pins;
}

// What the edge sampled: the answers the access was waiting for.
void ClockedSoc::Observe(const rtl::HostPinsIn& pins, const rtl::HostPinsOut& out) {
  if (access_ == nullptr) return;
  BusAccess& a = *access_;
  const std::uint64_t edge = a.edges++;
  switch (a.kind) {
    case BusAccess::Kind::kRegisterWrite:
      Finish();  // taken at this edge
      break;
    case BusAccess::Kind::kRegisterRead:
      if (edge > 0 && out.reg_rvalid) {  // the answer comes at a later edge than the request
        a.value = out.reg_rdata;
        Finish();
      } else if (edge > kRegisterReadEdges) {
        throw std::runtime_error(fmt::format("rtl: register read at 0x{:03x} got no response", a.offset));
      }
      break;
    case BusAccess::Kind::kMemory: {
      if (out.host_rsp_valid) {
        if (!a.write) {
          const std::uint64_t base = a.answered * rtl::kHostWordBytes;
          for (unsigned b = 0; b < rtl::kHostWordBytes; ++b) {
            const std::uint64_t at = base + b;
            if (at >= a.address && at < a.address + a.length) a.out[at - a.address] = out.host_rsp_rdata[b];
          }
        }
        ++a.answered;
      }
      if (pins.host_req_valid && out.host_req_ready) ++a.next;
      const std::uint64_t words = a.last - a.address / rtl::kHostWordBytes + 1;
      if (a.answered > a.last) {
        Finish();
      } else if (a.edges > kEdgesPerWord * words + kTransferSlackEdges) {
        throw std::runtime_error("rtl: host port stopped answering");
      }
      break;
    }
    case BusAccess::Kind::kNone:
      break;
  }
}

void ClockedSoc::Finish() {
  access_ = nullptr;
  // A delta later: the initiator resumes after every process of this edge has run.
  finished_.notify(sc_core::SC_ZERO_TIME);
}

bool ClockedSoc::Submit(BusAccess& access) {
  bus_.lock();
  if (!failed_) {
    access_ = &access;
    wait(finished_);
  }
  bus_.unlock();
  return !failed_;
}

void ClockedSoc::RegistersTransport(tlm_generic_payload& trans, sc_time& delay) {
  wait(delay);  // the initiator ran ahead of the kernel by this much: catch up first
  delay = sc_core::SC_ZERO_TIME;
  if (const tlm::tlm_response_status status = RegisterAccessRefusal(trans, true, failed_);
      status != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(status);
    return;
  }
  const std::uint64_t words = trans.get_data_length() / kRegisterWordBytes;
  for (std::uint64_t i = 0; i < words && trans.get_command() != tlm::TLM_IGNORE_COMMAND; ++i) {
    BusAccess access;
    access.kind = trans.is_read() ? BusAccess::Kind::kRegisterRead : BusAccess::Kind::kRegisterWrite;
    access.offset = static_cast<std::uint32_t>(trans.get_address() + i * kRegisterWordBytes);
    if (trans.is_write()) access.value = RegisterWordOf(trans, i);
    if (!Submit(access)) {
      trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    if (trans.is_read()) PutRegisterWord(trans, i, access.value);
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned ClockedSoc::RegistersDebug(tlm_generic_payload&) { return 0; }

void ClockedSoc::MemoryTransport(tlm_generic_payload& trans, sc_time& delay) {
  wait(delay);
  delay = sc_core::SC_ZERO_TIME;
  if (const tlm::tlm_response_status status = MemoryAccessRefusal(trans, config().memory_bytes, failed_);
      status != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(status);
    return;
  }
  const bool masked = trans.get_byte_enable_ptr() != nullptr;
  if (masked && trans.is_write()) {
    // A masked write would have to merge with what memory holds, and the DRAM models have no
    // back door to read it through (the rtl model's answer as well).
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  const std::uint64_t length = trans.get_data_length();
  if (length != 0 && trans.get_command() != tlm::TLM_IGNORE_COMMAND) {
    // A masked read reads the whole range, as one host access, and keeps the enabled bytes.
    std::vector<std::uint8_t> staging(masked ? length : 0);
    BusAccess access;
    access.kind = BusAccess::Kind::kMemory;
    access.address = trans.get_address();
    access.length = length;
    access.write = trans.is_write();
    access.in = trans.get_data_ptr();
    access.out = masked ? staging.data() : trans.get_data_ptr();
    access.next = access.address / rtl::kHostWordBytes;
    access.answered = access.next;
    access.last = (access.address + length - 1) / rtl::kHostWordBytes;
    if (!Submit(access)) {
      trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    for (std::uint64_t i = 0; masked && i < length; ++i) {
      if (ByteEnabled(trans, i)) trans.get_data_ptr()[i] = staging[i];
    }
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

// No back door to the DRAM models: a debug access moves nothing.
unsigned ClockedSoc::MemoryDebug(tlm_generic_payload&) { return 0; }

bool ClockedSoc::MemoryDmi(tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  // Never granted; the denial covers all of memory, or everything past its end.
  const std::uint64_t size = config().memory_bytes;
  dmi.set_start_address(trans.get_address() >= size ? size : 0);
  dmi.set_end_address(std::numeric_limits<sc_dt::uint64>::max());
  dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_NONE);
  return false;
}

}  // namespace systole::systemc
