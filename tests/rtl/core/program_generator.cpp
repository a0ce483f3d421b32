#include "tests/rtl/core/program_generator.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace systole::rtl::test {
namespace {

using isa::Field;
using isa::Opcode;
using isa::Unit;

constexpr unsigned kUnits = isa::kNumUnits;

// Half-open intervals of rows or bytes an instruction touches.
struct Range {
  int space;  // 0 UB rows, 1 ACC rows, 2 device bytes
  std::uint64_t begin, end;
  bool Overlaps(const Range& other) const {
    return space == other.space && begin < other.end && other.begin < end;
  }
};
struct Footprint {
  std::vector<Range> reads, writes;
  bool ConflictsWith(const Footprint& other) const {
    auto any = [](const std::vector<Range>& a, const std::vector<Range>& b) {
      for (const Range& x : a)
        for (const Range& y : b)
          if (x.Overlaps(y)) return true;
      return false;
    };
    return any(writes, other.writes) || any(writes, other.reads) || any(reads, other.writes);
  }
};

class Generator {
 public:
  Generator(const Config& config, std::mt19937_64& rng) : c_(config), rng_(rng) {
    e_ = ElementBytes(config.dtype);
    ub_rows_ = std::min<std::uint64_t>(config.UbRows(), 96);
    acc_rows_ = std::min<std::uint64_t>(config.AccRows(), 48);
  }

  GeneratedProgram Run(unsigned length) {
    for (unsigned i = 0; i < length; ++i) {
      const unsigned pick = Pick(0, 99);
      if (pick < 14) Emit(Load());
      else if (pick < 24) Emit(Store());
      else if (pick < 38) Emit(LoadWeights());
      else if (pick < 62) { if (auto m = Matmul()) Emit(*m); }
      else if (pick < 76) Emit(Activate());
      else if (pick < 86) Emit(Vector());
      else if (pick < 90) Emit(Reduce());
      else if (pick < 95) { if (auto p = Pool()) Emit(*p); }
      else if (pick < 97) Emit({isa::MakeInstruction(Opcode::kInterrupt, {{Field::kCode, Pick(0, 65535)}}), {}});
      else Emit({isa::MakeInstruction(Opcode::kSync, {}), {}});
    }
    // Dump every used row so that the comparison covers all on-chip state.
    const std::uint64_t ub_row_bytes = c_.UbRowBytes();
    Emit({Dma(Opcode::kStore, 0, kDumpAddress, ub_row_bytes, 0, 0, ub_rows_, c_.UbRowElems()),
          {{Range{0, 0, ub_rows_}}, {Range{2, kDumpAddress, kDumpAddress + ub_rows_ * ub_row_bytes}}}});
    const std::uint64_t acc_dump = kDumpAddress + ub_rows_ * ub_row_bytes;
    Emit({Dma(Opcode::kStore, 1, acc_dump, c_.AccRowBytes(), 0, 0, acc_rows_, c_.cols),
          {{Range{1, 0, acc_rows_}}, {Range{2, acc_dump, acc_dump + acc_rows_ * c_.AccRowBytes()}}}});
    Emit({isa::MakeInstruction(Opcode::kHalt, {}), {}});
    GeneratedProgram program;
    program.instructions = std::move(program_);
    program.ub_rows_used = ub_rows_;
    program.acc_rows_used = acc_rows_;
    return program;
  }

 private:
  struct Candidate {
    isa::Instruction insn;
    Footprint footprint;
  };
  struct Emitted {
    std::size_t index;  // into program_
    Footprint footprint;
  };

  std::uint64_t Pick(std::uint64_t lo, std::uint64_t hi) { return lo + rng_() % (hi - lo + 1); }

  static isa::Instruction Dma(Opcode op, std::uint64_t mem, std::uint64_t dram, std::uint64_t stride,
                              std::uint64_t row, std::uint64_t col, std::uint64_t rows,
                              std::uint64_t elems) {
    return isa::MakeInstruction(op, {{Field::kMem, mem}, {Field::kDram, dram}, {Field::kStride, stride},
                                     {Field::kRow, row}, {Field::kCol, col}, {Field::kRows, rows},
                                     {Field::kElems, elems}});
  }

