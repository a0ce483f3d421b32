// systole_control (systole_regs + systole_sequencer) against model::GoldenModel.
//
// The five units are C++ stubs that accept instructions when they like and pulse `done` after
// random delays, recording when every instruction was offered, accepted and completed; device
// memory behind the fetch port answers after random latencies. For every program the RTL must
// report the model's ERROR_CODE and FAULT_PC, hand each unit exactly the model's dispatched
// instructions in program order, start no instruction before the producers of its wait tokens
// completed, honour SYNC and HALT, and count INSNS and MACS as the model does. The register
// block is checked directly: identity registers, the command queue, CMDQ_OVERFLOW, sticky
// errors, CLEAR_ERROR, ABORT, SOFT_RESET, IRQ W1C and the LO/HI semantics of the counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "Vvl_control_small.h"
#include "Vvl_control_small_int8.h"
#include "Vvl_control_tiny.h"
#include "arch/config/config.hpp"
#include "arch/isa/isa.hpp"
#include "arch/regs/identity.hpp"
#include "arch/regs/regmap.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/rtl/harness.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl {
namespace {

using isa::Field;
using isa::Opcode;
using isa::Word;
using regs::OffsetOf;

constexpr unsigned kUnits = isa::kNumUnits;
constexpr std::uint32_t kIrqDone = 1, kIrqError = 2, kIrqUser = 4;
constexpr std::uint32_t kCtrlSoftReset = 1, kCtrlAbort = 2, kCtrlClearError = 4,
                        kCtrlClearCounters = 8;

std::uint64_t GetBits(const Word& w, unsigned lsb, unsigned width) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) {
    const unsigned b = lsb + i;
    v |= std::uint64_t{(w[b / 8] >> (b % 8)) & 1u} << i;
  }
  return v;
}
void SetBits(Word& w, unsigned lsb, unsigned width, std::uint64_t value) {
  for (unsigned i = 0; i < width; ++i) {
    const unsigned b = lsb + i;
    const auto bit = static_cast<std::uint8_t>(1u << (b % 8));
    if ((value >> i) & 1u) {
      w[b / 8] = static_cast<std::uint8_t>(w[b / 8] | bit);
    } else {
      w[b / 8] = static_cast<std::uint8_t>(w[b / 8] & ~bit);
    }
  }
}
std::uint8_t WaitMask(const Word& w) { return static_cast<std::uint8_t>(GetBits(w, 8, 5)); }
std::uint8_t SignalMask(const Word& w) { return static_cast<std::uint8_t>(GetBits(w, 13, 5)); }
std::string Hex(const Word& w) {
  std::ostringstream s;
  s << std::hex;
  for (int i = 31; i >= 0; --i) s << (w[i] >> 4) << (w[i] & 15);
  return s.str();
}

// One instruction a stub unit accepted.
struct Accepted {
  Word insn;
  std::uint64_t accept = 0;
  std::uint64_t done = 0;  // 0: not yet
};

// What one launch did, as the host and the units saw it.
struct Outcome {
  std::uint32_t error = 0;
  std::uint64_t fault_pc = 0;
  std::uint64_t insns = 0;
  std::uint64_t macs = 0;
  std::uint32_t irq_code = 0;
  std::uint32_t irq_status = 0;
  std::uint32_t launches_done = 0;
};

// ---- The RTL with stub units and a stub memory ------------------------------------------------
template <class Model>
class Bench {
 public:
  Bench(const Config& config, std::uint64_t seed, const std::filesystem::path& wave)
      : config_(config), sim_("control", {.trace_path = wave, .seed = seed}), rng_(seed * 7 + 1) {
    sim_->reg_valid = 0;
    sim_->reg_write = 0;
    sim_->reg_addr = 0;
    sim_->reg_wdata = 0;
    sim_->mem_req_ready = 0;
    sim_->mem_rsp_valid = 0;
    for (unsigned i = 0; i < 8; ++i) sim_->mem_rsp_rdata[i] = 0;
    sim_->cmd_ready = 0;
    sim_->done = 0;
    for (unsigned i = 0; i < 14; ++i) sim_->perf_unit_inc[i] = 0;
    sim_.Reset();
    Randomise();
  }

  Harness<Model>& sim() { return sim_; }
  std::mt19937_64& rng() { return rng_; }

  // New random timing for the units and the memory.
  void Randomise() {
    mem_ready_percent_ = Pick(30, 100);
    mem_latency_max_ = Pick(1, 12);
    for (unsigned u = 0; u < kUnits; ++u) {
      ready_percent_[u] = Pick(20, 100);
      done_max_[u] = Pick(1, 3) == 1 ? Pick(1, 4) : Pick(2, 40);
      max_outstanding_[u] = Pick(1, 3);
    }
  }
  void Freeze(bool frozen) { frozen_ = frozen; }

  void StoreWord(std::uint64_t address, const Word& word) { memory_[address] = word; }

