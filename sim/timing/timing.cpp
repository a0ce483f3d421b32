#include "sim/timing/timing.hpp"

#include <algorithm>
#include <array>

namespace systole::model {

using isa::Field;
using isa::Opcode;

TimingModel::TimingModel(const Config& config, TimingParameters parameters)
    : config_(config), parameters_(parameters), memory_(config) {
  // Adding the size of one row of every bank of every channel to an address moves each access
  // to the next row of the same bank (docs/MEMORY.md, "Addresses") as long as the channel
  // interleave lies below the row bits — so the timing repeats with that period.
  const std::uint64_t period = std::uint64_t{config.memory_channels} * config.dram.bank_groups *
                               config.dram.banks_per_group * config.dram.row_bytes;
  const std::uint64_t row_span = period / config.memory_channels;
  dram_period_ = config.interleave_bytes <= row_span ? period : 0;
}

DmaTime TimingModel::Dma(std::uint64_t address, std::uint64_t stride, std::uint64_t rows,
                         std::uint64_t row_bytes, bool write) {
  if (rows == 0 || row_bytes == 0) return {};
  if (parameters_.memory == TimingParameters::Memory::kFixed) {
    return {parameters_.memory_latency, DmaBeats(rows, row_bytes)};
  }
  const std::uint64_t key_address = dram_period_ != 0 ? address % dram_period_ : address;
  const auto key = std::tuple{key_address, stride, rows, row_bytes, write};
  if (const auto it = dma_cache_.find(key); it != dma_cache_.end()) return it->second;
  // At most dram_max_accesses words (whole rows, at least one) are simulated.
  const std::uint64_t words_per_row = row_bytes / 32 + 2;  // an upper bound, any alignment
  const std::uint64_t simulated =
      std::clamp<std::uint64_t>(parameters_.dram_max_accesses / words_per_row, 1, rows);
  const MemoryTimingResult result = memory_.Run(
      MemoryTimingModel::DmaAccesses(key_address, stride, simulated, row_bytes, write));
  // Response of the first access at `latency`, of the last at `cycles`; one more cycle to take
  // it. A truncated stream continues at the rate it had.
  DmaTime time{result.latencies.front(), result.cycles - result.latencies.front() + 1};
  if (simulated < rows) time.stream = (time.stream * rows + simulated - 1) / simulated;
  dma_cache_.emplace(key, time);
  return time;
}

void TimingModel::StartLaunch() {
  sequencer_ = 0;
  launch_end_ = 0;
  memory_free_ = 0;
  unit_free_ = {};
  for (auto& starts : recent_starts_) starts.clear();
  for (auto& row : tokens_) {
    for (auto& queue : row) queue.clear();
  }
  tile_loaded_.clear();
  tile_popped_.clear();
  if (timeline_ != nullptr) timeline_->LaunchStarted(0);
}

std::uint64_t TimingModel::DmaBeats(std::uint64_t rows, std::uint64_t row_bytes) const {
  const std::uint64_t beats_per_row = (row_bytes + parameters_.beat_bytes - 1) / parameters_.beat_bytes;
  const std::uint64_t channels = config_.memory_channels;
  return (rows * beats_per_row + channels - 1) / channels;
}

// The sequencer dispatches one instruction per cycle, and waits while the unit's queue is
// full, i.e. until the instruction `unit_queue_depth` places earlier on that unit has started.
TimingModel::Cycle TimingModel::Dispatch(unsigned unit, PerfCounters& perf) {
  Cycle at = sequencer_;
  const auto& starts = recent_starts_[unit];
  if (starts.size() >= parameters_.unit_queue_depth) at = std::max(at, starts.front());
  At(perf, Perf::kStallDispatch) += at - sequencer_;
  RecordStall(trace::kSequencerTrack, trace::StallCause::kDispatch, sequencer_, at);
  sequencer_ = at + 1;
  return at;
}

// Tokens are consumed oldest first; the checks guarantee that each awaited token exists.
TimingModel::Cycle TimingModel::TakeTokens(const isa::Instruction& insn, unsigned unit) {
  Cycle ready = 0;
  for (unsigned producer = 0; producer < isa::kNumUnits; ++producer) {
    if ((insn.wait >> producer & 1u) == 0) continue;
    auto& queue = tokens_[producer][unit];
    if (queue.empty()) continue;
    ready = std::max(ready, queue.front());
    queue.pop_front();
  }
  return ready;
}

void TimingModel::SendTokens(const isa::Instruction& insn, unsigned unit, Cycle complete) {
  for (unsigned consumer = 0; consumer < isa::kNumUnits; ++consumer) {
    if ((insn.signal >> consumer & 1u) != 0) tokens_[unit][consumer].push_back(complete);
  }
}

void TimingModel::Finish(unsigned unit, Cycle start, Cycle unit_free, Cycle complete) {
  unit_free_[unit] = unit_free;
  auto& starts = recent_starts_[unit];
  starts.push_back(start);
  while (starts.size() > parameters_.unit_queue_depth) starts.pop_front();
  launch_end_ = std::max(launch_end_, complete);
}

// A DMA waits its latency, then its stream shares device memory with the other DMA units (first
// come, first served in program order). Everything but its own stream is memory stall.
TimingModel::Cycle TimingModel::Transfer(unsigned unit, Cycle start, DmaTime time,
                                         PerfCounters& perf) {
  const Cycle begin = std::max(start + time.latency, memory_free_);
  memory_free_ = begin + time.stream;
  At(perf, Perf::kStallMemory) += begin - start;
  RecordStall(unit, trace::StallCause::kMemory, start, begin);
  return begin + time.stream;
}

void TimingModel::Schedule(const isa::Instruction& insn, PerfCounters& perf) {
  const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(insn.opcode));
  if (spec == nullptr) return;
  if (spec->unit == isa::Unit::kSequencer) {
    // SYNC and HALT wait for every earlier instruction; INTERRUPT takes one cycle.
    sequencer_ += 1;
    if (insn.opcode != Opcode::kInterrupt) sequencer_ = std::max(sequencer_, launch_end_);
    launch_end_ = std::max(launch_end_, sequencer_);
    return;
  }
  const auto unit = static_cast<unsigned>(spec->unit);
  const Cycle dispatched = Dispatch(unit, perf);
  const Cycle base = std::max(dispatched, unit_free_[unit]);
  Cycle start = std::max(base, TakeTokens(insn, unit));
  At(perf, Perf::kStallToken) += start - base;
  RecordStall(unit, trace::StallCause::kToken, base, start);

