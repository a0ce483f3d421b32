#include "toolchain/codegen/program_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/timing/timing.hpp"

namespace systole::codegen {

using isa::Field;
using isa::Opcode;

namespace {

constexpr std::uint64_t kTensorAlignment = 64;

std::uint64_t AlignUp(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

unsigned UnitOf(Opcode opcode) {
  const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(opcode));
  if (spec == nullptr) throw std::logic_error("codegen: unknown opcode");
  return static_cast<unsigned>(spec->unit);
}

bool Overlaps(std::uint64_t b1, std::uint64_t e1, std::uint64_t b2, std::uint64_t e2) {
  return b1 < e2 && b2 < e1;
}

}  // namespace

std::uint64_t Tensor::Elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) n *= d;
  return n;
}

ProgramBuilder::ProgramBuilder(Config config) : config_(std::move(config)) {
  program_.config = config_.name;
  for (auto& row : last_signaller_) row.fill(-1);
}

std::uint64_t ProgramBuilder::Allocate(std::uint64_t bytes) {
  const std::uint64_t address = next_free_;
  next_free_ = AlignUp(next_free_ + std::max<std::uint64_t>(bytes, 1), kTensorAlignment);
  if (next_free_ > config_.memory_bytes) {
    throw std::invalid_argument(fmt::format(
        "codegen: tensors need more than the {} bytes of device memory", config_.memory_bytes));
  }
  return address;
}

Tensor ProgramBuilder::AddInput(const std::string& name, DataType dtype,
                                std::vector<std::uint64_t> shape) {
  Tensor t{0, std::move(shape), dtype};
  t.address = Allocate(t.Bytes());
  program_.inputs.push_back({name, t.address, dtype, t.shape});
  return t;
}

Tensor ProgramBuilder::AddOutput(const std::string& name, DataType dtype,
                                 std::vector<std::uint64_t> shape) {
  Tensor t{0, std::move(shape), dtype};
  t.address = Allocate(t.Bytes());
  program_.outputs.push_back({name, t.address, dtype, t.shape});
  return t;
}

Tensor ProgramBuilder::AddConstant(const std::string& name, DataType dtype,
                                   std::vector<std::uint64_t> shape,
                                   std::vector<std::uint8_t> bytes) {
  Tensor t{0, std::move(shape), dtype};
  if (bytes.empty()) bytes.assign(t.Bytes(), 0);
  if (bytes.size() != t.Bytes()) {
    throw std::invalid_argument(fmt::format("codegen: constant {} has {} bytes, its shape needs {}",
                                            name, bytes.size(), t.Bytes()));
  }
  t.address = Allocate(t.Bytes());
  program_.data.push_back({name, t.address, dtype, std::move(bytes)});
  return t;
}

Tensor ProgramBuilder::AddScratch(DataType dtype, std::vector<std::uint64_t> shape) {
  Tensor t{0, std::move(shape), dtype};
  t.address = Allocate(t.Bytes());
  return t;
}

Tensor ProgramBuilder::FillRow(std::uint16_t bits) {
  for (const auto& [value, tensor] : fill_rows_) {
    if (value == bits) return tensor;
  }
  const std::uint32_t width = UbRowElems();
  std::vector<std::uint8_t> bytes;
  for (std::uint32_t i = 0; i < width; ++i) {
    bytes.push_back(static_cast<std::uint8_t>(bits));
    if (IsBf16()) bytes.push_back(static_cast<std::uint8_t>(bits >> 8));
  }
  Tensor t = AddConstant(fmt::format("fill_{:04x}", bits), ElementType(), {width},
                         std::move(bytes));
  fill_rows_.emplace_back(bits, t);
  return t;
}

void ProgramBuilder::BeginKernel(std::string name) {
  kernels_.emplace_back(instructions_.size(), std::move(name));
}

