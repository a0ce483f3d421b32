// ProgramBuilder: the bottom layer of the code generator. Kernels (gemm.hpp, conv.hpp, ...)
// describe instructions and the on-chip and device-memory ranges each one touches; the builder
// turns that into a legal Systole program:
//
//  * device memory: inputs, outputs, constants (data segments) and scratch tensors are placed
//    from address 0 upward; the instructions go after them when the program is finished;
//  * dependencies: every instruction declares its accesses (UB rows, accumulator rows, device
//    tensors). The builder finds the latest conflicting instruction on every other unit
//    (read-after-write, write-after-read, write-after-write) and connects the two with one
//    dependency token, setting the signal bit on the producer retroactively. A producer is
//    only signalled when a consumer needs it and every token is consumed by the instruction
//    that asked for it, so no wait can underflow. In program order a token is outstanding from
//    its signaller to its waiter; when a consumer sits far behind its producer (prefetches)
//    and more than half of token_capacity would be outstanding, the signal moves to the producer
//    unit's latest instruction, which completes later and so still orders the pair.
//    Instructions of one unit need no tokens: a unit runs and completes its instructions in
//    order (docs/ISA.md);
//  * the weight FIFO rules are checked as instructions are emitted, as are field ranges
//    (isa::Encode), so a kernel bug throws here instead of faulting on the device.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/image/program.hpp"
#include "arch/isa/isa.hpp"

namespace systole::codegen {

using image::DataType;

// A tensor in device memory: row-major, densely packed.
struct Tensor {
  std::uint64_t address = 0;
  std::vector<std::uint64_t> shape;
  DataType dtype = DataType::kInt8;

  std::uint64_t Elements() const;
  std::uint64_t ElementBytes() const { return image::DataTypeBytes(dtype); }
  std::uint64_t Bytes() const { return Elements() * ElementBytes(); }
  std::uint64_t Dim(std::size_t i) const { return shape.at(i); }
};

// Where an instruction reads or writes: rows [begin, end) of the UB or the accumulators, or
// bytes [begin, end) of device memory (kernels pass a whole tensor's extent).
enum class Space : std::uint8_t { kUb, kAcc, kDram };
struct Access {
  Space space;
  std::uint64_t begin, end;
  bool write;
};
inline Access ReadOf(const Tensor& t) { return {Space::kDram, t.address, t.address + t.Bytes(), false}; }
inline Access WriteOf(const Tensor& t) { return {Space::kDram, t.address, t.address + t.Bytes(), true}; }

// Cycles and MXU work of a span of instructions, from replaying the golden model's analytic
// timing model (sim/timing/timing.hpp) over them.
struct CycleEstimate {
  std::string name;
  std::uint64_t cycles = 0;     // from the end of the previous span to the end of this one
  std::uint64_t mxu_busy = 0;   // cycles the MXU streamed rows
  std::uint64_t macs = 0;       // useful multiply-accumulates (rows x k x C per MATMUL)
  std::uint64_t instructions = 0;
  // Where the cycles go, per unit (isa::Unit: load, weight, mxu, vector, store): instructions
  // and the golden model's stall counters charged to them (docs/MODEL.md "Timing model"):
  // dispatch = the sequencer waited for that unit's full queue, token = the instruction waited
  // for another unit, memory = a DMA's latency and its wait for device memory, wfifo = a MATMUL
  // waited for its weight tile. The schedule tests print it; see docs/CODEGEN.md "The schedule".
  struct UnitStalls {
    std::uint64_t instructions = 0, dispatch = 0, token = 0, memory = 0, wfifo = 0;
  };
  std::array<UnitStalls, isa::kNumUnits> units{};
  double MxuUtilization() const { return cycles == 0 ? 0.0 : double(mxu_busy) / double(cycles); }
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(Config config);

  const Config& config() const { return config_; }
  bool IsBf16() const { return config_.dtype == DType::kBf16; }
  DataType ElementType() const { return IsBf16() ? DataType::kBf16 : DataType::kInt8; }
  DataType AccumulatorType() const { return IsBf16() ? DataType::kFp32 : DataType::kInt32; }
  std::uint32_t R() const { return config_.rows; }
  std::uint32_t C() const { return config_.cols; }
  std::uint32_t UbRowElems() const { return config_.UbRowElems(); }
  std::uint64_t UbRows() const { return config_.UbRows(); }
  std::uint64_t AccRows() const { return config_.AccRows(); }

