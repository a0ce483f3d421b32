// The golden model: a bit-exact, instruction-level model of one Systole device.
//
// It is the reference every other implementation (RTL, SystemC, FPGA) is compared against, and
// the in-process device behind the driver's `ref` link. The host side is the same as real
// hardware: 32-bit registers (arch/regs/regmap.hpp) and byte access to device memory. Launches
// queued with DOORBELL run when the host calls RunUntilIdle() — the model is synchronous, so
// "waiting for the device" means running it.
//
// Execution follows docs/ISA.md: the sequencer fetches, decodes and checks each instruction in
// program order, and executes it completely before the next one. A program whose units are
// ordered by tokens gets the same results as on the concurrent hardware; the analytic timing
// model (timing.hpp) estimates how long the concurrent hardware would take. docs/MODEL.md
// describes the whole model.
//
// The implementation is split by unit: registers.cpp (host interface), sequencer.cpp (fetch,
// checks, dispatch), dma.cpp (LOAD, STORE, LOAD_WEIGHTS), mxu.cpp (MATMUL), vector_unit.cpp
// (ACTIVATE, VECTOR, POOL), timing.cpp (cycle estimate).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/isa/isa.hpp"
#include "arch/regs/host_registers.hpp"
#include "arch/regs/regmap.hpp"
#include "sim/model/device_memory.hpp"
#include "sim/timing/perf_counters.hpp"
#include "sim/timing/timing.hpp"

namespace systole::model {

// What one launch did.
struct LaunchResult {
  regs::ErrorCode error = regs::ErrorCode::kNone;
  std::uint64_t fault_pc = 0;       // device address of the faulting instruction (if error)
  std::uint64_t retired = 0;        // instructions that completed, HALT included
  std::string message;              // why it faulted, for people; empty on success
  bool Ok() const { return error == regs::ErrorCode::kNone; }
};

// One R x C weight tile, row-major: element (t, j) multiplies input element t and contributes
// to output column j. It is kept in the form the MXU kernels read, widened once when the tile is
// loaded: int8 values as int32, bf16 values as (flushed) fp32, which represents them exactly.
struct WeightTile {
  std::uint32_t rows = 0;  // R
  std::uint32_t cols = 0;  // C
  std::vector<std::int32_t> int8_values;  // int8 configurations
  std::vector<float> bf16_values;         // bf16 configurations

  std::int32_t Int8(std::uint32_t t, std::uint32_t j) const { return int8_values[t * cols + j]; }
  // The element as bf16 bits (subnormals already flushed to signed zero).
  std::uint16_t Bf16(std::uint32_t t, std::uint32_t j) const;
};

// What one MATMUL hands the matrix unit (docs/ISA.md): `rows` unified-buffer rows from `ub`
// (`ub_row_bytes` apart), K, the stationary tile, and the accumulator rows it writes — or adds
// to, with `accumulate` — C 32-bit elements each (fp32 bits or int32) from `acc`.
struct MatmulOperands {
  const std::uint8_t* ub;
  std::size_t ub_row_bytes;
  std::uint64_t rows;
  std::uint32_t k;
  bool accumulate;
  const WeightTile& tile;
  std::uint32_t* acc;
};

// Another model of the array's arithmetic in place of the golden model's own kernels (the HLS
// MXU kernel behind the SystemC platform's `hls` model, sim/systemc/hls_device_model.cpp). It
// must compute docs/NUMERICS.md's definition bit for bit; everything else about the MATMUL
// (checks, the weight FIFO, counters, timing) stays the model's.
using MatmulKernel = std::function<void(const MatmulOperands&)>;

class GoldenModel {
 public:
  explicit GoldenModel(const Config& config);
  // With other constants for the cycle estimate (tests, what-if studies).
  GoldenModel(const Config& config, const TimingParameters& timing);

  const Config& config() const { return config_; }

