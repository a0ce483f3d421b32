// The Verilated SoC (systole_soc: core, HBM controller, DRAM models) as a SystemC module clocked
// by the platform's own sc_clock, behind TLM-2.0 target sockets: a cycle-accurate TLM-to-bus
// bridge (docs/SYSTEMC.md, "The clocked bridge").
//
//   sc_clock ──► clk ──► OnRisingEdge (SC_METHOD, clk.pos()): one RtlDevice::ClockEdge per edge
//                              ▲ drives / samples the pins
//   initiator ─► registers ─┐  │
//   (SC_THREAD)  memory ────┴► bridge: the access becomes a register-bus or host-port handshake,
//                              the initiator wait()s until the edge that completes it
//                irq ◄──────── the SoC's interrupt line, as each edge leaves it
//
// Timing: simulated time passes by clock edges, never by annotation. b_transport first waits
// out the delay it is given (time the initiator ran ahead of sc_time_stamp()), posts the access,
// and returns with delay zero at the time of the edge that completed it. The access is driven
// from the first rising edge whose process runs after it was posted (an initiator that resumes
// in a delta cycle after an edge — as after every completed access — catches the next edge).
// A register write completes at the edge that samples it; a read at the edge that samples
// reg_rvalid (two edges for this SoC); a memory access when the host port has answered its
// last word.
//
// The process evaluates the model exactly once per rising edge, whether or not an access is
// pending: Cycles() — the RTL's cycles since its reset — equals the rising edges of clk since
// elaboration, and a launch runs while the initiator waits on irq or polls STATUS. The SoC is
// reset at construction (8 cycles, before simulated time starts); CTRL.SOFT_RESET resets it
// through the register socket.
//
// Sockets answer as SystoleDevice's with the `rtl` model behind them (socket_rules.hpp decides
// for both): address errors outside the maps (nothing done), burst errors, register writes
// with disabled bytes refused, masked memory writes refused (TLM_BYTE_ENABLE_ERROR_RESPONSE:
// memory lives in the DRAM models, reachable only through the host port, so there is nothing to
// merge with), masked reads served; transport_dbg moves nothing; DMI is never granted. A model
// that throws (a DRAM timing rule broken, a bus that stops answering) stops the SoC; every
// access then answers TLM_GENERIC_ERROR_RESPONSE and failure() says why.
//
// b_transport must be called from an SC_THREAD (it waits). Several initiators may call it;
// their accesses take the bus one after another. Only configurations the build Verilated
// (SYSTOLE_RTL_CONFIGS) can be built; rtl::MakeRtlDevice names the others.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "arch/config/config.hpp"
#include "sim/rtl/rtl_device.hpp"

namespace systole::systemc {

class ClockedSoc : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk;
  sc_core::sc_out<bool> irq;
  tlm_utils::simple_target_socket<ClockedSoc> registers;  // offsets 0 … kRegisterWindowBytes
  tlm_utils::simple_target_socket<ClockedSoc> memory;     // offsets 0 … config.memory_bytes

  SC_HAS_PROCESS(ClockedSoc);
  ClockedSoc(const sc_core::sc_module_name& name, const Config& config,
             const rtl::RtlDeviceOptions& options = {});
  ~ClockedSoc() override;

  const Config& config() const { return device_->config(); }
  // The period clk should have to run the SoC at its configured clock ([clock] mhz).
  sc_core::sc_time ConfiguredPeriod() const;
  // The RTL's clock cycles since its reset: one per rising edge of clk.
  std::uint64_t Cycles() const;
  // Why the SoC stopped, when its model threw; empty otherwise.
  const std::string& failure() const { return failure_; }

 private:
  // One access on the SoC's buses, in flight between b_transport and the clocked process.
  struct BusAccess {
    enum class Kind { kNone, kRegisterRead, kRegisterWrite, kMemory } kind = Kind::kNone;
    std::uint32_t offset = 0;  // registers
    std::uint32_t value = 0;   // a register write's value; a register read's answer
    std::uint64_t address = 0, length = 0;  // memory
    bool write = false;
    const std::uint8_t* in = nullptr;  // memory writes
    std::uint8_t* out = nullptr;       // memory reads
    // Progress: edges since the access was first driven, the next host-port word to request
    // and the next to be answered (word indices).
    std::uint64_t edges = 0, next = 0, answered = 0, last = 0;
  };

  void OnRisingEdge();
  rtl::HostPinsIn Drive() const;
  void Observe(const rtl::HostPinsIn& pins, const rtl::HostPinsOut& out);
  // Runs `access` on the bus; false when the SoC failed meanwhile.
  bool Submit(BusAccess& access);
  void Finish();

  void RegistersTransport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned RegistersDebug(tlm::tlm_generic_payload& trans);
  void MemoryTransport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned MemoryDebug(tlm::tlm_generic_payload& trans);
  bool MemoryDmi(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);

  std::unique_ptr<rtl::RtlDevice> device_;
  std::uint64_t reset_cycles_ = 0;  // the RTL's cycle count after its reset
  BusAccess* access_ = nullptr;     // the access on the bus, if any
  sc_core::sc_mutex bus_;           // one access at a time
  sc_core::sc_event finished_;      // access_ completed (or the SoC failed)
  bool irq_level_ = false;
  bool failed_ = false;
  std::string failure_;
};

}  // namespace systole::systemc