  // One clock cycle with random unit and memory behaviour.
  void Step() {
    const std::uint64_t now = sim_.Cycle();
    sim_->mem_req_ready = Pick(1, 100) <= mem_ready_percent_;
    const bool respond = !responses_.empty() && responses_.front().ready <= now;
    sim_->mem_rsp_valid = respond;
    if (respond) {
      for (unsigned i = 0; i < 8; ++i) {
        const Word& w = responses_.front().data;
        sim_->mem_rsp_rdata[i] = std::uint32_t{w[4 * i]} | std::uint32_t{w[4 * i + 1]} << 8 |
                                 std::uint32_t{w[4 * i + 2]} << 16 |
                                 std::uint32_t{w[4 * i + 3]} << 24;
      }
    }
    std::uint32_t ready = 0, done = 0;
    for (unsigned u = 0; u < kUnits; ++u) {
      if (!frozen_ && pending_[u].size() < max_outstanding_[u] &&
          Pick(1, 100) <= ready_percent_[u]) {
        ready |= 1u << u;
      }
      if (!frozen_ && !pending_[u].empty() && pending_[u].front().second <= now) done |= 1u << u;
    }
    sim_->cmd_ready = ready;
    sim_->done = done;
    sim_.Eval();

    if (sim_->irq && !irq_seen_) {
      irq_seen_ = true;
      irq_cycle_ = now;
    }
    if (sim_->launch_start) launch_starts_.push_back(now);
    if (sim_->mem_req_valid && sim_->mem_req_ready) {
      const std::uint64_t address = sim_->mem_req_addr;
      EXPECT_EQ(address % 32, 0u) << "fetch of a misaligned word";
      EXPECT_LT(address, config_.memory_bytes) << "fetch outside device memory";
      EXPECT_EQ(sim_->mem_req_write, 0) << "the fetch port writes";
      Word data{};
      if (auto it = memory_.find(address); it != memory_.end()) data = it->second;
      const std::uint64_t ready_at =
          std::max(last_ready_ + 1, now + static_cast<std::uint64_t>(Pick(1, mem_latency_max_)));
      last_ready_ = ready_at;
      responses_.push_back({ready_at, data});
      ++fetches_;
    }
    if (respond) responses_.pop_front();
    const bool unit_reset = sim_->unit_reset;
    for (unsigned u = 0; u < kUnits; ++u) {
      if (done & (1u << u)) {
        log_[u][pending_[u].front().first].done = now;
        pending_[u].pop_front();
      }
      if (sim_->cmd_valid & (1u << u)) {
        Word insn{};
        for (unsigned i = 0; i < 32; ++i) {
          insn[i] = static_cast<std::uint8_t>(sim_->cmd_insn[u * 8 + i / 4] >> (8 * (i % 4)));
        }
        if (offered_[u] && insn != offered_insn_[u]) {
          ADD_FAILURE() << "unit " << u << ": cmd_insn changed while offered, cycle " << now;
        }
        offered_[u] = !(ready & (1u << u));
        offered_insn_[u] = insn;
        if (ready & (1u << u)) {
          log_[u].push_back({insn, now, 0});
          const std::uint64_t done_at = now + static_cast<std::uint64_t>(Pick(1, done_max_[u]));
          pending_[u].push_back({log_[u].size() - 1, done_at});
        }
      } else {
        if (offered_[u]) ADD_FAILURE() << "unit " << u << ": cmd_valid dropped, cycle " << now;
        offered_[u] = false;
      }
      if (unit_reset) {
        pending_[u].clear();
        offered_[u] = false;
      }
    }
    sim_.Tick();
  }
  void Steps(unsigned n) {
    for (unsigned i = 0; i < n; ++i) Step();
  }

  void Write(std::uint32_t offset, std::uint32_t value) {
    sim_->reg_valid = 1;
    sim_->reg_write = 1;
    sim_->reg_addr = offset;
    sim_->reg_wdata = value;
    Step();
    sim_->reg_valid = 0;
    sim_->reg_write = 0;
  }
  std::uint32_t Read(std::uint32_t offset) {
    sim_->reg_valid = 1;
    sim_->reg_write = 0;
    sim_->reg_addr = offset;
    Step();
    sim_->reg_valid = 0;
    EXPECT_TRUE(sim_->reg_rvalid) << "no read data the cycle after the request";
    return sim_->reg_rdata;
  }
  std::uint64_t Read64(std::string_view name_lo, std::uint32_t lo_offset) {
    (void)name_lo;
    const std::uint64_t lo = Read(lo_offset);
    return lo | std::uint64_t{Read(lo_offset + 4)} << 32;
  }

  void ClearLog() {
    for (auto& l : log_) l.clear();
    launch_starts_.clear();
    irq_seen_ = false;
  }

  // Rings the doorbell and runs until the interrupt line (IRQ_ENABLE = DONE | ERROR) rises.
  void Launch(std::uint64_t pc, std::uint32_t count) {
    Write(OffsetOf("CMD_PC_LO"), static_cast<std::uint32_t>(pc));
    Write(OffsetOf("CMD_PC_HI"), static_cast<std::uint32_t>(pc >> 32));
    Write(OffsetOf("CMD_COUNT"), count);
    Write(OffsetOf("IRQ_STATUS"), 7);
    ClearLog();
    Write(OffsetOf("DOORBELL"), 1);
  }
  void WaitIrq(std::uint64_t max_cycles = 200000) {
    for (std::uint64_t i = 0; i < max_cycles && !irq_seen_; ++i) Step();
    ASSERT_TRUE(irq_seen_) << "the launch did not end within " << max_cycles << " cycles";
    Steps(3);  // the counters see the last events a cycle late
  }

  Outcome Collect() {
    Outcome o;
    o.error = Read(OffsetOf("ERROR_CODE"));
    o.fault_pc = Read(OffsetOf("FAULT_PC_LO")) |
                 std::uint64_t{Read(OffsetOf("FAULT_PC_HI"))} << 32;
    o.insns = Read64("INSNS", OffsetOf("PERF_INSNS_LO"));
    o.macs = Read64("MACS", OffsetOf("PERF_MACS_LO"));
    o.irq_code = Read(OffsetOf("IRQ_CODE"));
    o.irq_status = Read(OffsetOf("IRQ_STATUS"));
    o.launches_done = Read(OffsetOf("LAUNCHES_DONE"));
    return o;
  }

  const std::vector<Accepted>& Log(unsigned u) const { return log_[u]; }
  std::uint64_t IrqCycle() const { return irq_cycle_; }
  const std::vector<std::uint64_t>& LaunchStarts() const { return launch_starts_; }
  bool UnitsIdle() const {
    for (const auto& p : pending_) {
      if (!p.empty()) return false;
    }
    return true;
  }

  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

 private:
  struct Response {
    std::uint64_t ready;
    Word data;
  };

  Config config_;
  Harness<Model> sim_;
  std::mt19937_64 rng_;
  std::unordered_map<std::uint64_t, Word> memory_;
  std::deque<Response> responses_;
  std::uint64_t last_ready_ = 0;
  std::uint64_t fetches_ = 0;
  int mem_ready_percent_ = 100, mem_latency_max_ = 1;
  std::array<int, kUnits> ready_percent_{}, done_max_{};
  std::array<std::size_t, kUnits> max_outstanding_{};
  bool frozen_ = false;
  std::array<std::deque<std::pair<std::size_t, std::uint64_t>>, kUnits> pending_;
  std::array<std::vector<Accepted>, kUnits> log_;
  std::array<bool, kUnits> offered_{};
  std::array<Word, kUnits> offered_insn_{};
  std::vector<std::uint64_t> launch_starts_;
  bool irq_seen_ = false;
  std::uint64_t irq_cycle_ = 0;
};

// ---- Programs --------------------------------------------------------------------------------
class ProgramGenerator {
 public:
  ProgramGenerator(const Config& config, std::mt19937_64& rng) : c_(config), rng_(rng) {
    e_ = c_.dtype == DType::kBf16 ? 2 : 1;
    w_ = c_.UbRowElems();
    ub_ = c_.UbRows();
    acc_ = c_.AccRows();
    data_lo_ = c_.memory_bytes / 2;
    data_hi_ = c_.memory_bytes - 65536;
  }