  // A 2-D device range: rows of `bytes` bytes `stride` apart, as one conservative interval.
  static Range DeviceSpan(std::uint64_t dram, std::uint64_t stride, std::uint64_t rows,
                          std::uint64_t bytes) {
    return Range{2, dram, dram + (rows - 1) * stride + bytes};
  }

  Candidate Load() {
    const bool acc = Pick(0, 3) == 0;
    const bool widen = acc && Pick(0, 1) == 0;  // element-type values widened into the accumulators
    const std::uint64_t s = acc && !widen ? 4 : e_, width = acc ? c_.cols : c_.UbRowElems();
    const std::uint64_t elems = Pick(1, width), col = Pick(0, width - elems);
    const std::uint64_t rows = Pick(1, 8), row = Pick(0, (acc ? acc_rows_ : ub_rows_) - rows);
    const std::uint64_t stride = s * Pick(0, 2 * width);
    const std::uint64_t dram = kDataAddress + s * Pick(0, (kDataBytes / 2) / s);
    isa::Instruction load = Dma(Opcode::kLoad, acc, dram, stride, row, col, rows, elems);
    load[Field::kWiden] = widen ? 1 : 0;
    return {load, {{DeviceSpan(dram, stride, rows, elems * s)}, {Range{acc ? 1 : 0, row, row + rows}}}};
  }

  Candidate Store() {
    const bool acc = Pick(0, 2) == 0;
    const std::uint64_t s = acc ? 4 : e_, width = acc ? c_.cols : c_.UbRowElems();
    const std::uint64_t elems = Pick(1, width), col = Pick(0, width - elems);
    const std::uint64_t rows = Pick(1, 8), row = Pick(0, (acc ? acc_rows_ : ub_rows_) - rows);
    const std::uint64_t stride = s * Pick(0, 2 * width);
    const std::uint64_t dram = kDataAddress + kDataBytes / 2 + s * Pick(0, (kDataBytes / 4) / s);
    return {Dma(Opcode::kStore, acc, dram, stride, row, col, rows, elems),
            {{Range{acc ? 1 : 0, row, row + rows}}, {DeviceSpan(dram, stride, rows, elems * s)}}};
  }

  Candidate LoadWeights() {
    // The FIFO must never hold more than weight_fifo_tiles un-popped tiles.
    if (loaded_ - popped_ >= c_.weight_fifo_tiles) return {isa::MakeInstruction(Opcode::kSync, {}), {}};
    const std::uint64_t k = Pick(1, c_.rows), n = Pick(1, c_.cols);
    const std::uint64_t stride = e_ * Pick(0, 2 * c_.cols);
    const std::uint64_t dram = kDataAddress + e_ * Pick(0, (kDataBytes / 2) / e_);
    ++loaded_;
    return {isa::MakeInstruction(Opcode::kLoadWeights, {{Field::kDram, dram}, {Field::kStride, stride},
                                                        {Field::kRows, k}, {Field::kCols, n}}),
            {{DeviceSpan(dram, stride, k, n * e_)}, {}}};
  }

  std::optional<Candidate> Matmul() {
    const bool can_pop = loaded_ > popped_;
    if (!can_pop && !has_stationary_) return std::nullopt;
    const bool pop = can_pop && (!has_stationary_ || Pick(0, 2) != 0);
    if (pop) { ++popped_; has_stationary_ = true; }
    const bool accumulate = Pick(0, 1) == 1;
    const std::uint64_t rows = Pick(1, 24), k = Pick(1, c_.rows);
    const std::uint64_t ub = Pick(0, ub_rows_ - rows), acc = Pick(0, acc_rows_ - rows);
    Footprint f{{Range{0, ub, ub + rows}}, {Range{1, acc, acc + rows}}};
    if (accumulate) f.reads.push_back(Range{1, acc, acc + rows});
    return Candidate{isa::MakeInstruction(Opcode::kMatmul, {{Field::kPop, pop}, {Field::kAccumulate, accumulate},
                                                           {Field::kUb, ub}, {Field::kAcc, acc},
                                                           {Field::kRows, rows}, {Field::kK, k}}),
                     f};
  }

  std::uint64_t ClampBits(bool lo) {
    if (c_.dtype == DType::kBf16) return lo ? 0xC000 /* -2.0 */ : 0x4080 /* 4.0 */;
    return static_cast<std::uint16_t>(lo ? -20 : 40);
  }