// Finds, per unit, the latest earlier instruction this access conflicts with, then records the
// access. A record is one exact range; a write removes the records it covers (whoever later
// conflicts with them conflicts with this write, which waited for them), and so does a read of
// a range that only this unit has read.
void ProgramBuilder::Track(std::int64_t index, unsigned unit, std::span<const Access> accesses,
                           std::array<std::int64_t, isa::kNumUnits>& needs) {
  for (const Access& access : accesses) {
    if (access.end <= access.begin) throw std::logic_error("codegen: empty access range");
    for (const Record& r : records_) {
      if (r.space != access.space || !Overlaps(r.begin, r.end, access.begin, access.end)) continue;
      if (r.writer >= 0) {
        auto& need = needs[units_[static_cast<std::size_t>(r.writer)]];
        need = std::max(need, r.writer);
      }
      if (access.write) {
        for (unsigned u = 0; u < isa::kNumUnits; ++u) needs[u] = std::max(needs[u], r.readers[u]);
      }
    }
  }
  for (const Access& access : accesses) {
    bool found = false;
    for (Record& r : records_) {
      if (r.space != access.space || r.begin != access.begin || r.end != access.end) continue;
      found = true;
      if (access.write) {
        r.writer = index;
        r.readers.fill(-1);
      } else {
        r.readers[unit] = index;
      }
    }
    std::erase_if(records_, [&](const Record& r) {
      if (r.space != access.space) return false;
      if (r.begin == access.begin && r.end == access.end) return false;
      if (access.begin > r.begin || access.end < r.end) return false;  // not covered
      if (access.write) return true;
      if (r.writer >= 0) return false;
      for (unsigned u = 0; u < isa::kNumUnits; ++u) {
        if (u != unit && r.readers[u] >= 0) return false;
      }
      return true;
    });
    if (!found) {
      Record r{access.space, access.begin, access.end};
      if (access.write) {
        r.writer = index;
      } else {
        r.readers[unit] = index;
      }
      records_.push_back(r);
    }
  }
}

void ProgramBuilder::Emit(isa::Instruction insn, std::span<const Access> accesses) {
  if (finished_) throw std::logic_error("codegen: Emit after Finish");
  const unsigned unit = UnitOf(insn.opcode);
  if (insn.opcode == Opcode::kLoadWeights) {
    if (fifo_pushes_ - fifo_pops_ >= config_.weight_fifo_tiles) {
      throw std::logic_error("codegen: load_weights would overfill the weight FIFO");
    }
    ++fifo_pushes_;
  }
  if (insn.opcode == Opcode::kMatmul) {
    if (insn[Field::kPop] != 0) {
      if (fifo_pops_ >= fifo_pushes_) throw std::logic_error("codegen: matmul pops an empty FIFO");
      ++fifo_pops_;
      stationary_ = true;
    } else if (!stationary_) {
      throw std::logic_error("codegen: matmul without a stationary tile");
    }
  }
  isa::Word word;
  if (auto error = isa::Encode(insn, word)) {
    throw std::logic_error("codegen: " + error->message);
  }

  const auto index = static_cast<std::int64_t>(instructions_.size());
  std::array<std::int64_t, isa::kNumUnits> needs;
  needs.fill(-1);
  units_.push_back(static_cast<std::uint8_t>(unit));
  Track(index, unit, accesses, needs);
  for (unsigned producer = 0; producer < isa::kNumUnits; ++producer) {
    std::int64_t need = needs[producer];
    if (producer == unit || need < 0 || last_signaller_[producer][unit] >= need) continue;
    // Every earlier waiter on this pair comes before this one and every earlier signaller
    // before `need`, so the most tokens outstanding on the new one's span is at its signal:
    // the earlier tokens whose waits come after it, plus itself.
    const auto open_at = [&](std::int64_t signaller) {
      const auto& waits = waiters_[producer][unit];
      return static_cast<std::uint64_t>(
          waits.end() - std::upper_bound(waits.begin(), waits.end(), signaller));
    };
    // Past half the capacity, signal from the producer unit's latest instruction instead: it
    // completes after `need`, and every later consumer of anything up to it needs no token.
    if (2 * (open_at(need) + 1) > config_.token_capacity) need = latest_on_unit_[producer];
    if (open_at(need) + 1 > config_.token_capacity) {
      throw std::logic_error("codegen: dependency tokens would exceed token_capacity");
    }
    instructions_[static_cast<std::size_t>(need)].signal |= static_cast<std::uint8_t>(1u << unit);
    insn.wait |= static_cast<std::uint8_t>(1u << producer);
    last_signaller_[producer][unit] = need;
    waiters_[producer][unit].push_back(index);
  }
  latest_on_unit_[unit] = index;
  instructions_.push_back(insn);
}

image::Program ProgramBuilder::Finish() {
  if (finished_) throw std::logic_error("codegen: Finish called twice");
  instructions_.push_back(isa::MakeInstruction(Opcode::kHalt, {}));
  units_.push_back(static_cast<std::uint8_t>(isa::Unit::kSequencer));
  finished_ = true;
  program_.text_address = AlignUp(next_free_, isa::kInstructionBytes);
  program_.words.reserve(instructions_.size());
  for (const isa::Instruction& insn : instructions_) {
    program_.words.push_back(isa::EncodeOrThrow(insn));
  }
  if (program_.text_address + program_.TextBytes() > config_.memory_bytes) {
    throw std::invalid_argument("codegen: the program does not fit in device memory");
  }
  ComputeEstimates();
  return std::move(program_);
}