  std::uint64_t R(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
  }
  bool Chance(unsigned percent) { return R(1, 100) <= percent; }

  // A legal program of `n` instructions plus HALT: every check passes.
  std::vector<Word> Legal(unsigned n) {
    Reset();
    std::vector<Word> program;
    for (unsigned i = 0; i < n; ++i) program.push_back(isa::EncodeOrThrow(NextLegal()));
    program.push_back(isa::EncodeOrThrow(isa::MakeInstruction(Opcode::kHalt, {})));
    return program;
  }

  void Reset() {
    tok_ = {};
    fifo_ = 0;
    stationary_ = false;
  }

  isa::Instruction NextLegal() {
    for (;;) {
      const auto kind = R(0, 11);
      isa::Instruction insn;
      unsigned self = 5;
      switch (kind) {
        case 0:
        case 1: insn = Dma(Opcode::kLoad); self = 0; break;
        case 2: insn = Dma(Opcode::kStore); self = 4; break;
        case 3:
          if (fifo_ >= c_.weight_fifo_tiles) continue;
          insn = LoadWeights();
          self = 1;
          break;
        case 4:
        case 5:
          if (fifo_ == 0 && !stationary_) continue;
          insn = Matmul(fifo_ > 0 && (!stationary_ || Chance(60)));
          self = 2;
          break;
        case 6: insn = Activate(); self = 3; break;
        case 7: insn = Vector(); self = 3; break;
        case 8: insn = Pool(); self = 3; break;
        case 9:
          if (!Chance(30)) continue;
          insn = isa::MakeInstruction(Opcode::kSync, {});
          break;
        case 10:
          if (!Chance(30)) continue;
          insn = isa::MakeInstruction(Opcode::kInterrupt, {{Field::kCode, R(0, 0xffff)}});
          break;
        default:
          if (fifo_ >= c_.weight_fifo_tiles) continue;
          insn = LoadWeights();
          self = 1;
          break;
      }
      if (self < kUnits) {
        for (unsigned p = 0; p < kUnits; ++p) {
          if (p != self && tok_[p][self] > 0 && Chance(40)) insn.wait |= 1u << p;
        }
        for (unsigned q = 0; q < kUnits; ++q) {
          if (q != self && tok_[self][q] < c_.token_capacity && Chance(25)) {
            insn.signal |= 1u << q;
          }
        }
        Apply(insn, self);
      }
      return insn;
    }
  }

  void Apply(const isa::Instruction& insn, unsigned self) {
    for (unsigned p = 0; p < kUnits; ++p) {
      if (insn.wait >> p & 1u) --tok_[p][self];
      if (insn.signal >> p & 1u) ++tok_[self][p];
    }
    if (insn.opcode == Opcode::kLoadWeights) ++fifo_;
    if (insn.opcode == Opcode::kMatmul && insn[Field::kPop] != 0) {
      --fifo_;
      stationary_ = true;
    }
  }

  isa::Instruction Dma(Opcode op) {
    const bool acc = Chance(30);
    const bool widen = op == Opcode::kLoad && acc && Chance(50);  // E-byte elements into the accumulators
    const std::uint64_t s = acc && !widen ? 4 : e_;
    const std::uint64_t width = acc ? c_.cols : w_;
    const std::uint64_t elems = R(1, width), col = R(0, width - elems);
    const std::uint64_t rows = R(1, 4);
    const std::uint64_t row = R(0, (acc ? acc_ : ub_) - rows);
    const std::uint64_t dram = data_lo_ + s * R(0, 8192);
    const std::uint64_t stride = s * R(0, 64);
    isa::Instruction insn = isa::MakeInstruction(op, {{Field::kMem, acc ? 1u : 0u}, {Field::kDram, dram},
                                                      {Field::kStride, stride}, {Field::kRow, row},
                                                      {Field::kCol, col}, {Field::kRows, rows},
                                                      {Field::kElems, elems}});
    if (widen) insn[Field::kWiden] = 1;
    return insn;
  }
  isa::Instruction LoadWeights() {
    return isa::MakeInstruction(Opcode::kLoadWeights,
                                {{Field::kDram, data_lo_ + e_ * R(0, 8192)},
                                 {Field::kStride, e_ * R(0, 64)}, {Field::kRows, R(1, c_.rows)},
                                 {Field::kCols, R(1, c_.cols)}});
  }
  isa::Instruction Matmul(bool pop) {
    const std::uint64_t rows = R(1, 8);
    return isa::MakeInstruction(Opcode::kMatmul,
                                {{Field::kPop, pop ? 1u : 0u}, {Field::kAccumulate, R(0, 1)},
                                 {Field::kUb, R(0, ub_ - rows)}, {Field::kAcc, R(0, acc_ - rows)},
                                 {Field::kRows, rows}, {Field::kK, R(1, c_.rows)}});
  }
  isa::Instruction Activate() {
    const std::uint64_t rows = R(1, 8);
    return isa::MakeInstruction(
        Opcode::kActivate,
        {{Field::kBias, R(0, 1)}, {Field::kFunc, R(0, 3)}, {Field::kAcc, R(0, acc_ - rows)},
         {Field::kUb, R(0, ub_ - rows)}, {Field::kRows, rows}, {Field::kBiasRow, R(0, acc_ - 1)},
         {Field::kScale, R(0, 0xffffffff)}, {Field::kShift, R(0, 62)},
         {Field::kZeroPoint, static_cast<std::uint64_t>(static_cast<std::int64_t>(R(0, 255)) - 128)},
         {Field::kLo, R(0, 0xffff)}, {Field::kHi, R(0, 0xffff)}});
  }
  isa::Instruction Vector() {
    const std::uint64_t rows = R(1, 8);
    return isa::MakeInstruction(
        Opcode::kVector,
        {{Field::kOp, R(0, 4)}, {Field::kFunc, R(0, 3)}, {Field::kBcast, R(0, 1)},
         {Field::kA, R(0, ub_ - rows)}, {Field::kB, R(0, ub_ - rows)},
         {Field::kDst, R(0, ub_ - rows)}, {Field::kRows, rows}, {Field::kShift, R(0, 62)},
         {Field::kLo, R(0, 0xffff)}, {Field::kHi, R(0, 0xffff)}});
  }
  isa::Instruction Pool() {
    const std::uint64_t in_w = R(1, 4), oh = R(1, 3), ow = R(1, 3), wh = R(1, 3), ww = R(1, 3),
                        sh = R(1, 2), sw = R(1, 2);
    const std::uint64_t last = ((oh - 1) * sh + wh - 1) * in_w + (ow - 1) * sw + ww - 1;
    return isa::MakeInstruction(
        Opcode::kPool,
        {{Field::kOp, R(0, 1)}, {Field::kSrc, R(0, ub_ - 1 - last)},
         {Field::kDst, R(0, ub_ - oh * ow)}, {Field::kInW, in_w}, {Field::kOutH, oh},
         {Field::kOutW, ow}, {Field::kWinH, wh}, {Field::kWinW, ww}, {Field::kStrideH, sh},
         {Field::kStrideW, sw}, {Field::kScale, R(0, 0xffffffff)}, {Field::kShift, R(0, 62)}});
  }

