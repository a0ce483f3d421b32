// DramBus: the DRAM devices behind a Verilated HBM controller's command buses — one DramDevice
// per channel, attached to the packed `dram_*` pins of rtl/memory/hbm/systole_hbm_ctrl.sv
// (channel c in slice c of each bus).
//
// Drive it once per clock edge, around the harness's Tick(), after setting the other inputs:
//
//   bus.BeforeEdge(sim.dut(), sim.Cycle());  // present read data due now, take the commands
//   sim.Tick();
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/dram/dram_device.hpp"

namespace systole::dram {

// Bits [lsb, lsb + width) of a Verilated signal (integral up to 64 bits, VlWide beyond), width
// at most 64.
template <class Signal>
std::uint64_t GetBits(const Signal& signal, unsigned lsb, unsigned width) {
  std::uint64_t value = 0;
  if constexpr (std::is_integral_v<Signal>) {
    value = static_cast<std::uint64_t>(signal) >> lsb;
  } else {
    for (unsigned i = 0; i < width; ++i) {
      const unsigned bit = lsb + i;
      value |= std::uint64_t{(signal[bit / 32] >> (bit % 32)) & 1u} << i;
    }
  }
  return width >= 64 ? value : value & ((std::uint64_t{1} << width) - 1);
}

struct BusGeometry {
  unsigned channels = 1;
  unsigned bg_bits = 2, ba_bits = 2, row_bits = 5, col_bits = 5;
};

class DramBus {
 public:
  DramBus(const DramConfig& config, const BusGeometry& geometry) : geometry_(geometry) {
    for (unsigned c = 0; c < geometry.channels; ++c) {
      devices_.emplace_back(config, std::uint64_t{1} << geometry.row_bits, fmt::format("ch{}", c));
    }
  }

  template <class Model>
  void BeforeEdge(Model& m, std::uint64_t cycle) {
    m.dram_rvalid = 0;
    for (unsigned c = 0; c < devices_.size(); ++c) {
      if (const auto data = devices_[c].DataAt(cycle)) {
        m.dram_rvalid |= 1u << c;
        for (unsigned w = 0; w < kWordBytes / 4; ++w) {
          m.dram_rdata[c * 8 + w] = std::uint32_t{(*data)[4 * w]} |
                                    std::uint32_t{(*data)[4 * w + 1]} << 8 |
                                    std::uint32_t{(*data)[4 * w + 2]} << 16 |
                                    std::uint32_t{(*data)[4 * w + 3]} << 24;
        }
      }
    }
    m.eval();
    const BusGeometry& g = geometry_;
    for (unsigned c = 0; c < devices_.size(); ++c) {
      CommandWord word;
      word.command = static_cast<Command>(GetBits(m.dram_cmd, 3 * c, 3));
      if (word.command == Command::kNone) continue;
      word.bank_group = static_cast<std::uint32_t>(GetBits(m.dram_bg, g.bg_bits * c, g.bg_bits));
      word.bank = static_cast<std::uint32_t>(GetBits(m.dram_ba, g.ba_bits * c, g.ba_bits));
      word.row = static_cast<std::uint32_t>(GetBits(m.dram_row, g.row_bits * c, g.row_bits));
      word.column = static_cast<std::uint32_t>(GetBits(m.dram_col, g.col_bits * c, g.col_bits));
      word.wstrb = static_cast<std::uint32_t>(GetBits(m.dram_wstrb, 32 * c, 32));
      for (unsigned b = 0; b < kWordBytes; ++b) {
        word.wdata[b] = static_cast<std::uint8_t>(GetBits(m.dram_wdata, 256 * c + 8 * b, 8));
      }
      devices_[c].Issue(cycle, word);
    }
  }

  void Finish(std::uint64_t cycle) {
    for (auto& device : devices_) device.Finish(cycle);
  }
  std::size_t ViolationCount() const {
    std::size_t n = 0;
    for (const auto& device : devices_) n += device.Violations().size();
    return n;
  }
  std::string Report() const {
    std::string text;
    for (const auto& device : devices_) text += device.Report();
    return text;
  }
  DramStats TotalStats() const {
    DramStats total;
    for (const auto& device : devices_) {
      const DramStats& s = device.Stats();
      total.activates += s.activates;
      total.precharges += s.precharges;
      total.reads += s.reads;
      total.writes += s.writes;
      total.refreshes += s.refreshes;
    }
    return total;
  }
  const DramDevice& Device(unsigned channel) const { return devices_[channel]; }

 private:
  BusGeometry geometry_;
  std::vector<DramDevice> devices_;
};

}  // namespace systole::dram
