// The golden model's cycle estimate: a small analytic model of the concurrent hardware.
//
// The model executes instructions one at a time, but the hardware runs its five units
// concurrently, ordered only by dependency tokens, the weight FIFO and SYNC/HALT. This class
// replays that schedule: each unit has its own timeline, and an instruction starts when its
// unit is free, it has been dispatched, the tokens it waits for have arrived and (for MATMUL
// with pop) its weight tile is in the array. Durations are simple formulas of the instruction's
// size. The result fills PERF_CYCLES, PERF_MXU_BUSY and the PERF_STALL_* counters.
//
// It is an ESTIMATE, not a cycle-accurate model: it exists so that programs can be compared and
// so that the compiler can tune schedules. Its reference is the RTL's own CYCLES counter: the
// sequencer, tokens, MXU and vector unit follow the RTL's pipelines (TimingParameters names
// each), and tests/compiler/rtl_timing_test.cpp measures how close the whole estimate comes.
// The formulas and constants are explained in docs/MODEL.md ("Timing model", "How close");
// change both together.
// A DMA's duration comes from MemoryTimingModel (memory_timing.hpp: the HBM controller's policy
// against the [dram] timing, docs/MEMORY.md) unless TimingParameters::memory says kFixed.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/isa/isa.hpp"
#include "sim/timing/memory_timing.hpp"
#include "sim/timing/perf_counters.hpp"
#include "sim/trace/timeline.hpp"