  // A value for a field of `width` bits: mostly small or at the edges, sometimes anything.
  std::uint64_t FieldValue(const isa::FieldSpec& f) {
    const std::uint64_t max = f.width >= 64 ? ~0ull : (1ull << f.width) - 1;
    if (f.field == Field::kDram) {
      switch (R(0, 4)) {
        case 0: return data_lo_ + R(0, 4096);
        case 1: return c_.memory_bytes - R(0, 256);
        case 2: return R(0, max);
        default: return data_lo_ + R(0, 1024) * 4;
      }
    }
    switch (R(0, 9)) {
      case 0: return 0;
      case 1: return max;
      case 2: return R(0, max);
      case 3: return c_.rows + R(0, 1);
      case 4: return ub_ - R(0, 3);
      case 5: return acc_ - R(0, 3);
      default: return std::min<std::uint64_t>(max, R(0, 6));
    }
  }

  // A word with a valid opcode and random field values (and sometimes anything at all).
  Word RandomWord() {
    Word w{};
    if (Chance(5)) {
      for (auto& b : w) b = static_cast<std::uint8_t>(R(0, 255));
      return w;
    }
    const auto& spec = isa::Opcodes()[R(0, isa::Opcodes().size() - 1)];
    SetBits(w, 0, 8, static_cast<std::uint8_t>(spec.opcode));
    for (const auto& f : spec.fields) SetBits(w, f.lsb, f.width, FieldValue(f));
    if (Chance(30)) SetBits(w, 8, 5, R(0, 31));
    if (Chance(30)) SetBits(w, 13, 5, R(0, 31));
    if (Chance(8)) SetReservedBit(w);
    return w;
  }

  void SetReservedBit(Word& w) {
    const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(GetBits(w, 0, 8)));
    std::array<bool, 256> used{};
    for (unsigned b = 0; b < 18; ++b) used[b] = true;
    if (spec != nullptr) {
      for (const auto& f : spec->fields) {
        for (unsigned b = f.lsb; b < f.lsb + f.width; ++b) used[b] = true;
      }
    }
    for (;;) {
      const auto b = static_cast<unsigned>(R(18, 255));
      if (!used[b]) {
        SetBits(w, b, 1, 1);
        return;
      }
    }
  }

  // One rule broken in `w` (several calls break several).
  void Mutate(Word& w) {
    const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(GetBits(w, 0, 8)));
    switch (R(0, 7)) {
      case 0: {
        const std::uint64_t op = R(0, 1) ? 0 : R(11, 255);
        SetBits(w, 0, 8, op);
        return;
      }
      case 1: SetReservedBit(w); return;
      case 2:
        if (spec == nullptr) return;
        if (spec->unit == isa::Unit::kSequencer) {
          SetBits(w, R(0, 1) ? 8 : 13, 5, R(1, 31));
        } else {
          SetBits(w, (R(0, 1) ? 8 : 13) + static_cast<unsigned>(spec->unit), 1, 1);
        }
        return;
      default: {
        if (spec == nullptr || spec->fields.empty()) return;
        const auto& f = spec->fields[R(0, spec->fields.size() - 1)];
        SetBits(w, f.lsb, f.width, FieldValue(f));
        return;
      }
    }
  }

 private:
  const Config& c_;
  std::mt19937_64& rng_;
  std::uint64_t e_, w_, ub_, acc_, data_lo_, data_hi_;
  std::array<std::array<std::uint32_t, kUnits>, kUnits> tok_{};
  std::uint32_t fifo_ = 0;
  bool stationary_ = false;
};

// ---- The comparison --------------------------------------------------------------------------
template <class Model>
class ControlTest {
 public:
  ControlTest(const std::string& config_name, std::uint64_t seed,
              const std::filesystem::path& wave)
      : config_(LoadConfig(config_name)),
        bench_(config_, seed, wave),
        model_(config_),
        gen_(config_, bench_.rng()) {
    model_.WriteRegister(OffsetOf("IRQ_ENABLE"), kIrqDone | kIrqError);
    bench_.Write(OffsetOf("IRQ_ENABLE"), kIrqDone | kIrqError);
  }

  Bench<Model>& bench() { return bench_; }
  ProgramGenerator& gen() { return gen_; }
  const Config& config() const { return config_; }

  // Runs `program` at `pc` with CMD_COUNT `count` on both and compares everything.
  void Run(const std::vector<Word>& program, std::uint64_t pc, std::uint32_t count,
           const std::string& what) {
    SCOPED_TRACE(what);
    // Memory: the program, where it fits in device memory.
    for (std::size_t i = 0; i < program.size(); ++i) {
      const std::uint64_t address = pc + 32 * i;
      if (pc % 32 != 0 || address < pc || address > config_.memory_bytes - 32) break;
      model_.WriteMemory(address, program[i]);
      bench_.StoreWord(address, program[i]);
    }
    Outcome expect;
    model_.WriteRegister(OffsetOf("CMD_PC_LO"), static_cast<std::uint32_t>(pc));
    model_.WriteRegister(OffsetOf("CMD_PC_HI"), static_cast<std::uint32_t>(pc >> 32));
    model_.WriteRegister(OffsetOf("CMD_COUNT"), count);
    model_.WriteRegister(OffsetOf("DOORBELL"), 1);
    model_.RunUntilIdle();
    expect.error = model_.ReadRegister(OffsetOf("ERROR_CODE"));
    expect.fault_pc = model_.ReadRegister(OffsetOf("FAULT_PC_LO")) |
                      std::uint64_t{model_.ReadRegister(OffsetOf("FAULT_PC_HI"))} << 32;
    expect.insns = model_.Counter("INSNS");
    expect.macs = model_.Counter("MACS");
    expect.irq_code = model_.ReadRegister(OffsetOf("IRQ_CODE"));
    expect.irq_status = model_.ReadRegister(OffsetOf("IRQ_STATUS"));
    expect.launches_done = model_.ReadRegister(OffsetOf("LAUNCHES_DONE"));
    const std::string message = model_.LastErrorMessage();

    bench_.Randomise();
    bench_.Launch(pc, count);
    bench_.WaitIrq();
    if (::testing::Test::HasFatalFailure()) return;
    const Outcome got = bench_.Collect();

    EXPECT_EQ(got.error, expect.error) << "model: " << message;
    EXPECT_EQ(got.fault_pc, expect.fault_pc) << "model: " << message;
    EXPECT_EQ(got.insns, expect.insns);
    EXPECT_EQ(got.macs, expect.macs);
    EXPECT_EQ(got.irq_code, expect.irq_code);
    EXPECT_EQ(got.irq_status, expect.irq_status);
    EXPECT_EQ(got.launches_done, expect.launches_done);
    EXPECT_EQ(bench_.LaunchStarts().size(), 1u) << "launch_start pulses";
    CheckDispatch(program, pc, expect.insns);

    // Back to a clean state for the next launch.
    for (auto clear : {std::pair{OffsetOf("IRQ_STATUS"), 7u},
                       std::pair{OffsetOf("CTRL"), kCtrlClearError | kCtrlClearCounters}}) {
      model_.WriteRegister(clear.first, clear.second);
      bench_.Write(clear.first, clear.second);
    }
    ++runs_;
    if (expect.error != 0) ++faults_[expect.error];
  }