  Candidate Activate() {
    const std::uint64_t rows = Pick(1, 12), acc = Pick(0, acc_rows_ - rows), ub = Pick(0, ub_rows_ - rows);
    const bool bias = Pick(0, 1) == 1;
    const std::uint64_t bias_row = Pick(0, acc_rows_ - 1), func = Pick(0, 3);
    std::uint64_t scale = 0, shift = 0, zp = 0;
    if (c_.dtype == DType::kBf16) {
      static constexpr std::array<std::uint32_t, 4> kScales = {0, 0x3F800000, 0x3E000000, 0xC0400000};
      scale = kScales[Pick(0, 3)];
    } else {
      scale = Pick(0, 1000);
      shift = Pick(0, 20);
      // Signed fields take the two's-complement value sign-extended to 64 bits.
      zp = static_cast<std::uint64_t>(static_cast<std::int64_t>(Pick(0, 20)) - 10);
    }
    Footprint f{{Range{1, acc, acc + rows}}, {Range{0, ub, ub + rows}}};
    if (bias) f.reads.push_back(Range{1, bias_row, bias_row + 1});
    return {isa::MakeInstruction(Opcode::kActivate, {{Field::kAcc, acc}, {Field::kUb, ub}, {Field::kRows, rows},
                                                     {Field::kBias, bias}, {Field::kBiasRow, bias_row},
                                                     {Field::kFunc, func}, {Field::kScale, scale},
                                                     {Field::kShift, shift}, {Field::kZeroPoint, zp},
                                                     {Field::kLo, ClampBits(true)}, {Field::kHi, ClampBits(false)}}),
            f};
  }

  Candidate Vector() {
    const std::uint64_t rows = Pick(1, 12);
    const bool bcast = Pick(0, 3) == 0;
    const std::uint64_t op = Pick(0, 5);  // 5: pass, which reads no b
    const std::uint64_t a = Pick(0, ub_rows_ - rows), b = Pick(0, ub_rows_ - (bcast ? 1 : rows));
    // Sometimes in place or overlapping the source by one row.
    std::uint64_t dst = Pick(0, ub_rows_ - rows);
    if (Pick(0, 3) == 0) dst = std::min(a + Pick(0, 1), ub_rows_ - rows);
    Footprint f{{Range{0, a, a + rows}}, {Range{0, dst, dst + rows}}};
    if (op != static_cast<std::uint64_t>(isa::VecOp::kPass)) {
      f.reads.push_back(Range{0, b, b + (bcast ? 1 : rows)});
    }
    // bf16: a transcendental function in one VECTOR of three.
    const std::uint64_t math = c_.dtype == DType::kBf16 && Pick(0, 2) == 0 ? Pick(1, 7) : 0;
    return {isa::MakeInstruction(Opcode::kVector, {{Field::kOp, op}, {Field::kFunc, Pick(0, 3)},
                                                   {Field::kBcast, bcast}, {Field::kBcol, Pick(0, 3) == 0},
                                                   {Field::kMath, math}, {Field::kA, a}, {Field::kB, b},
                                                   {Field::kDst, dst}, {Field::kRows, rows},
                                                   {Field::kShift, c_.dtype == DType::kInt8 ? Pick(0, 8) : 0},
                                                   {Field::kLo, ClampBits(true)}, {Field::kHi, ClampBits(false)}}),
            f};
  }

  Candidate Reduce() {
    const std::uint64_t rows = Pick(1, 12);
    const bool over_rows = Pick(0, 1) == 1, sum = Pick(0, 1) == 1;
    const std::uint64_t src = Pick(0, ub_rows_ - rows);
    const std::uint64_t out_rows = over_rows ? 1 : rows;
    const std::uint64_t dst = Pick(0, 3) == 0 ? src : Pick(0, ub_rows_ - out_rows);
    std::uint64_t scale = 0, shift = 0;
    if (sum) {
      if (c_.dtype == DType::kBf16) scale = Pick(0, 1) == 0 ? 0 : 0x3D800000;  // 1 or 1/16
      else { scale = Pick(1, 300); shift = Pick(0, 10); }
    }
    return {isa::MakeInstruction(Opcode::kReduce, {{Field::kOp, sum}, {Field::kOver, over_rows},
                                                   {Field::kSrc, src}, {Field::kDst, dst},
                                                   {Field::kRows, rows},
                                                   {Field::kElems, Pick(1, c_.UbRowElems())},
                                                   {Field::kScale, scale}, {Field::kShift, shift}}),
            {{Range{0, src, src + rows}}, {Range{0, dst, dst + out_rows}}}};
  }