// Replays the golden model's timing model (the same code, so the static estimate and the
// model's PERF counters agree by construction) and attributes cycles to kernels by where each
// kernel's last instruction completes.
void ProgramBuilder::ComputeEstimates() {
  model::TimingModel timing(config_);
  timing.StartLaunch(program_.text_address);
  model::PerfCounters perf{};
  for (const isa::Instruction& insn : instructions_) timing.Schedule(insn, perf);
  timing.EndLaunch(perf);  // the final schedule: the DMAs sharing the memory
  const std::vector<model::TimingModel::InstructionTiming>& timed = timing.LaunchInstructions();
  std::vector<std::pair<std::size_t, std::string>> spans = kernels_;
  if (spans.empty() || spans.front().first != 0) spans.insert(spans.begin(), {0, "prologue"});
  CycleEstimate total{"program"};
  std::uint64_t previous_end = 0;
  for (std::size_t k = 0; k < spans.size(); ++k) {
    const std::size_t begin = spans[k].first;
    const std::size_t end = k + 1 < spans.size() ? spans[k + 1].first : instructions_.size();
    CycleEstimate e{spans[k].second};
    std::uint64_t launch_end = previous_end;
    for (std::size_t i = begin; i < end; ++i) {
      const isa::Instruction& insn = instructions_[i];
      const model::PerfCounters& added = timed[i].perf;
      launch_end = timed[i].launch_end;
      e.mxu_busy += added[static_cast<unsigned>(model::Perf::kMxuBusy)];
      const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(insn.opcode));
      if (spec != nullptr && spec->unit != isa::Unit::kSequencer) {
        const auto delta = [&](model::Perf counter) { return added[static_cast<unsigned>(counter)]; };
        for (CycleEstimate* target : {&e, &total}) {
          CycleEstimate::UnitStalls& u = target->units[static_cast<unsigned>(spec->unit)];
          ++u.instructions;
          u.dispatch += delta(model::Perf::kStallDispatch);
          u.token += delta(model::Perf::kStallToken);
          u.memory += delta(model::Perf::kStallMemory);
          u.wfifo += delta(model::Perf::kStallWfifo);
        }
      }
      if (insn.opcode == Opcode::kMatmul) e.macs += insn[Field::kRows] * insn[Field::kK] * C();
    }
    e.instructions = end - begin;
    e.cycles = launch_end - previous_end;
    previous_end = launch_end;
    total.macs += e.macs;
    if (e.instructions > 0) estimates_.push_back(e);
  }
  total.cycles = timing.LaunchCycles();
  total.mxu_busy = model::At(perf, model::Perf::kMxuBusy);
  total.instructions = instructions_.size();
  estimates_.push_back(total);
}

isa::Instruction LoadInsn(isa::MemSpace mem, std::uint64_t dram, std::uint64_t stride,
                          std::uint64_t row, std::uint64_t col, std::uint64_t rows,
                          std::uint64_t elems) {
  return isa::MakeInstruction(Opcode::kLoad, {{Field::kMem, static_cast<std::uint64_t>(mem)},
                                              {Field::kDram, dram},
                                              {Field::kStride, stride},
                                              {Field::kRow, row},
                                              {Field::kCol, col},
                                              {Field::kRows, rows},
                                              {Field::kElems, elems}});
}

isa::Instruction StoreInsn(isa::MemSpace mem, std::uint64_t dram, std::uint64_t stride,
                           std::uint64_t row, std::uint64_t col, std::uint64_t rows,
                           std::uint64_t elems) {
  isa::Instruction insn = LoadInsn(mem, dram, stride, row, col, rows, elems);
  insn.opcode = Opcode::kStore;
  return insn;
}

isa::Instruction LoadWeightsInsn(std::uint64_t dram, std::uint64_t stride, std::uint64_t rows,
                                 std::uint64_t cols) {
  return isa::MakeInstruction(Opcode::kLoadWeights, {{Field::kDram, dram},
                                                     {Field::kStride, stride},
                                                     {Field::kRows, rows},
                                                     {Field::kCols, cols}});
}

isa::Instruction MatmulInsn(std::uint64_t ub, std::uint64_t acc, std::uint64_t rows,
                            std::uint64_t k, bool pop, bool accumulate) {
  return isa::MakeInstruction(Opcode::kMatmul, {{Field::kUb, ub},
                                                {Field::kAcc, acc},
                                                {Field::kRows, rows},
                                                {Field::kK, k},
                                                {Field::kPop, pop ? 1u : 0u},
                                                {Field::kAccumulate, accumulate ? 1u : 0u}});
}

}  // namespace systole::codegen