  // Every unit got exactly the instructions before the fault, in program order; tokens, SYNC
  // and the end of the launch were respected.
  void CheckDispatch(const std::vector<Word>& program, std::uint64_t pc, std::uint64_t retired) {
    struct Ref {
      unsigned unit;
      std::size_t k;  // index in the unit's log
    };
    std::vector<std::optional<Ref>> refs(retired);
    std::array<std::vector<Word>, kUnits> expect;
    for (std::size_t i = 0; i < retired; ++i) {
      ASSERT_LT(i, program.size());
      const isa::OpcodeSpec* spec = isa::FindOpcode(program[i][0]);
      ASSERT_NE(spec, nullptr);
      if (spec->unit == isa::Unit::kSequencer) continue;
      const auto u = static_cast<unsigned>(spec->unit);
      refs[i] = Ref{u, expect[u].size()};
      expect[u].push_back(program[i]);
    }
    for (unsigned u = 0; u < kUnits; ++u) {
      const auto& log = bench_.Log(u);
      ASSERT_EQ(log.size(), expect[u].size()) << "unit " << u << " instructions (pc 0x" << std::hex
                                              << pc << ")";
      for (std::size_t k = 0; k < log.size(); ++k) {
        ASSERT_EQ(Hex(log[k].insn), Hex(expect[u][k])) << "unit " << u << " instruction " << k;
        ASSERT_NE(log[k].done, 0u) << "unit " << u << " instruction " << k << " never done";
        EXPECT_LT(log[k].done, bench_.IrqCycle()) << "launch ended before unit " << u
                                                  << " instruction " << k << " was done";
        ASSERT_FALSE(bench_.LaunchStarts().empty());
        EXPECT_GT(log[k].accept, bench_.LaunchStarts().front());
      }
    }
    // Tokens: the n-th wait of c on p starts after the n-th signalling instruction of p to c
    // completed.
    for (unsigned p = 0; p < kUnits; ++p) {
      for (unsigned c = 0; c < kUnits; ++c) {
        std::vector<std::uint64_t> signals;
        for (const auto& a : bench_.Log(p)) {
          if (SignalMask(a.insn) >> c & 1u) signals.push_back(a.done);
        }
        std::size_t n = 0;
        for (const auto& a : bench_.Log(c)) {
          if (!(WaitMask(a.insn) >> p & 1u)) continue;
          ASSERT_LT(n, signals.size()) << "wait " << c << " <- " << p << " without a signal";
          EXPECT_LT(signals[n], a.accept)
              << "unit " << c << " started before its token from unit " << p << " was signalled";
          ++n;
        }
      }
    }
    // SYNC: every instruction after it starts after every instruction before it is done.
    std::uint64_t last_done = 0;
    bool after_sync = false;
    std::uint64_t sync_barrier = 0;
    for (std::size_t i = 0; i < retired; ++i) {
      if (program[i][0] == static_cast<std::uint8_t>(Opcode::kSync)) {
        sync_barrier = last_done;
        after_sync = true;
        continue;
      }
      if (!refs[i]) continue;
      const Accepted& a = bench_.Log(refs[i]->unit)[refs[i]->k];
      if (after_sync) {
        EXPECT_GT(a.accept, sync_barrier) << "instruction " << i << " overtook a SYNC";
      }
      last_done = std::max(last_done, a.done);
    }
  }

  void Summary() const {
    std::cout << "[ summary  ] " << runs_ << " launches; faults:";
    for (const auto& [code, n] : faults_) {
      std::cout << " " << regs::ErrorName(static_cast<regs::ErrorCode>(code)) << "=" << n;
    }
    std::cout << "\n";
  }
  const std::map<std::uint32_t, unsigned>& Faults() const { return faults_; }

 private:
  Config config_;
  Bench<Model> bench_;
  model::GoldenModel model_;
  ProgramGenerator gen_;
  unsigned runs_ = 0;
  std::map<std::uint32_t, unsigned> faults_;
};

template <class Model>
struct ConfigOf;
template <>
struct ConfigOf<Vvl_control_tiny> {
  static constexpr const char* kName = "tiny";
};
template <>
struct ConfigOf<Vvl_control_small> {
  static constexpr const char* kName = "small";
};
template <>
struct ConfigOf<Vvl_control_small_int8> {
  static constexpr const char* kName = "small-int8";
};

template <class Model>
class Control : public ::testing::Test {};
using Models = ::testing::Types<Vvl_control_tiny, Vvl_control_small, Vvl_control_small_int8>;
class ModelNames {
 public:
  template <class T>
  static std::string GetName(int) {
    std::string name = ConfigOf<T>::kName;
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
  }
};
TYPED_TEST_SUITE(Control, Models, ModelNames);

// (b) Legal programs: no fault, every unit gets its instructions in order, tokens and SYNC are
// respected, INSNS and MACS equal the model's.
TYPED_TEST(Control, LegalProgramsMatchTheModel) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;  // cheap enough to trace always: kept only if the test fails
  ControlTest<TypeParam> t(ConfigOf<TypeParam>::kName, seed, wave.Path());
  for (int i = 0; i < 200 && !::testing::Test::HasFatalFailure(); ++i) {
    const auto program = t.gen().Legal(static_cast<unsigned>(t.gen().R(1, 60)));
    const std::uint64_t pc = 32 * t.gen().R(0, 4096);
    t.Run(program, pc, static_cast<std::uint32_t>(program.size() + t.gen().R(0, 3)),
          "legal program " + std::to_string(i));
  }
  t.Summary();
  EXPECT_TRUE(t.Faults().empty());
}

