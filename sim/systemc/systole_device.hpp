// A Systole device as a SystemC/TLM-2.0 module, for virtual platforms (docs/SYSTEMC.md).
//
//              registers ──►┐
//   initiator               │  SystoleDevice ── DeviceModel (golden model, …)
//              memory ─────►┘        │
//                                    └──► irq_o
//
// Two target sockets and an interrupt output, as a board presents itself on a bus:
//   registers  the 32-bit register map of docs/REGISTERS.md at offsets 0 … kRegisterWindowBytes;
//   memory     device memory at offsets 0 … config.memory_bytes, with DMI;
//   irq_o      high while IRQ_STATUS & IRQ_ENABLE is non-zero.
//
// Socket rules (what the tests in tests/systemc/ pin down):
//   * b_transport annotates its delay: register accesses take kRegisterAccessCycles device
//     cycles, memory accesses kMemoryAccessCycles plus one cycle per kMemoryBeatBytes — or, for
//     a model with a bus of its own (the RTL), the cycles its bus took.
//   * Addresses outside a map answer TLM_ADDRESS_ERROR_RESPONSE: a register offset that names no
//     register, a misaligned register offset, any byte of a memory access past the end of
//     memory (nothing is transferred then), and every access while no model is inserted.
//   * Registers are accessed as whole 32-bit words: a length that is not a non-zero multiple of
//     4, or a streaming width other than the length, is TLM_BURST_ERROR_RESPONSE. Byte enables
//     select the bytes a read returns; a write with some bytes of a word disabled is
//     TLM_BYTE_ENABLE_ERROR_RESPONSE (the hardware's registers take whole words only).
//   * Memory honours byte enables on reads and writes (the pattern repeats every
//     byte_enable_length bytes; a write merges through the debug back door, so a model without
//     one answers TLM_BYTE_ENABLE_ERROR_RESPONSE); a streaming width other than the length is a
//     burst error.
//   * transport_dbg reads and writes memory with no side effect and no PERF_BYTES_HOST count,
//     and returns the bytes it moved: the part of the range inside memory (0 outside, and 0
//     for a model without a debug back door, such as the RTL's DRAM models). Reading
//     a register can have an effect (a counter's LO half latches its HI half), so the register
//     socket's debug transport moves nothing and returns 0.
//   * get_direct_mem_ptr grants read/write DMI to one 64 KiB page of device memory at a time
//     (the golden model keeps memory in sparse pages; the RTL offers none); DMI accesses bypass
//     PERF_BYTES_HOST.
//     Inserting or removing a model invalidates every grant.
//
// Timing is loosely timed: the thread that runs the model (Run) adds each step's cycles to a
// tlm_quantumkeeper and synchronises with the kernel at the end of each quantum and whenever
// the interrupt line changes or the device falls idle, so irq_o and Idle() change at the
// simulated time the work finishes.
//
// A device may be built empty and have a model inserted and removed later (Insert, Remove):
// SystemC cannot add modules once the simulation has started, so a platform that opens devices
// on demand (platform.hpp, the driver's `systemc` link) elaborates empty slots up front.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "sim/systemc/device_model.hpp"
#include "sim/systemc/socket_rules.hpp"

namespace systole::systemc {

class SystoleDevice : public sc_core::sc_module {
 public:
  // Every register of arch/regs/regmap.hpp lies below this offset (socket_rules.hpp).
  static constexpr std::uint64_t kRegisterWindowBytes = systemc::kRegisterWindowBytes;
  static constexpr std::uint64_t kRegisterAccessCycles = 2;
  static constexpr std::uint64_t kMemoryAccessCycles = 4;
  static constexpr std::uint64_t kMemoryBeatBytes = 32;

  tlm_utils::simple_target_socket<SystoleDevice> registers;
  tlm_utils::simple_target_socket<SystoleDevice> memory;
  sc_core::sc_out<bool> irq_o;

  SC_HAS_PROCESS(SystoleDevice);
  explicit SystoleDevice(const sc_core::sc_module_name& name,
                         std::unique_ptr<DeviceModel> model = nullptr);
  ~SystoleDevice() override;

  // Puts `model` behind the sockets (replacing any other) and invalidates every DMI grant.
  void Insert(std::unique_ptr<DeviceModel> model);
  // Takes the model out (the sockets then answer address errors) and invalidates every grant.
  std::unique_ptr<DeviceModel> Remove();
  DeviceModel* model() const { return model_.get(); }

  // True when the device has nothing to run and its simulated time has caught up with the
  // work it did; changed_event() fires when this or irq_o changes.
  bool Idle() const { return idle_; }
  const sc_core::sc_event& changed_event() const { return changed_; }
  // One device cycle: 1 / config.clock_mhz (1 ns while no model is inserted).
  sc_core::sc_time CyclePeriod() const { return period_; }
  // Why the model stopped, when it threw (an RTL bug the simulation caught, say): every access
  // then answers TLM_GENERIC_ERROR_RESPONSE until another model is inserted. Empty otherwise.
  const std::string& failure() const { return failure_; }

 private:
  void Run();
  void RegistersTransport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned RegistersDebug(tlm::tlm_generic_payload& trans);
  void MemoryTransport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned MemoryDebug(tlm::tlm_generic_payload& trans);
  bool MemoryDmi(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  void InvalidateDmi();
  void UpdateInterrupt();
  // The model's own bus cycles for the access just made, or `fixed` when it has none.
  std::uint64_t AccessCycles(std::uint64_t fixed);
  template <class F>
  bool Guarded(F&& call);
  void Fail();

  std::unique_ptr<DeviceModel> model_;
  sc_core::sc_time period_;
  sc_core::sc_event kick_;     // the host wrote a register: there may be work
  sc_core::sc_event changed_;  // idle_ or the interrupt line changed
  tlm_utils::tlm_quantumkeeper quantum_;
  bool idle_ = true;
  bool dmi_granted_ = false;
  bool failed_ = false;
  std::string failure_;
};

}  // namespace systole::systemc
