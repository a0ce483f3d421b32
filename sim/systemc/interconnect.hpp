// A TLM-2.0 interconnect with a link model: several devices (or anything with target sockets)
// on one address map, each region reached through a link of given latency and bandwidth.
//
//   initiators ──► upstream ─┬─ link 0 ─► downstream[0]  (device 0 registers)
//                            │          ► downstream[1]  (device 0 memory)
//                            └─ link 1 ─► downstream[2]  (device 1 registers) …
//
// The shape of a pod study: the host's PCIe lanes or a board-to-board network as links, the
// devices as targets. A link carries one transfer at a time: a transaction starts when both the
// initiator (its time plus annotated delay) and the link are free, occupies the link for
// bytes / bandwidth, and adds the link's latency each way. Concurrent initiators therefore share
// a link's bandwidth, while devices on separate links run in parallel.
//
// Address decoding: a transaction must lie inside one region; one that starts outside every
// region or runs past its region's end answers TLM_ADDRESS_ERROR_RESPONSE without reaching a
// target. transport_dbg is clipped to the region and returns the bytes moved; DMI grants are
// translated to the initiator's addresses (and clipped to the region, with the link's latency
// added), and a target's invalidation reaches every initiator in those addresses.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <vector>

namespace systole::systemc {

struct LinkModel {
  sc_core::sc_time latency = sc_core::sc_time(500, sc_core::SC_NS);  // each way
  double bytes_per_second = 8e9;                                      // 0: unlimited
};

class Interconnect : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Interconnect> upstream;       // initiators bind here
  tlm_utils::multi_passthrough_initiator_socket<Interconnect> downstream;  // to targets

  explicit Interconnect(const sc_core::sc_module_name& name);

  // Adds a link and returns its index.
  unsigned AddLink(const LinkModel& link);
  // Maps [base, base + size) to the target bound as downstream[port], through link `link`.
  // Regions must not overlap (throws std::invalid_argument otherwise).
  void Map(std::uint64_t base, std::uint64_t size, unsigned port, unsigned link);
  const LinkModel& link(unsigned index) const { return links_.at(index).model; }
  // Changes a link's model from now on (a what-if study between two runs).
  void SetLink(unsigned index, const LinkModel& link) { links_.at(index).model = link; }

 private:
  struct Region {
    std::uint64_t base;
    std::uint64_t size;
    unsigned port;
    unsigned link;
  };
  struct Link {
    LinkModel model;
    sc_core::sc_time free;  // when the link can start its next transfer
  };

  // The region holding [address, address + length), or nullptr.
  const Region* Decode(std::uint64_t address, std::uint64_t length) const;
  void Transport(int id, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned Debug(int id, tlm::tlm_generic_payload& trans);
  bool Dmi(int id, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  void Invalidate(int port, sc_dt::uint64 start, sc_dt::uint64 end);

  std::vector<Region> regions_;
  std::vector<Link> links_;
};

}  // namespace systole::systemc