// (a) Illegal programs: one or more rules broken somewhere; the RTL reports the model's error
// and FAULT_PC and dispatches exactly the instructions before the fault.
TYPED_TEST(Control, IllegalProgramsFaultLikeTheModel) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;  // cheap enough to trace always: kept only if the test fails
  ControlTest<TypeParam> t(ConfigOf<TypeParam>::kName, seed, wave.Path());
  auto& g = t.gen();
  const Config& c = t.config();
  for (int i = 0; i < 800 && !::testing::Test::HasFatalFailure(); ++i) {
    auto program = g.Legal(static_cast<unsigned>(g.R(0, 24)));
    std::uint64_t pc = 32 * g.R(0, 4096);
    auto count = static_cast<std::uint32_t>(program.size());
    const auto where = static_cast<std::size_t>(g.R(0, program.size() - 1));
    switch (g.R(0, 9)) {
      case 0:  // a random word
        program[where] = g.RandomWord();
        break;
      case 1:  // the program counter
        switch (g.R(0, 4)) {
          case 0: count = static_cast<std::uint32_t>(g.R(0, program.size() - 1)); break;
          case 1: pc += g.R(1, 31); break;
          case 2: pc = c.memory_bytes - 32 * g.R(1, program.size()); count += 3; break;
          case 3: pc = c.memory_bytes + 32 * g.R(0, 3); break;
          default: pc = 0xffffffffffffffe0ull - 32 * g.R(0, 2); break;
        }
        if (pc >= c.memory_bytes / 2 && pc < c.memory_bytes) {
          // Near the end of memory: no STORE may write the program it runs.
          for (auto& w : program) {
            if (w[0] == static_cast<std::uint8_t>(Opcode::kStore)) {
              w = isa::EncodeOrThrow(isa::MakeInstruction(Opcode::kSync, {}));
            }
          }
        }
        break;
      case 2: {  // flow control: weights and tokens
        g.Reset();
        std::vector<Word> p;
        const auto kind = g.R(0, 4);
        const auto before = g.R(0, 3);
        for (std::uint64_t k = 0; k < before; ++k) {
          auto insn = g.NextLegal();
          p.push_back(isa::EncodeOrThrow(insn));
        }
        if (kind == 0) {  // too many tiles
          for (unsigned k = 0; k <= c.weight_fifo_tiles; ++k) {
            p.push_back(isa::EncodeOrThrow(g.LoadWeights()));
          }
        } else if (kind == 1) {  // a pop or a reuse with nothing there (or fine, by chance)
          p.push_back(isa::EncodeOrThrow(g.Matmul(g.R(0, 1) != 0)));
        } else if (kind == 2) {  // a wait nobody signals (or one that is signalled)
          auto insn = g.Dma(Opcode::kStore);
          insn.wait = static_cast<std::uint8_t>(1u << g.R(0, 3));
          p.push_back(isa::EncodeOrThrow(insn));
        } else if (kind == 3) {  // more tokens than the capacity
          for (unsigned k = 0; k <= c.token_capacity; ++k) {
            auto insn = g.Dma(Opcode::kLoad);
            insn.signal = 1u << 4;
            p.push_back(isa::EncodeOrThrow(insn));
          }
        } else {  // capacity reached exactly, then consumed, then signalled again
          for (unsigned k = 0; k < c.token_capacity; ++k) {
            auto insn = g.Dma(Opcode::kLoad);
            insn.signal = 1u << 4;
            p.push_back(isa::EncodeOrThrow(insn));
          }
          auto store = g.Dma(Opcode::kStore);
          store.wait = 1u;
          p.push_back(isa::EncodeOrThrow(store));
          auto load = g.Dma(Opcode::kLoad);
          load.signal = 1u << 4;
          p.push_back(isa::EncodeOrThrow(load));
          p.push_back(isa::EncodeOrThrow(load));
        }
        p.push_back(isa::EncodeOrThrow(isa::MakeInstruction(Opcode::kHalt, {})));
        program = p;
        count = static_cast<std::uint32_t>(program.size());
        break;
      }
      default: {  // one to three rules broken in one instruction
        const auto n = g.R(1, 3);
        for (std::uint64_t k = 0; k < n; ++k) g.Mutate(program[where]);
        break;
      }
    }
    t.Run(program, pc, count, "illegal program " + std::to_string(i));
  }
  t.Summary();
  EXPECT_GE(t.Faults().size(), 8u) << "too few kinds of fault exercised";
}

// (c) The register block on its own.
TYPED_TEST(Control, IdentityRegisters) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  const Config config = LoadConfig(ConfigOf<TypeParam>::kName);
  Bench<TypeParam> b(config, seed, wave.Path());
  for (const auto& [offset, value] : regs::IdentityRegisters(config)) {
    EXPECT_EQ(b.Read(offset), value) << "offset 0x" << std::hex << offset;
  }
  for (std::uint32_t offset : {0x02Cu, 0x054u, 0x05Cu, 0x074u, 0x08Cu, 0x0FCu, 0x170u, 0x1FCu,
                               0x101u, 0x102u, 0x042u, 0x7FCu, 0xFFCu}) {
    EXPECT_EQ(b.Read(offset), 0u) << "unknown offset 0x" << std::hex << offset;
  }
  EXPECT_EQ(b.Read(OffsetOf("CTRL")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("DOORBELL")), 0u);
  // Read-only registers ignore writes.
  b.Write(OffsetOf("ID_MAGIC"), 0);
  b.Write(OffsetOf("CFG_ARRAY"), 0);
  EXPECT_EQ(b.Read(OffsetOf("ID_MAGIC")), regs::kMagic);
  // Read/write registers read back (IRQ_ENABLE keeps its three bits).
  b.Write(OffsetOf("CMD_PC_LO"), 0x12345678);
  b.Write(OffsetOf("CMD_PC_HI"), 0x9abcdef0);
  b.Write(OffsetOf("CMD_COUNT"), 0xfedcba98);
  b.Write(OffsetOf("IRQ_ENABLE"), 0xffffffff);
  EXPECT_EQ(b.Read(OffsetOf("CMD_PC_LO")), 0x12345678u);
  EXPECT_EQ(b.Read(OffsetOf("CMD_PC_HI")), 0x9abcdef0u);
  EXPECT_EQ(b.Read(OffsetOf("CMD_COUNT")), 0xfedcba98u);
  EXPECT_EQ(b.Read(OffsetOf("IRQ_ENABLE")), 7u);
}