  // ---- Host link -------------------------------------------------------------------------
  // Offsets come from regs::kRegisters. An offset that names no register throws
  // std::out_of_range. Writes to read-only registers are ignored, reads of write-only ones
  // return 0, as on the hardware.
  std::uint32_t ReadRegister(std::uint32_t offset);
  void WriteRegister(std::uint32_t offset, std::uint32_t value);
  // Throw std::out_of_range naming the address and length if any byte is outside device
  // memory (nothing is transferred then). Both count towards PERF_BYTES_HOST.
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes);
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes);
  // Runs queued launches in order until the queue is empty or one stops on an error.
  void RunUntilIdle();
  // The same, but pauses between two instructions once `deadline` has passed (at least one
  // instruction runs per call): returns false then, with the launch still BUSY, and the next
  // call resumes it. A host that waits with a timeout (the `ref` link, a device server) needs
  // this to keep a long launch from holding its thread; CTRL.ABORT stops a paused launch.
  bool RunUntil(std::chrono::steady_clock::time_point deadline);
  bool InterruptLine() const { return registers_.InterruptLine(); }
  // True when RunUntil has nothing to do: no launch running, none queued (or an error stops the
  // queue). A virtual platform (sim/systemc/) steps the model only while this is false.
  bool Idle() const {
    return !launch_.active && (command_queue_.empty() || registers_.error() != regs::ErrorCode::kNone);
  }
  // The cycle estimate of everything run so far: every finished launch's PERF_CYCLES plus the
  // running launch's progress. It only grows (clearing the counters does not reset it), so a
  // platform that steps the model turns its differences into simulated time.
  std::uint64_t CyclesRun() const {
    return cycles_run_ + (launch_.active ? timing_.LaunchCycles() : 0);
  }
  // Records every launch's instruction spans and stalls, as the cycle estimate schedules them,
  // into `timeline` (nullptr: stop). The timeline must outlive the recording.
  void Record(trace::Timeline* timeline) { timing_.Record(timeline); }

  // Replaces the matrix unit's arithmetic (an empty kernel: the model's own again).
  void SetMatmulKernel(MatmulKernel kernel) { matmul_kernel_ = std::move(kernel); }

  // ---- Direct execution (tests, tools) -----------------------------------------------------
  // Runs one launch of `count` instructions at `pc` now, bypassing the command queue (and
  // STATUS.ERROR), with every other effect of a launch: registers, counters, interrupts.
  LaunchResult Execute(std::uint64_t pc, std::uint32_t count);
  // The message of the last fault ("pc 0x100: load: rows 10..20 are outside ..."), or empty.
  const std::string& LastErrorMessage() const { return last_error_message_; }

  // ---- State, read-only, for tests ---------------------------------------------------------
  const DeviceMemory& Memory() const { return memory_; }
  // Device memory without the host link's bookkeeping (PERF_BYTES_HOST): a virtual platform's
  // debug transport and direct memory interface (sim/systemc/).
  DeviceMemory& UncountedMemory() { return memory_; }
  std::uint64_t UbRows() const { return ub_rows_; }
  std::uint64_t AccRows() const { return acc_rows_; }
  // One unified-buffer row as raw little-endian bytes (UbRowBytes() of them).
  std::span<const std::uint8_t> UbRow(std::uint64_t row) const;
  std::int8_t UbInt8(std::uint64_t row, std::uint32_t element) const;
  std::uint16_t UbBf16(std::uint64_t row, std::uint32_t element) const;
  // One accumulator row: C 32-bit elements (int32 or fp32 bits).
  std::span<const std::uint32_t> AccRow(std::uint64_t row) const;
  // The stationary tile of the last launch, or nullptr when no tile is (or was) stationary.
  const WeightTile* StationaryTile() const;
  std::size_t WeightFifoOccupancy() const { return launch_.weight_fifo.size(); }
  // A 64-bit performance counter by its register name without PERF_ and _LO ("MACS").
  std::uint64_t Counter(std::string_view name) const;

 private:
  // A faulting instruction's error and explanation.
  struct Fault {
    regs::ErrorCode code;
    std::string message;
  };
  // State that exists only during a launch (docs/ISA.md: "At the start of every launch the
  // token counters are zero, the weight FIFO is empty and no tile is stationary").
  struct LaunchState {
    // Outstanding tokens per (producer, consumer) unit pair.
    std::array<std::array<std::uint32_t, isa::kNumUnits>, isa::kNumUnits> tokens{};
    std::deque<WeightTile> weight_fifo;
    std::optional<WeightTile> stationary;
    // Where a launch that RunUntil paused stands: it resumes at instruction `next`.
    bool active = false;
    std::uint64_t pc = 0;
    std::uint32_t count = 0;
    std::uint64_t next = 0;
    LaunchResult result;
  };
  using QueuedLaunch = regs::Launch;

  // registers.cpp: the model as regs::HostRegisters' owner, and its identity registers.
  class RegisterOwner;
  std::uint32_t IdentityRegister(std::uint32_t offset) const;
  void SoftReset();
  // sequencer.cpp: Execute in steps. StepLaunch runs one instruction of the active launch and
  // returns true when the launch has ended (HALT or a fault).
  void BeginLaunch(std::uint64_t pc, std::uint32_t count);
  bool StepLaunch();
  void RaiseError(regs::ErrorCode code, std::uint64_t pc, std::string message);

  // sequencer.cpp
  std::optional<Fault> Check(const isa::Instruction& insn) const;
  std::optional<Fault> CheckFlowControl(const isa::Instruction& insn) const;
  void Dispatch(const isa::Instruction& insn);

  // dma.cpp
  std::optional<Fault> CheckDma(const isa::Instruction& insn) const;
  std::optional<Fault> CheckLoadWeights(const isa::Instruction& insn) const;
  void ExecuteLoad(const isa::Instruction& insn);
  void ExecuteStore(const isa::Instruction& insn);
  void ExecuteLoadWeights(const isa::Instruction& insn);

  // mxu.cpp
  std::optional<Fault> CheckMatmul(const isa::Instruction& insn) const;
  void ExecuteMatmul(const isa::Instruction& insn);

  // vector_unit.cpp
  std::optional<Fault> CheckActivate(const isa::Instruction& insn) const;
  std::optional<Fault> CheckVector(const isa::Instruction& insn) const;
  std::optional<Fault> CheckPool(const isa::Instruction& insn) const;
  void ExecuteActivate(const isa::Instruction& insn);
  void ExecuteVector(const isa::Instruction& insn);
  void ExecutePool(const isa::Instruction& insn);
  // reduce.cpp
  std::optional<Fault> CheckReduce(const isa::Instruction& insn) const;
  void ExecuteReduce(const isa::Instruction& insn);
  // accvec.cpp
  std::optional<Fault> CheckAccVec(const isa::Instruction& insn) const;
  void ExecuteAccVec(const isa::Instruction& insn);

  std::uint8_t* UbRowData(std::uint64_t row) { return ub_.data() + row * ub_row_bytes_; }
  const std::uint8_t* UbRowData(std::uint64_t row) const {
    return ub_.data() + row * ub_row_bytes_;
  }
  std::uint32_t* AccRowData(std::uint64_t row) { return acc_.data() + row * config_.cols; }
  std::uint64_t& Count(Perf counter) { return At(registers_.counters(), counter); }

  Config config_;
  bool is_bf16_;
  std::uint32_t element_bytes_;  // E: 1 (int8) or 2 (bf16)
  std::uint32_t ub_row_elems_;   // W = max(R, C)
  std::uint32_t ub_row_bytes_;
  std::uint64_t ub_rows_;
  std::uint64_t acc_rows_;

  DeviceMemory memory_;
  std::vector<std::uint8_t> ub_;    // ub_rows_ x ub_row_bytes_
  std::vector<std::uint32_t> acc_;  // acc_rows_ x C
  LaunchState launch_;
  TimingModel timing_;

  // Registers: their state and rules are regs::HostRegisters' (arch/regs/host_registers.hpp);
  // the command queue and whether a launch runs are the model's.
  regs::HostRegisters registers_;
  std::deque<QueuedLaunch> command_queue_;
  bool busy_ = false;
  std::uint64_t cycles_run_ = 0;  // CyclesRun() of the finished launches
  std::string last_error_message_;

  MatmulKernel matmul_kernel_;  // empty: MatmulRowsBf16 / MatmulRowsInt8 (mxu.cpp)

  // Scratch rows reused by the kernels so that no instruction allocates.
  std::vector<float> scratch_f32_;
  std::vector<float> scratch_psum_;
  std::vector<std::uint8_t> scratch_bytes_;
};

}  // namespace systole::model