  const std::uint64_t element_bytes = ElementBytes(config_.dtype);
  Cycle unit_free = 0, complete = 0;
  switch (insn.opcode) {
    case Opcode::kLoad:
    case Opcode::kStore: {
      const std::uint64_t size = insn[Field::kMem] == 0 ? element_bytes : kAccumulatorElementBytes;
      complete = Transfer(unit, start,
                          Dma(insn[Field::kDram], insn[Field::kStride], insn[Field::kRows],
                              insn[Field::kElems] * size, insn.opcode == Opcode::kStore),
                          perf);
      unit_free = complete;
      break;
    }
    case Opcode::kLoadWeights: {
      // FIFO space: tile n needs tile n - depth to have left the FIFO (been popped).
      const std::size_t index = tile_loaded_.size();
      if (index >= config_.weight_fifo_tiles) {
        const std::size_t freed_by = index - config_.weight_fifo_tiles;
        if (freed_by < tile_popped_.size()) start = std::max(start, tile_popped_[freed_by]);
      }
      // The unit's in-order queue: tile n is taken once tile n - depth is done.
      if (index >= parameters_.weight_queue_depth) {
        start = std::max(start, tile_loaded_[index - parameters_.weight_queue_depth]);
      }
      const DmaTime time = Dma(insn[Field::kDram], insn[Field::kStride], insn[Field::kRows],
                               insn[Field::kCols] * element_bytes, false);
      complete = Transfer(unit, start, time, perf);
      // Tiles overlap: the unit takes the next LOAD_WEIGHTS once this one's requests are issued
      // (its data's arrival less the round trip), plus the one idle cycle between tiles of the
      // RTL (rtl/dma/systole_dma_weights.sv), not when its data has arrived.
      unit_free = complete - time.latency + 1;
      tile_loaded_.push_back(complete);
      break;
    }
    case Opcode::kMatmul: {
      if (insn[Field::kPop] != 0) {
        // The next tile shifts into the array's shadow buffer (R cycles) once it has arrived
        // and the previous swap has freed the shadow buffer.
        const std::size_t index = tile_popped_.size();
        Cycle ready = index < tile_loaded_.size() ? tile_loaded_[index] : start;
        if (index > 0) ready = std::max(ready, tile_popped_[index - 1]);
        ready += config_.rows;
        if (ready > start) {
          At(perf, Perf::kStallWfifo) += ready - start;
          RecordStall(unit, trace::StallCause::kWeightFifo, start, ready);
          start = ready;
        }
        tile_popped_.push_back(start);
      }
      // One input row enters per cycle; results leave R + C cycles later (skew fill and drain),
      // overlapping the next MATMUL's stream.
      const std::uint64_t rows = insn[Field::kRows];
      At(perf, Perf::kMxuBusy) += rows;
      unit_free = start + rows;
      complete = unit_free + config_.rows + config_.cols;
      break;
    }
    case Opcode::kActivate:
      unit_free = complete = start + insn[Field::kRows];  // one row per cycle
      break;
    case Opcode::kVector: {
      // One row per cycle, or with math= the function's micro-program per row (the cycles
      // rtl_vector_math_test prints for rtl/vector/systole_vector_math_rom.sv) plus its reads.
      static constexpr std::array<std::uint64_t, isa::kNumVecMath> kMathRowCycles = {
          1, 27 + 4, 19 + 4, 17 + 4, 50 + 4, 46 + 4, 53 + 4, 74 + 4};
      unit_free = complete = start + insn[Field::kRows] * kMathRowCycles.at(insn[Field::kMath]);
      break;
    }
    case Opcode::kReduce:
      // over=elems: one element per cycle and the row's read and write; over=rows: one row read
      // per cycle, as POOL.
      unit_free = complete =
          start + (insn[Field::kOver] == 0 ? insn[Field::kRows] * (insn[Field::kElems] + 4)
                                           : insn[Field::kRows] + 4);
      break;
    case Opcode::kPool:
      // One window pixel per cycle (a whole row of channels at a time).
      unit_free = complete = start + insn[Field::kOutH] * insn[Field::kOutW] *
                                         insn[Field::kWinH] * insn[Field::kWinW];
      break;
    default:
      unit_free = complete = start + 1;
      break;
  }
  Finish(unit, start, unit_free, complete);
  SendTokens(insn, unit, complete);
  if (timeline_ != nullptr) timeline_->UnitInstruction(unit, start, complete);
}

}  // namespace systole::model