// A long program that keeps the units busy while the host works the queue.
std::vector<Word> BusyProgram(unsigned n) {
  std::vector<Word> p;
  for (unsigned i = 0; i < n; ++i) {
    p.push_back(isa::EncodeOrThrow(isa::MakeInstruction(
        Opcode::kVector, {{Field::kA, 0}, {Field::kB, 0}, {Field::kDst, 0}, {Field::kRows, 1}})));
  }
  p.push_back(isa::EncodeOrThrow(isa::MakeInstruction(Opcode::kHalt, {})));
  return p;
}

TYPED_TEST(Control, CommandQueueOverflowAndClearError) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  const Config config = LoadConfig(ConfigOf<TypeParam>::kName);
  Bench<TypeParam> b(config, seed, wave.Path());
  const auto program = BusyProgram(6);
  for (std::size_t i = 0; i < program.size(); ++i) b.StoreWord(0x1000 + 32 * i, program[i]);
  b.Write(OffsetOf("IRQ_ENABLE"), kIrqDone | kIrqError);
  b.Freeze(true);
  b.Launch(0x1000, static_cast<std::uint32_t>(program.size()));
  b.Steps(20);
  const std::uint32_t depth = config.command_queue_depth;
  auto status = [&] { return b.Read(OffsetOf("STATUS")); };
  EXPECT_EQ(status() & 3u, 1u) << "BUSY, no error";
  EXPECT_EQ(status() >> 8 & 0xff, 0u) << "the first launch left the queue";
  for (std::uint32_t i = 0; i < depth; ++i) b.Write(OffsetOf("DOORBELL"), 1);
  EXPECT_EQ(status() >> 8 & 0xff, depth);
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")), 0u);
  // One more: CMDQ_OVERFLOW at CMD_PC, IRQ_STATUS.ERROR, the launches stay queued.
  b.Write(OffsetOf("CMD_PC_LO"), 0x2000);
  b.Write(OffsetOf("DOORBELL"), 1);
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")),
            static_cast<std::uint32_t>(regs::ErrorCode::kCmdqOverflow));
  EXPECT_EQ(b.Read(OffsetOf("FAULT_PC_LO")), 0x2000u);
  EXPECT_EQ(b.Read(OffsetOf("IRQ_STATUS")), kIrqError);
  EXPECT_TRUE(b.sim()->irq);
  EXPECT_EQ(status(), 1u | 2u | depth << 8) << "BUSY, ERROR, queue full";
  // The running launch completes; the queued ones wait for CLEAR_ERROR. The first error sticks.
  b.Freeze(false);
  b.Steps(400);
  EXPECT_EQ(b.Read(OffsetOf("LAUNCHES_DONE")), 1u);
  EXPECT_EQ(b.Read(OffsetOf("IRQ_STATUS")), kIrqError | kIrqDone);
  EXPECT_EQ(status(), 2u | depth << 8) << "not busy, ERROR, queue still full";
  // W1C: clearing DONE leaves ERROR.
  b.Write(OffsetOf("IRQ_STATUS"), kIrqDone);
  EXPECT_EQ(b.Read(OffsetOf("IRQ_STATUS")), kIrqError);
  b.Write(OffsetOf("IRQ_ENABLE"), kIrqDone);
  b.Step();
  EXPECT_FALSE(b.sim()->irq) << "ERROR pending but not enabled";
  b.Write(OffsetOf("IRQ_ENABLE"), kIrqDone | kIrqError);
  b.Write(OffsetOf("IRQ_STATUS"), 0xffffffff);
  b.Step();
  EXPECT_FALSE(b.sim()->irq);
  b.Write(OffsetOf("CTRL"), kCtrlClearError);
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("FAULT_PC_LO")), 0u);
  b.Steps(1500 * depth);
  EXPECT_EQ(b.Read(OffsetOf("LAUNCHES_DONE")), 1u + depth);
  EXPECT_EQ(status(), 0u);
  EXPECT_EQ(b.Read(OffsetOf("IRQ_STATUS")), kIrqDone);
  EXPECT_EQ(b.Log(3).size(), 6u * (depth + 1)) << "vector instructions of all launches";
}

