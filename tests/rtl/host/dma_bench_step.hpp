// DmaBench::Step: one clock of both memories around the engine (included by dma_bench.hpp).
#pragma once

#include <algorithm>

namespace systole::rtl::test {

template <class Model>
void DmaBench<Model>::Step() {
  const std::uint64_t cycle = sim_.Cycle();
  const auto latency = [&] { return fast ? 1 : 1 + rng_() % (stall_pct / 5 + 1); };
  // ---- Inputs for this cycle --------------------------------------------------------------------
  sim_->m_arready = Chance();
  sim_->m_awready = Chance();
  const bool r_now = !reads_.empty() && Chance();
  sim_->m_rvalid = r_now;
  std::vector<std::uint8_t> beat(32, 0);
  bool r_fault = false;
  if (r_now) {
    const Burst& r = reads_.front();
    const std::uint64_t address = r.address + 32ull * r.sent;
    r_fault = HostFault(address);
    if (!r_fault) std::copy_n(host.begin() + (address - kHostBase), 32, beat.begin());
    SetSignalBytes(sim_->m_rdata, beat);
    sim_->m_rresp = r_fault ? 2 : 0;  // SLVERR
    sim_->m_rlast = r.sent + 1 == r.beats;
  }
  sim_->m_wready = !writes_.empty() && Chance();
  const bool b_now = !b_due_.empty() && b_due_.front() <= cycle && Chance();
  sim_->m_bvalid = b_now;
  sim_->m_bresp = b_now && b_error_.front() ? 3 : 0;  // DECERR
  sim_->dev_req_ready = Chance();
  const bool d_now = !device_rsp_.empty() && device_rsp_.front().due <= cycle;
  sim_->dev_rsp_valid = d_now;
  if (d_now) SetSignalBytes(sim_->dev_rsp_rdata, device_rsp_.front().word);
  sim_.Eval();

  // ---- Handshakes -----------------------------------------------------------------------------
  if (sim_->m_arvalid && sim_->m_arready) {
    CheckBurst(sim_->m_araddr, sim_->m_arlen + 1u, "read");
    reads_.push_back({sim_->m_araddr, sim_->m_arlen + 1u});
    max_reads_in_flight = std::max(max_reads_in_flight, reads_.size());
  }
  if (r_now && sim_->m_rready && ++reads_.front().sent == reads_.front().beats) reads_.pop_front();
  if (sim_->m_awvalid && sim_->m_awready) {
    CheckBurst(sim_->m_awaddr, sim_->m_awlen + 1u, "write");
    writes_.push_back({sim_->m_awaddr, sim_->m_awlen + 1u});
  }
  if (sim_->m_wvalid && sim_->m_wready) {
    Burst& w = writes_.front();
    const std::uint64_t address = w.address + 32ull * w.sent;
    const bool last = w.sent + 1 == w.beats;
    if ((sim_->m_wlast != 0) != last || sim_->m_wstrb == 0) {
      throw std::runtime_error(fmt::format("host_dma: cycle {}: W beat {} of {} at 0x{:x}: wlast "
                                           "{}, strobes {:08x}", cycle, w.sent, w.beats, address,
                                           sim_->m_wlast, sim_->m_wstrb));
    }
    if (HostFault(address)) {
      w.error = true;
    } else {
      for (unsigned b = 0; b < 32; ++b) {
        if ((sim_->m_wstrb >> b) & 1u) host[address - kHostBase + b] = SignalByte(sim_->m_wdata, b);
      }
    }
    if (++w.sent == w.beats) {
      b_due_.push_back(cycle + latency());
      b_error_.push_back(w.error);
      writes_.pop_front();
    }
  }
  if (b_now && sim_->m_bready) {
    b_due_.pop_front();
    b_error_.pop_front();
  }
  if (sim_->dev_req_valid && sim_->dev_req_ready) {
    const std::uint64_t address = sim_->dev_req_addr;
    const std::uint32_t strobes = sim_->dev_req_wstrb;
    if (address % 32 != 0 || address + 32 > device.size() || strobes == 0) {
      throw std::runtime_error(fmt::format("host_dma: cycle {}: device request at 0x{:x} with "
                                           "strobes {:08x}", cycle, address, strobes));
    }
    DeviceRsp rsp{cycle + latency(), std::vector<std::uint8_t>(32)};
    for (unsigned b = 0; b < 32; ++b) {
      if ((strobes >> b) & 1u) {
        ++device_strobe_bytes;
        if (sim_->dev_req_write) device[address + b] = SignalByte(sim_->dev_req_wdata, b);
      }
      rsp.word[b] = device[address + b];
    }
    if (!device_rsp_.empty()) rsp.due = std::max(rsp.due, device_rsp_.back().due);
    device_rsp_.push_back(std::move(rsp));
    max_device_in_flight = std::max(max_device_in_flight, device_rsp_.size());
  }
  sim_.Tick();
  if (d_now) device_rsp_.pop_front();
}

}  // namespace systole::rtl::test
