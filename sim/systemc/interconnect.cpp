// Address decoding, the link model and DMI translation (interconnect.hpp).
#include "sim/systemc/interconnect.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace systole::systemc {

using sc_core::sc_time;
using tlm::tlm_generic_payload;

Interconnect::Interconnect(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), upstream("upstream"), downstream("downstream") {
  upstream.register_b_transport(this, &Interconnect::Transport);
  upstream.register_transport_dbg(this, &Interconnect::Debug);
  upstream.register_get_direct_mem_ptr(this, &Interconnect::Dmi);
  downstream.register_invalidate_direct_mem_ptr(this, &Interconnect::Invalidate);
}

unsigned Interconnect::AddLink(const LinkModel& link) {
  links_.push_back(Link{link, sc_core::SC_ZERO_TIME});
  return static_cast<unsigned>(links_.size() - 1);
}

void Interconnect::Map(std::uint64_t base, std::uint64_t size, unsigned port, unsigned link) {
  if (size == 0 || base + size - 1 < base || link >= links_.size()) {
    throw std::invalid_argument("interconnect: an empty or wrapping region, or no such link");
  }
  for (const Region& region : regions_) {
    if (base <= region.base + region.size - 1 && region.base <= base + size - 1) {
      throw std::invalid_argument("interconnect: regions overlap");
    }
  }
  regions_.push_back(Region{base, size, port, link});
}

const Interconnect::Region* Interconnect::Decode(std::uint64_t address, std::uint64_t length) const {
  for (const Region& region : regions_) {
    if (address < region.base || address - region.base >= region.size) continue;
    const std::uint64_t offset = address - region.base;
    return length <= region.size - offset ? &region : nullptr;  // crossing the end: an error
  }
  return nullptr;
}

void Interconnect::Transport(int, tlm_generic_payload& trans, sc_time& delay) {
  const std::uint64_t address = trans.get_address();
  const Region* region = Decode(address, trans.get_data_length());
  if (region == nullptr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  Link& link = links_[region->link];
  // The request waits for the link, occupies it for the transfer, then crosses it.
  const sc_time now = sc_core::sc_time_stamp();
  const sc_time start = std::max(now + delay, link.free);
  const sc_time transfer =
      link.model.bytes_per_second > 0
          ? sc_time(static_cast<double>(trans.get_data_length()) / link.model.bytes_per_second, sc_core::SC_SEC)
          : sc_core::SC_ZERO_TIME;
  link.free = start + transfer;
  delay = start + transfer + link.model.latency - now;
  trans.set_address(address - region->base);
  downstream[static_cast<int>(region->port)]->b_transport(trans, delay);
  trans.set_address(address);
  delay += link.model.latency;  // the response crosses back
}

unsigned Interconnect::Debug(int, tlm_generic_payload& trans) {
  const std::uint64_t address = trans.get_address();
  const Region* region = Decode(address, 1);
  if (region == nullptr) return 0;
  const std::uint64_t offset = address - region->base;
  const unsigned length = trans.get_data_length();
  trans.set_data_length(static_cast<unsigned>(std::min<std::uint64_t>(length, region->size - offset)));
  trans.set_address(offset);
  const unsigned moved = downstream[static_cast<int>(region->port)]->transport_dbg(trans);
  trans.set_address(address);
  trans.set_data_length(length);
  return moved;
}

bool Interconnect::Dmi(int, tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  const std::uint64_t address = trans.get_address();
  const Region* region = Decode(address, 1);
  if (region == nullptr) return false;
  trans.set_address(address - region->base);
  const bool granted = downstream[static_cast<int>(region->port)]->get_direct_mem_ptr(trans, dmi);
  trans.set_address(address);
  // Back to the initiator's addresses, never beyond the region.
  const std::uint64_t last = region->size - 1;
  const std::uint64_t start = std::min<std::uint64_t>(dmi.get_start_address(), last);
  const std::uint64_t end = std::min<std::uint64_t>(dmi.get_end_address(), last);
  if (granted && dmi.get_dmi_ptr() != nullptr) {
    dmi.set_dmi_ptr(dmi.get_dmi_ptr() + (start - dmi.get_start_address()));
  }
  dmi.set_start_address(region->base + start);
  dmi.set_end_address(region->base + end);
  const sc_time latency = links_[region->link].model.latency * 2.0;
  dmi.set_read_latency(dmi.get_read_latency() + latency);
  dmi.set_write_latency(dmi.get_write_latency() + latency);
  return granted;
}

void Interconnect::Invalidate(int port, sc_dt::uint64 start, sc_dt::uint64 end) {
  for (const Region& region : regions_) {
    if (region.port != static_cast<unsigned>(port) || start > region.size - 1) continue;
    const std::uint64_t last = std::min<std::uint64_t>(end, region.size - 1);
    for (unsigned i = 0; i < upstream.size(); ++i) {
      upstream[static_cast<int>(i)]->invalidate_direct_mem_ptr(region.base + start, region.base + last);
    }
  }
}

}  // namespace systole::systemc