  // ---- device memory --------------------------------------------------------------------
  Tensor AddInput(const std::string& name, DataType dtype, std::vector<std::uint64_t> shape);
  Tensor AddOutput(const std::string& name, DataType dtype, std::vector<std::uint64_t> shape);
  // A data segment with these bytes (zeros when `bytes` is empty).
  Tensor AddConstant(const std::string& name, DataType dtype, std::vector<std::uint64_t> shape,
                     std::vector<std::uint8_t> bytes = {});
  // Device memory for an intermediate: not initialised, not part of the program's image.
  Tensor AddScratch(DataType dtype, std::vector<std::uint64_t> shape);
  // One UB row's worth of elements all equal to `bits` (element bits), shared by every kernel:
  // LOAD it with stride 0 to fill rows (zero padding, -inf padding for max pooling).
  Tensor FillRow(std::uint16_t bits);

  // ---- instructions ---------------------------------------------------------------------
  // Appends `insn` after adding the tokens its accesses need. Throws std::logic_error for an
  // instruction that does not encode or breaks a weight-FIFO rule.
  void Emit(isa::Instruction insn, std::span<const Access> accesses);
  void Emit(isa::Instruction insn, std::initializer_list<Access> accesses) {
    Emit(std::move(insn), std::span<const Access>(accesses.begin(), accesses.size()));
  }
  std::size_t InstructionCount() const { return instructions_.size(); }
  std::size_t WeightTilesQueued() const { return fifo_pushes_ - fifo_pops_; }

  // Names the instructions emitted from now on (for per-kernel cycle estimates).
  void BeginKernel(std::string name);

  // Appends HALT, encodes, places the instructions after the data. The builder is spent.
  image::Program Finish();
  // Per kernel (in BeginKernel order) and, last, the whole program. Valid after Finish().
  const std::vector<CycleEstimate>& Estimates() const { return estimates_; }

 private:
  struct Record {
    Space space;
    std::uint64_t begin, end;
    std::int64_t writer = -1;                      // latest writing instruction
    std::array<std::int64_t, isa::kNumUnits> readers{-1, -1, -1, -1, -1};  // latest per unit
  };
  std::uint64_t Allocate(std::uint64_t bytes);
  void Track(std::int64_t index, unsigned unit, std::span<const Access> accesses,
             std::array<std::int64_t, isa::kNumUnits>& needs);
  void ComputeEstimates();

  Config config_;
  image::Program program_;
  std::uint64_t next_free_ = 0;
  std::vector<std::pair<std::uint16_t, Tensor>> fill_rows_;
  std::vector<isa::Instruction> instructions_;
  std::vector<std::uint8_t> units_;
  std::vector<Record> records_;
  // last_signaller_[p][c]: the latest instruction on p whose token c has consumed.
  std::array<std::array<std::int64_t, isa::kNumUnits>, isa::kNumUnits> last_signaller_{};
  // waiters_[p][c]: every instruction that waited on p -> c, in program order.
  std::array<std::array<std::vector<std::int64_t>, isa::kNumUnits>, isa::kNumUnits> waiters_;
  std::array<std::int64_t, isa::kNumUnits> latest_on_unit_{-1, -1, -1, -1, -1};
  std::size_t fifo_pushes_ = 0, fifo_pops_ = 0;
  bool stationary_ = false;
  std::vector<std::pair<std::size_t, std::string>> kernels_;  // first instruction, name
  std::vector<CycleEstimate> estimates_;
  bool finished_ = false;
};

// Instruction helpers: fields by name, no tokens (the builder adds them).
isa::Instruction LoadInsn(isa::MemSpace mem, std::uint64_t dram, std::uint64_t stride,
                          std::uint64_t row, std::uint64_t col, std::uint64_t rows,
                          std::uint64_t elems);
isa::Instruction StoreInsn(isa::MemSpace mem, std::uint64_t dram, std::uint64_t stride,
                           std::uint64_t row, std::uint64_t col, std::uint64_t rows,
                           std::uint64_t elems);
isa::Instruction LoadWeightsInsn(std::uint64_t dram, std::uint64_t stride, std::uint64_t rows,
                                 std::uint64_t cols);
isa::Instruction MatmulInsn(std::uint64_t ub, std::uint64_t acc, std::uint64_t rows,
                            std::uint64_t k, bool pop, bool accumulate);

}  // namespace systole::codegen
