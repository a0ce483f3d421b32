#include "tests/rtl/host/bridge_bench.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "sim/rtl/signals.hpp"

namespace systole::rtl::test {

BridgeBench::BridgeBench(std::uint64_t seed, const std::filesystem::path& trace)
    : sim_("usb_bridge", {.trace_path = trace, .seed = seed}), rng_(seed) {
  sim_->rx_valid = 0;
  sim_->rx_data = 0;
  sim_->tx_ready = 0;
  sim_->reg_rvalid = 0;
  sim_->reg_rdata = 0;
  sim_->irq = 0;
  sim_->host_req_ready = 0;
  sim_->host_rsp_valid = 0;
  for (unsigned i = 0; i < 8; ++i) sim_->host_rsp_rdata[i] = 0;
  sim_.Reset(4);
}

void BridgeBench::Step() {
  const std::uint64_t cycle = sim_.Cycle();
  sim_->irq = irq;
  // Responses whose time has come are presented for exactly this cycle.
  const bool reg_now = !reg_rsp_.empty() && reg_rsp_.front().due <= cycle;
  sim_->reg_rvalid = reg_now;
  sim_->reg_rdata = reg_now ? reg_rsp_.front().data : 0;
  const bool mem_now = !mem_rsp_.empty() && mem_rsp_.front().due <= cycle;
  sim_->host_rsp_valid = mem_now;
  if (mem_now) SetSignalBytes(sim_->host_rsp_rdata, mem_rsp_.front().word);
  sim_->host_req_ready = rng_() % 4 != 0;
  sim_.Eval();

  if (sim_->reg_valid) {
    const std::uint32_t index = sim_->reg_addr / 4;
    if (sim_->reg_write) {
      registers.at(index) = sim_->reg_wdata;
    } else {
      reg_rsp_.push_back({cycle + 1 + rng_() % 3, true, registers.at(index), {}});
    }
  }
  if (sim_->host_req_valid && sim_->host_req_ready) {
    const std::uint64_t address = sim_->host_req_addr;
    const std::uint32_t strobes = sim_->host_req_wstrb;
    if (address % 32 != 0 || address + 32 > memory.size() || strobes == 0) {
      throw std::runtime_error(fmt::format("usb_bridge: cycle {}: host request at 0x{:x} with "
                                           "strobes {:08x}", cycle, address, strobes));
    }
    Pending rsp{cycle + 1 + rng_() % 6, !sim_->host_req_write, 0, std::vector<std::uint8_t>(32)};
    for (unsigned b = 0; b < 32; ++b) {
      if ((strobes >> b) & 1u) {
        ++host_bytes;
        if (sim_->host_req_write) memory[address + b] = SignalByte(sim_->host_req_wdata, b);
      }
      rsp.word[b] = memory[address + b];
    }
    if (!mem_rsp_.empty()) rsp.due = std::max(rsp.due, mem_rsp_.back().due);
    mem_rsp_.push_back(rsp);
  }
  if (sim_->tx_valid && sim_->tx_ready) tx_.push_back(sim_->tx_data);

  sim_.Tick();
  if (reg_now) reg_rsp_.pop_front();
  if (mem_now) mem_rsp_.pop_front();
}

std::vector<std::uint8_t> BridgeBench::Burst(std::span<const std::uint8_t> bytes) {
  tx_.clear();
  std::uint64_t guard = 0;
  for (std::size_t i = 0; i < bytes.size();) {
    // Gaps of up to a quarter of the timeout: a slow host, never a stalled one.
    const bool offer = full_speed || rng_() % 4 != 0;
    sim_->rx_valid = offer;
    sim_->rx_data = bytes[i];
    sim_->tx_ready = full_speed || rng_() % 3 != 0;
    sim_.Eval();
    const bool taken = offer && sim_->rx_ready;
    Step();
    if (taken) ++i;
    if (++guard > 100000 + 64 * bytes.size()) {
      throw std::runtime_error(fmt::format("usb_bridge: cycle {}: stopped taking bytes at {} of {}",
                                           sim_.Cycle(), i, bytes.size()));
    }
  }
  sim_->rx_valid = 0;
  std::uint64_t quiet = 0;
  while (quiet < kBenchRxTimeout + 4) {
    sim_->tx_ready = full_speed || rng_() % 3 != 0;
    sim_.Eval();
    quiet = sim_->rx_ready && !sim_->tx_valid ? quiet + 1 : 0;
    Step();
    if (++guard > 1000000) {
      throw std::runtime_error(fmt::format("usb_bridge: cycle {}: no pause after the burst",
                                           sim_.Cycle()));
    }
  }
  return tx_;
}

}  // namespace systole::rtl::test