namespace systole::model {

struct TimingParameters {
  // How a DMA's memory time is estimated:
  //  kDram  — MemoryTimingModel replays the DMA's 32-byte accesses on an idle controller and
  //           DRAM (row misses, bank groups, refresh of the [dram] section): the first
  //           response's latency, then the rest of the stream;
  //  kFixed — `memory_latency`, then one beat per `beat_bytes` per channel (the formula used
  //           before the DRAM model; kept for hand-worked schedules and extreme latencies).
  enum class Memory { kDram, kFixed };
  Memory memory = Memory::kDram;
  // kDram: at the end of a launch, simulate it again cycle by cycle with its DMA streams and
  // instruction fetches sharing one memory model (SharedMemory: the arbiter interleaving them
  // request by request, rows shared in banks, responses in request order). Off: each DMA's
  // time on an idle memory, streams overlapping first come, first served (the first estimate
  // every launch gets while it runs).
  bool shared_memory = true;
  // shared_memory: the DMA units' own pipelines around the memory's. LOAD and LOAD_WEIGHTS
  // request their first word `read_issue` cycles after accepting the instruction (the unit
  // registers it, the row reader takes the job: rtl/dma/systole_row_reader.sv) and are done
  // `read_done` cycles after the memory's last response (response FIFO, row assembler, buffer
  // write, the done register); STORE writes its first word `store_issue` cycles after
  // accepting (it reads the buffer row first) and is done `store_done` cycles after the last
  // acknowledgement. Measured on the RTL: a lone
  // one-row LOAD, a weight tile and one- and 64-row STOREs take the RTL's cycles exactly.
  std::uint64_t read_issue = 2;
  std::uint64_t read_done = 3;
  std::uint64_t store_issue = 3;
  std::uint64_t store_done = 1;
  // The sequencer, as rtl/control/systole_sequencer.sv builds it (the RTL's own parameters):
  // instructions waiting in a unit's command queue (dispatched, not yet accepted) before
  // dispatch stalls on it — UNIT_QDEPTH;
  std::uint64_t unit_queue_depth = 4;
  // instruction words fetched or requested ahead of dispatch — FETCH_DEPTH of systole_seq_fetch;
  std::uint64_t fetch_depth = 4;
  // cycles per instruction of the dispatch state machine (S_NEXT, S_DECODE, S_OPERANDS, S_ISSUE);
  std::uint64_t dispatch_cycles = 4;
  // cycles a fetch takes beyond the DRAM's CAS latency (t_cl of the configuration): the
  // arbiter, the controller's queue and reorder buffer, the fetch buffer. The program was the
  // host's last write, so its DRAM row is open when the launch starts. Measured on the RTL:
  // the first instruction is accepted 27 cycles after the launch on tiny and small (24 before
  // the sequencer was split into fetch, queues and checks).
  std::uint64_t fetch_overhead = 7;
  // cycles from a unit's `done` to a waiting unit accepting its next instruction: the signal
  // is sent, counted, and the consumer's queue head takes it (systole_seq_unit_queue).
  std::uint64_t token_latency = 2;
  // MATMUL: cycles from accepting the instruction to issuing its first unified-buffer row, and
  // from the last row's results leaving the array to `done` (rtl/mxu/systole_mxu.sv's pipeline).
  std::uint64_t mxu_issue_latency = 2;
  std::uint64_t mxu_done_latency = 1;
  // ACTIVATE, VECTOR, POOL, REDUCE: cycles from the last read to `done` (the lanes' pipeline,
  // the output slot's write; rtl/vector/systole_vector_unit.sv).
  std::uint64_t vector_pipeline = 6;
  // LOAD_WEIGHTS the WEIGHT unit holds at once (issued, not all rows pushed): its queue depth,
  // QUEUE of rtl/dma/systole_dma_weights.sv.
  std::uint64_t weight_queue_depth = 2;
  // Cycles a LOAD's or LOAD_WEIGHTS' credit comes back later than the cycle after the word's
  // response (MemoryStream::credit_delay): the row reader counts a word until it leaves its
  // response FIFO, and the count is a register. It matters where the credits, not the DRAM,
  // pace a stream. Measured on the RTL (small, 40 LOADs of N one-word rows, each after the
  // last): N = 1 and 16 take 51 and 76 cycles whatever the delay (no credit waits); N = 17,
  // 32, 64, 125 take 99, 132, 176, 266 on the RTL against 97, 130, 171, 256 with no delay
  // and exactly the RTL's with 2. The controller alone (hbm_tb, a requester offering again
  // the cycle after a response) matches the model with no delay
  // (HbmPerfTest.TimingModelFollowsCreditBoundStreams).
  std::uint64_t credit_return = 2;
  // kFixed: cycles from a DMA's start to its first data beat (device-memory latency).
  std::uint64_t memory_latency = 64;
  // kFixed: bytes one device-memory channel moves per cycle; each DMA row is whole beats.
  std::uint64_t beat_bytes = 32;
  // kDram: longer DMAs are simulated for this many accesses (whole rows) and extrapolated at
  // that rate; 2^16 words span ~16 refresh intervals, so the rate includes refresh.
  std::uint64_t dram_max_accesses = 1 << 16;
};

// A DMA's memory time: `latency` cycles to its first data, then `stream` cycles during which
// it occupies device memory.
struct DmaTime {
  std::uint64_t latency = 0;
  std::uint64_t stream = 0;
};

class TimingModel {
 public:
  explicit TimingModel(const Config& config, TimingParameters parameters = {});

  // Every launch starts at cycle 0 with idle units; its program at `pc` (its first words'
  // DRAM row is open: the host wrote them last).
  void StartLaunch(std::uint64_t pc = 0);
  // Schedules one checked instruction, in program order, and adds its stall and MXU-busy
  // cycles to `perf`: a first estimate, each DMA on an idle memory.
  void Schedule(const isa::Instruction& insn, PerfCounters& perf);
  // The launch ended (HALT or a fault): with shared_memory, reschedules it with its DMAs and
  // fetches sharing the memory (TimingParameters) and corrects `perf`, LaunchCycles() and the
  // per-instruction figures to that schedule; records the launch into the timeline.
  void EndLaunch(PerfCounters& perf);
  // Records each scheduled instruction's span and stalls into `timeline` (nullptr: stop). With
  // shared_memory the launch is recorded by EndLaunch, once its schedule is final.
  void Record(trace::Timeline* timeline) { timeline_ = timeline; }
  // Cycles the launch has taken so far: when its last instruction completed.
  std::uint64_t LaunchCycles() const { return launch_end_; }

  // Each instruction of the launch, in program order: when it completed, the launch's end so
  // far, and what it added to the counters (final after EndLaunch).
  struct InstructionTiming {
    std::uint64_t complete = 0;
    std::uint64_t launch_end = 0;
    PerfCounters perf{};
  };
  const std::vector<InstructionTiming>& LaunchInstructions() const { return instructions_; }

