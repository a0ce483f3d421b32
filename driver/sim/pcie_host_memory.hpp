// The host side of pcie+sim: host memory as the DMA engine sees it through a root complex.
//
// IovaSpace stands for the IOMMU: DMA buffers (ordinary C++ memory, "pinned") are mapped at
// page-aligned I/O virtual addresses, first fit from kBase (above 4 GiB, so the engine's high
// address half is used); an access that is not wholly inside one mapping faults, as an IOMMU
// would refuse it. AxiHostMemory is the AXI4 slave in front of it, driven once per clock around
// the harness's Tick (the order of sim/rtl/memory_port.hpp): reads and writes are accepted at
// once and answered after `latency` cycles, in order; a faulting beat reads zeros or writes
// nothing and makes its response SLVERR.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "sim/rtl/signals.hpp"
#include "systole/pcie_transport.hpp"

namespace systole::host {

class IovaSpace {
 public:
  static constexpr std::uint64_t kBase = 0x1'0000'0000ull;

  std::uint64_t Map(std::span<std::uint8_t> bytes) {
    const std::uint64_t iova = iovas_.Allocate(bytes.size());
    maps_.emplace(iova, bytes);
    return iova;
  }
  void Unmap(std::uint64_t iova) {
    maps_.erase(iova);
    iovas_.Free(iova);
  }
  // The host bytes behind [iova, iova + bytes), or nullptr when they are not in one mapping.
  std::uint8_t* Find(std::uint64_t iova, std::size_t bytes) {
    auto it = maps_.upper_bound(iova);
    if (it == maps_.begin()) return nullptr;
    --it;
    const std::uint64_t offset = iova - it->first;
    if (offset + bytes > it->second.size()) return nullptr;
    return it->second.data() + offset;
  }

 private:
  pcie::IovaAllocator iovas_{kBase};
  std::map<std::uint64_t, std::span<std::uint8_t>> maps_;
};

// A DMA buffer of pcie+sim: its memory, mapped in the IOVA space while it lives.
class SimDmaBuffer final : public pcie::DmaBuffer {
 public:
  SimDmaBuffer(std::shared_ptr<IovaSpace> space, std::size_t bytes)
      : space_(std::move(space)), bytes_(bytes), iova_(space_->Map(bytes_)) {}
  ~SimDmaBuffer() override { space_->Unmap(iova_); }
  std::span<std::uint8_t> Bytes() override { return bytes_; }
  std::uint64_t BusAddress() const override { return iova_; }

 private:
  std::shared_ptr<IovaSpace> space_;
  std::vector<std::uint8_t> bytes_;
  std::uint64_t iova_;
};

class AxiHostMemory {
 public:
  AxiHostMemory(std::shared_ptr<IovaSpace> space, unsigned latency)
      : space_(std::move(space)), latency_(latency) {}

  // Before the model is evaluated: this cycle's inputs.
  template <class Model>
  void Drive(Model& m, std::uint64_t cycle) {
    m.m_arready = 1;
    m.m_awready = 1;
    m.m_wready = !writes_.empty();
    r_now_ = !reads_.empty() && reads_.front().due <= cycle;
    m.m_rvalid = r_now_;
    m.m_rlast = 0;
    m.m_rresp = 0;
    if (r_now_) {
      Burst& r = reads_.front();
      std::array<std::uint8_t, 32> beat{};
      const std::uint8_t* from = space_->Find(r.address + 32ull * r.done, 32);
      if (from != nullptr) std::copy_n(from, 32, beat.begin());
      rtl::SetSignalBytes(m.m_rdata, beat);
      m.m_rresp = from == nullptr ? 2 : 0;
      m.m_rlast = r.done + 1 == r.beats;
      faults_ += from == nullptr;
    }
    b_now_ = !b_.empty() && b_.front().due <= cycle;
    m.m_bvalid = b_now_;
    m.m_bresp = b_now_ && b_.front().error ? 2 : 0;
  }

  // After evaluation, before the clock edge: the handshakes of this cycle.
  template <class Model>
  void Sample(Model& m, std::uint64_t cycle) {
    if (m.m_arvalid && m.m_arready) {
      reads_.push_back({m.m_araddr, m.m_arlen + 1u, 0, cycle + latency_, false});
    }
    if (r_now_ && m.m_rready && ++reads_.front().done == reads_.front().beats) reads_.pop_front();
    if (m.m_awvalid && m.m_awready) writes_.push_back({m.m_awaddr, m.m_awlen + 1u, 0, 0, false});
    if (m.m_wvalid && m.m_wready) {
      Burst& w = writes_.front();
      std::uint8_t* to = space_->Find(w.address + 32ull * w.done, 32);
      if (to == nullptr) {
        w.error = true;
        ++faults_;
      } else {
        const std::uint32_t strobes = m.m_wstrb;
        for (unsigned b = 0; b < 32; ++b) {
          if ((strobes >> b) & 1u) to[b] = rtl::SignalByte(m.m_wdata, b);
        }
      }
      if (++w.done == w.beats) {
        if (!m.m_wlast) throw std::logic_error("pcie+sim: WLAST missing at the end of a burst");
        b_.push_back({0, 0, 0, cycle + latency_, w.error});
        writes_.pop_front();
      }
    }
    if (b_now_ && m.m_bready) b_.pop_front();
  }

  bool Idle() const { return reads_.empty() && writes_.empty() && b_.empty(); }
  std::uint64_t Faults() const { return faults_; }

 private:
  struct Burst {
    std::uint64_t address;
    unsigned beats, done;
    std::uint64_t due;
    bool error;
  };
  std::shared_ptr<IovaSpace> space_;
  unsigned latency_;
  std::deque<Burst> reads_, writes_, b_;
  bool r_now_ = false, b_now_ = false;
  std::uint64_t faults_ = 0;
};

}  // namespace systole::host