  std::optional<Candidate> Pool() {
    const std::uint64_t win_h = Pick(1, 3), win_w = Pick(1, 3), sh = Pick(1, 2), sw = Pick(1, 2);
    const std::uint64_t out_h = Pick(1, 3), out_w = Pick(1, 3);
    const std::uint64_t in_h = (out_h - 1) * sh + win_h, in_w = (out_w - 1) * sw + win_w + Pick(0, 1);
    if (in_h * in_w + out_h * out_w > ub_rows_) return std::nullopt;
    const std::uint64_t src = Pick(0, ub_rows_ - in_h * in_w), dst = Pick(0, ub_rows_ - out_h * out_w);
    const bool sum = Pick(0, 1) == 1;
    std::uint64_t scale = 0, shift = 0;
    if (sum) {
      if (c_.dtype == DType::kBf16) scale = 0x3E800000;  // 0.25
      else { scale = Pick(1, 300); shift = Pick(0, 10); }
    }
    return Candidate{isa::MakeInstruction(Opcode::kPool, {{Field::kOp, sum}, {Field::kSrc, src}, {Field::kDst, dst},
                                                          {Field::kInW, in_w}, {Field::kOutH, out_h},
                                                          {Field::kOutW, out_w}, {Field::kWinH, win_h},
                                                          {Field::kWinW, win_w}, {Field::kStrideH, sh},
                                                          {Field::kStrideW, sw}, {Field::kScale, scale},
                                                          {Field::kShift, shift}}),
                     {{Range{0, src, src + in_h * in_w}}, {Range{0, dst, dst + out_h * out_w}}}};
  }

  // Appends an instruction, first adding the tokens that order it after every conflicting
  // instruction of another unit (see the file comment).
  void Emit(Candidate candidate) {
    isa::Instruction& insn = candidate.insn;
    const auto* spec = isa::FindOpcode(static_cast<std::uint8_t>(insn.opcode));
    const auto unit = static_cast<unsigned>(spec->unit);
    if (unit >= kUnits) {  // SYNC, INTERRUPT, HALT execute in the sequencer
      if (insn.opcode != Opcode::kInterrupt) {
        for (unsigned v = 0; v < kUnits; ++v)
          for (unsigned u = 0; u < kUnits; ++u) synced_[v][u] = emitted_[v].size();
      }
      program_.push_back(insn);
      return;
    }
    for (unsigned v = 0; v < kUnits; ++v) {
      if (v == unit) continue;
      // The latest conflicting instruction of unit v not yet known to finish before `unit`'s
      // next instruction starts.
      std::optional<std::size_t> conflict;
      for (std::size_t j = synced_[v][unit]; j < emitted_[v].size(); ++j) {
        if (emitted_[v][j].footprint.ConflictsWith(candidate.footprint)) conflict = j;
      }
      if (!conflict) continue;
      // The last instruction of v signals `unit` (it completes after every earlier one of v).
      const std::size_t last = emitted_[v].size() - 1;
      program_[emitted_[v][last].index].signal |= static_cast<std::uint8_t>(1u << unit);
      insn.wait |= static_cast<std::uint8_t>(1u << v);
      synced_[v][unit] = last + 1;
    }
    emitted_[unit].push_back({program_.size(), candidate.footprint});
    program_.push_back(insn);
  }

  const Config& c_;
  std::mt19937_64& rng_;
  std::uint64_t e_ = 1, ub_rows_ = 0, acc_rows_ = 0;
  std::uint64_t loaded_ = 0, popped_ = 0;
  bool has_stationary_ = false;
  std::vector<isa::Instruction> program_;
  std::array<std::vector<Emitted>, kUnits> emitted_;
  // synced_[v][u]: instructions of unit v [0, synced) finish before unit u's next one starts.
  std::array<std::array<std::size_t, kUnits>, kUnits> synced_{};
};

}  // namespace

GeneratedProgram GenerateProgram(const Config& config, std::mt19937_64& rng, unsigned length) {
  return Generator(config, rng).Run(length);
}

}  // namespace systole::rtl::test