  // Duration formulas, public so that tests and docs can quote them.
  // ACCVEC on free accumulator ports (rtl/vector/systole_vector_accvec.sv): cycles from the
  // edge that accepts it to its done pulse. Per row a read of a and a read of b (none for scalar
  // or sqrt); where rows overlap (AccVecRowsOverlap) that is all a row costs but the last, which
  // adds the data's arrival, the operation and the write; otherwise each row adds them (the
  // operation 1 cycle, 29 for div and sqrt).
  static std::uint64_t AccVecCycles(const isa::Instruction& insn);
  // Whether the RTL overlaps the rows of this ACCVEC: not div or sqrt, and no row in flight
  // writes a row a later row reads.
  static bool AccVecRowsOverlap(const isa::Instruction& insn);
  std::uint64_t DmaBeats(std::uint64_t rows, std::uint64_t row_bytes) const;
  // The memory time of a DMA of `rows` rows of `row_bytes` bytes, `stride` apart from `address`
  // (per TimingParameters::memory).
  // `credits`: the unit's limit on words in flight (0: only the controller's reorder buffer),
  // each back `credit_delay` cycles late (MemoryStream::credit_delay).
  DmaTime Dma(std::uint64_t address, std::uint64_t stride, std::uint64_t rows,
              std::uint64_t row_bytes, bool write, std::uint64_t credits = 0,
              std::uint64_t credit_delay = 0);

 private:
  using Cycle = std::uint64_t;
  static constexpr unsigned kSequencer = isa::kNumUnits;

  void ScheduleOne(const isa::Instruction& insn, PerfCounters& perf);
  // The first estimate's state back to cycle 0 with idle units.
  void ResetSchedule();
  // The launch simulated with its DMA streams and fetches sharing the memory (shared_memory.cpp):
  // fills instructions_, launch_end_ and `perf`, and records the timeline.
  void SimulateShared(PerfCounters& perf);
  // What a DMA instruction (LOAD, STORE, LOAD_WEIGHTS) moves: `rows` rows of `row_bytes`
  // bytes, `stride` apart from `dram`; `credits` is its unit's limit on words in flight.
  struct DmaShape {
    std::uint64_t dram = 0, stride = 0, rows = 0, row_bytes = 0, credits = 0;
    bool write = false;
    std::uint64_t credit_delay = 0;  // MemoryStream::credit_delay
    bool Empty() const { return rows == 0 || row_bytes == 0; }
    // The address of the last byte it touches (`dram` when it moves nothing).
    std::uint64_t LastByte() const { return Empty() ? dram : dram + (rows - 1) * stride + row_bytes - 1; }
    // The 32-byte words row r covers.
    std::uint64_t RowWords(std::uint64_t r) const {
      const std::uint64_t begin = dram + r * stride;
      return (begin + row_bytes - 1) / 32 - begin / 32 + 1;
    }
  };
  DmaShape ShapeOf(const isa::Instruction& insn) const;
  DmaTime Dma(const DmaShape& d) {
    return Dma(d.dram, d.stride, d.rows, d.row_bytes, d.write, d.credits, d.credit_delay);
  }
  // MATMUL's end from its first row; sets `unit_free`.
  Cycle MatmulDone(std::uint64_t rows, Cycle first_row, Cycle& unit_free) const;
  // The end of an instruction whose time does not depend on memory (vector unit, the rest) that
  // its unit accepted at `start`; sets `unit_free`.
  Cycle Occupy(const isa::Instruction& insn, Cycle start, Cycle& unit_free) const;
  // The buffer reads of a vector-unit instruction that reads one row a cycle and then drains its
  // pipeline (ACTIVATE, VECTOR without math=, REDUCE over rows, POOL); none for the others.
  static std::optional<std::uint64_t> StreamedReads(const isa::Instruction& insn);

