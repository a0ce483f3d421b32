// The host side of the Verilated SoC at pin level, one rising edge at a time
// (RtlDevice::ClockEdge): what a bus master drives into the register bus and the host port, and
// what the SoC drives back. RtlDevice's register and memory methods run these handshakes inside
// one call (device_sim.hpp); a master clocked from outside (the SystemC bridge,
// sim/systemc/clocked_soc.hpp) drives them itself, one edge per clock cycle.
//
// The protocol (rtl/control/systole_regs.sv, rtl/systole_core.sv):
//  * register bus: reg_valid for one edge; a write takes effect at that edge; a read answers
//    with reg_rvalid and reg_rdata (both registered) at a later edge, always ready.
//  * host port: a 32-byte word request (host_req_*) is accepted at an edge where host_req_ready
//    is high; one response per request (reads and writes alike) comes back in order on
//    host_rsp_valid / host_rsp_rdata.
#pragma once

#include <array>
#include <cstdint>

namespace systole::rtl {

// Bytes in one host-port word.
inline constexpr unsigned kHostWordBytes = 32;

// The host's inputs, held for one rising edge.
struct HostPinsIn {
  bool reg_valid = false;
  bool reg_write = false;
  std::uint32_t reg_addr = 0;
  std::uint32_t reg_wdata = 0;
  bool host_req_valid = false;
  bool host_req_write = false;
  std::uint64_t host_req_addr = 0;   // a multiple of kHostWordBytes
  std::uint32_t host_req_wstrb = 0;  // bit b enables byte b (reads: the bytes wanted)
  std::array<std::uint8_t, kHostWordBytes> host_req_wdata{};
};

// The SoC's outputs as that rising edge sampled them (after the inputs above settled), and the
// interrupt line as the edge left it.
struct HostPinsOut {
  bool reg_rvalid = false;
  std::uint32_t reg_rdata = 0;
  bool host_req_ready = false;  // with host_req_valid: the request was accepted at this edge
  bool host_rsp_valid = false;
  std::array<std::uint8_t, kHostWordBytes> host_rsp_rdata{};
  bool irq_after_edge = false;
};

}  // namespace systole::rtl
