// The end of a launch: its DMA streams and instruction fetches replayed together through one
// MemoryTimingModel, and the launch rescheduled with what that gives (TimingParameters::
// shared_memory). The first estimate (TimingModel::Schedule) prices each DMA on an idle memory;
// on the RTL the streams interleave request by request at the core's arbiter, close each
// other's rows in shared banks and wait for each other's responses in the reorder buffer. The
// replay needs each stream's start, which depends on the others' ends, so the two alternate
// until the starts stop moving (docs/MODEL.md, "How close").
#include <algorithm>

#include "sim/timing/timing.hpp"

namespace systole::model {
namespace {

// The arbiter port of each DMA unit (REQ_* of rtl/systole_core.sv); the fetch is port 0.
unsigned ArbiterPort(unsigned unit) {
  switch (static_cast<isa::Unit>(unit)) {
    case isa::Unit::kLoad: return 1;
    case isa::Unit::kWeight: return 2;
    default: return 3;  // STORE
  }
}

}  // namespace

void TimingModel::ShareMemory() {
  std::vector<MemoryStream> streams;
  streams.reserve(fetch_requests_.size() + issued_dmas_.size());
  for (std::size_t n = 0; n < fetch_requests_.size(); ++n) {
    streams.push_back({0, fetch_requests_[n], {{false, launch_pc_ + n * isa::kInstructionBytes}}, 0});
  }
  for (const IssuedDma& dma : issued_dmas_) {
    streams.push_back({ArbiterPort(dma.unit), dma.start,
                       MemoryTimingModel::DmaAccesses(dma.address, dma.stride, dma.rows, dma.row_bytes, dma.write),
                       dma.credits});
  }
  const std::array<std::uint64_t, 1> open{launch_pc_ - launch_pc_ % 32};
  const std::vector<MemoryStreamTiming> timing = memory_.RunStreams(streams, open);
  fetch_delay_.resize(fetch_requests_.size());
  for (std::size_t n = 0; n < fetch_requests_.size(); ++n) {
    fetch_delay_[n] = timing[n].first_response + fetch_response_to_word_ - fetch_requests_[n];
  }
  shared_.clear();
  for (std::size_t i = 0; i < issued_dmas_.size(); ++i) {
    const IssuedDma& dma = issued_dmas_[i];
    const MemoryStreamTiming& t = timing[fetch_requests_.size() + i];
    shared_[dma.index] = {t.last_response + 1 - dma.start, t.last_accept + 2 - dma.start};
  }
}

void TimingModel::Reschedule(PerfCounters& perf) {
  ResetSchedule();
  for (std::size_t i = 0; i < launch_insns_.size(); ++i) ScheduleOne(launch_insns_[i], i, perf);
}

void TimingModel::EndLaunch(PerfCounters& perf) {
  if (!Deferred() || launch_insns_.empty()) return;
  // What the memory replay depends on: when each DMA and each fetch asked.
  const auto starts = [this] {
    std::vector<Cycle> at(fetch_requests_);
    for (const IssuedDma& dma : issued_dmas_) at.push_back(dma.start);
    return at;
  };
  std::vector<Cycle> previous = starts();
  PerfCounters shared{};
  for (unsigned round = 0; round < std::max(1u, parameters_.shared_memory_rounds); ++round) {
    ShareMemory();
    shared = {};
    Reschedule(shared);
    std::vector<Cycle> now = starts();
    if (now == previous) break;
    previous = std::move(now);
  }
  for (unsigned c = 0; c < kNumPerfCounters; ++c) perf[c] = perf[c] - first_estimate_[c] + shared[c];
  first_estimate_ = shared;
  if (timeline_ != nullptr) {
    recording_ = timeline_;
    recording_->LaunchStarted(0);
    PerfCounters again{};
    Reschedule(again);
    recording_ = nullptr;
  }
}

}  // namespace systole::model