  // The sequencer takes the launch's next instruction word (fetched) through its dispatch
  // states; returns the cycle of S_ISSUE, before any wait for a full unit queue.
  Cycle NextIssue();
  Cycle Dispatch(unsigned unit, PerfCounters& perf);
  Cycle TakeTokens(const isa::Instruction& insn, unsigned unit);
  void SendTokens(const isa::Instruction& insn, unsigned unit, Cycle complete);
  void Finish(unsigned unit, Cycle start, Cycle unit_free, Cycle complete);
  // `first` and `last`: the addresses of the DMA's first and last byte.
  Cycle Transfer(unsigned unit, Cycle start, DmaTime time, std::uint64_t first, std::uint64_t last,
                 PerfCounters& perf);
  // Whether launches are rescheduled by EndLaunch (TimingParameters::shared_memory).
  bool Deferred() const;
  // Appends the instruction just scheduled to instructions_ (`before`: perf before it).
  void Recorded(const PerfCounters& perf, const PerfCounters& before);
  // Takes the first `cycles` free cycles of device memory from `from`; returns the cycle after
  // the last one taken.
  Cycle ReserveMemory(Cycle from, std::uint64_t cycles);

  void RecordStall(unsigned track, trace::StallCause cause, Cycle begin, Cycle end) {
    if (recording_ != nullptr) recording_->UnitStall(track, cause, begin, end);
  }

  Config config_;
  TimingParameters parameters_;
  trace::Timeline* timeline_ = nullptr;
  trace::Timeline* recording_ = nullptr;  // what Schedule records into: timeline_ unless deferred
  Cycle last_complete_ = 0;               // the completion of the instruction just scheduled
  MemoryTimingModel memory_;
  // kDram results by (address modulo dram_period_, stride, rows, row bytes, write, credits,
  // credit delay): a DMA's timing on an idle memory depends on the address only below the DRAM
  // row bits.
  std::uint64_t dram_period_ = 0;
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, bool, std::uint64_t,
                      std::uint64_t>,
           DmaTime>
      dma_cache_;
  std::uint64_t weight_credits_ = 0;  // CREDITS of systole_dma_weights for this configuration

  // The launch: its program's address, its instructions, what the first estimate added to
  // the counters, and each instruction's figures in the current schedule.
  std::uint64_t launch_pc_ = 0;
  std::vector<isa::Instruction> launch_insns_;
  PerfCounters first_estimate_{};
  std::vector<InstructionTiming> instructions_;
  // A fetched word arrives this many cycles after its response leaves the controller model.
  Cycle fetch_response_to_word_ = 0;

  Cycle sequencer_ = 0;     // when the sequencer enters S_NEXT for the next instruction
  Cycle fetch_request_ = 0; // when the last instruction word was requested
  std::uint64_t fetched_ = 0;  // instruction words requested in this launch
  // When dispatch took each of the last fetch_depth words (each frees a fetch slot).
  std::deque<Cycle> fetch_pops_;
  Cycle launch_end_ = 0;    // latest completion so far
  // Device memory is shared by the three DMA units: the cycles the streams of the DMAs
  // scheduled so far hold it, as disjoint [begin, end) intervals. DMAs are scheduled in program
  // order, not in time order, so a later instruction may take cycles before an earlier one's.
  std::map<Cycle, Cycle> memory_busy_;
  // The DRAM row each bank of each channel was left open at by the launch's DMAs so far (-1:
  // closed or unknown), index channel * banks_per_group + bank, all bank groups alike:
  // consecutive words rotate over the groups, so a stream leaves the same row open in each.
  std::vector<std::int64_t> open_rows_;
  std::array<Cycle, isa::kNumUnits> unit_free_{};
  // Accept times of each unit's recent instructions, to model its queue filling up.
  std::array<std::deque<Cycle>, isa::kNumUnits> recent_starts_{};
  // Arrival times of outstanding tokens per (producer, consumer) pair, oldest first.
  std::array<std::array<std::deque<Cycle>, isa::kNumUnits>, isa::kNumUnits> tokens_{};
  // Weight tiles: when each LOAD_WEIGHTS of the launch completed, and when each pop started.
  std::vector<Cycle> tile_loaded_;
  std::vector<Cycle> tile_popped_;
};

}  // namespace systole::model