TYPED_TEST(Control, AbortAndSoftReset) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  const Config config = LoadConfig(ConfigOf<TypeParam>::kName);
  Bench<TypeParam> b(config, seed, wave.Path());
  const auto program = BusyProgram(8);
  for (std::size_t i = 0; i < program.size(); ++i) b.StoreWord(0x1000 + 32 * i, program[i]);
  b.Write(OffsetOf("IRQ_ENABLE"), kIrqDone | kIrqError);
  // ABORT with nothing running does nothing.
  b.Write(OffsetOf("CTRL"), kCtrlAbort);
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("IRQ_STATUS")), 0u);
  // ABORT of a running launch with one queued: dispatched work finishes, ABORTED at the next
  // undispatched instruction, the queue is dropped.
  b.Freeze(true);
  b.Launch(0x1000, static_cast<std::uint32_t>(program.size()));
  b.Write(OffsetOf("DOORBELL"), 1);
  b.Steps(60);
  b.Write(OffsetOf("CTRL"), kCtrlAbort);
  EXPECT_EQ(b.Read(OffsetOf("STATUS")) >> 8 & 0xff, 0u) << "queued launches dropped";
  b.Freeze(false);
  b.WaitIrq();
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")), static_cast<std::uint32_t>(regs::ErrorCode::kAborted));
  const std::uint64_t dispatched = b.Log(3).size();
  EXPECT_GT(dispatched, 0u);
  EXPECT_LT(dispatched, 8u);
  EXPECT_EQ(b.Read(OffsetOf("FAULT_PC_LO")), 0x1000 + 32 * dispatched);
  EXPECT_EQ(b.Read(OffsetOf("LAUNCHES_DONE")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("STATUS")), 2u);
  // ABORT while launches wait behind the error: the oldest is reported (the first error
  // sticks, so only IRQ_STATUS.ERROR shows it) and the queue is dropped -- as the model does.
  b.Write(OffsetOf("IRQ_STATUS"), 7);
  b.Write(OffsetOf("DOORBELL"), 1);
  EXPECT_EQ(b.Read(OffsetOf("STATUS")), 2u | 1u << 8);
  b.Write(OffsetOf("CTRL"), kCtrlAbort);
  EXPECT_EQ(b.Read(OffsetOf("STATUS")), 2u);
  EXPECT_EQ(b.Read(OffsetOf("IRQ_STATUS")), kIrqError);
  // ABORT of a queued launch blocked by nothing but CLEAR_ERROR in the same write order:
  // CLEAR_ERROR after ABORT leaves no error (CTRL acts in bit order).
  b.Write(OffsetOf("DOORBELL"), 1);
  b.Write(OffsetOf("CTRL"), kCtrlAbort | kCtrlClearError);
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("STATUS")), 0u);
  // SOFT_RESET in the middle of a launch: error state, queue, IRQ state and LAUNCHES_DONE
  // return to reset; CMD_PC, CMD_COUNT, IRQ_ENABLE and the counters stay.
  b.Write(OffsetOf("CTRL"), kCtrlClearCounters);
  b.Launch(0x1000, static_cast<std::uint32_t>(program.size()));
  b.WaitIrq();
  EXPECT_EQ(b.Read(OffsetOf("LAUNCHES_DONE")), 1u);
  b.Freeze(true);
  b.Write(OffsetOf("DOORBELL"), 1);
  b.Steps(30);
  b.Write(OffsetOf("CMD_COUNT"), 0);
  b.Write(OffsetOf("DOORBELL"), 1);
  b.Write(OffsetOf("DOORBELL"), 1);
  const std::uint32_t insns_before = b.Read(OffsetOf("PERF_INSNS_LO"));
  EXPECT_GT(insns_before, 8u);
  b.Write(OffsetOf("CTRL"), kCtrlSoftReset);
  b.Freeze(false);
  b.Steps(50);
  EXPECT_EQ(b.Read(OffsetOf("STATUS")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("IRQ_STATUS")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("LAUNCHES_DONE")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("IRQ_ENABLE")), kIrqDone | kIrqError);
  EXPECT_EQ(b.Read(OffsetOf("CMD_PC_LO")), 0x1000u);
  EXPECT_EQ(b.Read(OffsetOf("CMD_COUNT")), 0u);
  EXPECT_GE(b.Read(OffsetOf("PERF_INSNS_LO")), insns_before) << "counters survive";
  EXPECT_TRUE(b.UnitsIdle());
  // The device works normally afterwards; CMD_COUNT = 0 faults PROGRAM_OVERRUN at CMD_PC.
  b.Launch(0x1000, static_cast<std::uint32_t>(program.size()));
  b.WaitIrq();
  EXPECT_EQ(b.Read(OffsetOf("LAUNCHES_DONE")), 1u);
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")), 0u);
  b.Launch(0x1000, 0);
  b.WaitIrq();
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")),
            static_cast<std::uint32_t>(regs::ErrorCode::kProgramOverrun));
  EXPECT_EQ(b.Read(OffsetOf("FAULT_PC_LO")), 0x1000u);
}

TYPED_TEST(Control, PerfCountersLoLatchesHi) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  const Config config = LoadConfig(ConfigOf<TypeParam>::kName);
  Bench<TypeParam> b(config, seed, wave.Path());
  const auto& counters = regs::Counters();
  ASSERT_EQ(counters.size(), 14u);
  // Lane i adds (i + 1) * 0x10000001 per cycle, so high halves move within a few hundred cycles.
  auto inc = [](std::size_t i) { return static_cast<std::uint32_t>((i + 1) * 0x10000001u); };
  b.Write(OffsetOf("CTRL"), kCtrlClearCounters);
  for (std::size_t i = 0; i < 14; ++i) b.sim()->perf_unit_inc[i] = inc(i);
  const std::uint64_t start = b.sim().Cycle();  // the first edge that adds
  b.Steps(100);
  // Reading HI without LO returns the last latched value: 0 after CLEAR_COUNTERS.
  EXPECT_EQ(b.Read(counters[5].lo + 4), 0u);
  for (std::size_t i = 0; i < 14; ++i) {
    const std::uint64_t edge = b.sim().Cycle();  // the read samples before this edge adds
    const std::uint64_t value = (edge - start) * std::uint64_t{inc(i)};
    EXPECT_EQ(b.Read(counters[i].lo), static_cast<std::uint32_t>(value)) << counters[i].name;
    b.Steps(7);
    EXPECT_EQ(b.Read(counters[i].lo + 4), static_cast<std::uint32_t>(value >> 32))
        << counters[i].name << ": HI is the half latched by the LO read";
    EXPECT_EQ(b.Read(counters[i].lo + 4), static_cast<std::uint32_t>(value >> 32));
  }
  for (std::size_t i = 0; i < 14; ++i) b.sim()->perf_unit_inc[i] = 0;
  b.Write(OffsetOf("CTRL"), kCtrlClearCounters);
  for (std::size_t i = 0; i < 14; ++i) {
    EXPECT_EQ(b.Read(counters[i].lo + 4), 0u) << counters[i].name << ": latch cleared";
    EXPECT_EQ(b.Read(counters[i].lo), 0u) << counters[i].name;
  }
  // The sequencer's own lanes: a launch counts CYCLES, INSNS and MACS.
  std::vector<Word> p = {
      isa::EncodeOrThrow(isa::MakeInstruction(Opcode::kLoadWeights,
                                              {{Field::kRows, 1}, {Field::kCols, 1}})),
      isa::EncodeOrThrow(isa::MakeInstruction(
          Opcode::kMatmul, {{Field::kPop, 1}, {Field::kRows, 3}, {Field::kK, 2}})),
      isa::EncodeOrThrow(isa::MakeInstruction(Opcode::kHalt, {}))};
  for (std::size_t i = 0; i < p.size(); ++i) b.StoreWord(32 * i, p[i]);
  b.Write(OffsetOf("IRQ_ENABLE"), kIrqDone | kIrqError);
  b.Launch(0, 3);
  b.WaitIrq();
  EXPECT_EQ(b.Read(OffsetOf("ERROR_CODE")), 0u);
  EXPECT_EQ(b.Read(OffsetOf("PERF_INSNS_LO")), 3u);
  EXPECT_EQ(b.Read(OffsetOf("PERF_MACS_LO")), 3u * 2u * config.cols);
  const std::uint32_t cycles = b.Read(OffsetOf("PERF_CYCLES_LO"));
  EXPECT_GT(cycles, 5u);
  b.Steps(20);
  EXPECT_EQ(b.Read(OffsetOf("PERF_CYCLES_LO")), cycles) << "CYCLES counts only launches";
}

}  // namespace
}  // namespace systole::rtl
