// The test bench of the vector unit: the Verilated vector_tb (unit + UB and ACC row RAMs) and
// the golden model side by side. Both start from the same unified-buffer and accumulator
// contents; every instruction runs on both, and afterwards every unified-buffer row the RTL
// holds (a mirror kept from the monitored row writes, itself checked against the RAM through
// the backdoor) must equal the model's, bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/isa/isa.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/rtl/harness.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl::vector_test {

using isa::Field;
using isa::Opcode;

// Verilator types a port as an integer up to 64 bits and as VlWide<N> above; these move
// little-endian bytes in and out of either.
template <class T>
void SetBytes(T& port, std::span<const std::uint8_t> bytes) {
  if constexpr (std::is_integral_v<T>) {
    T value = 0;
    for (std::size_t i = 0; i < bytes.size() && i < sizeof(T); ++i) {
      value |= static_cast<T>(static_cast<T>(bytes[i]) << (8 * i));
    }
    port = value;
  } else {
    for (std::size_t w = 0; w < std::size(port.m_storage); ++w) {
      std::uint32_t value = 0;
      for (std::size_t b = 0; b < 4; ++b) {
        const std::size_t i = 4 * w + b;
        if (i < bytes.size()) value |= static_cast<std::uint32_t>(bytes[i]) << (8 * b);
      }
      port.m_storage[w] = value;
    }
  }
}

template <class T>
void GetBytes(const T& port, std::span<std::uint8_t> bytes) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if constexpr (std::is_integral_v<T>) {
      bytes[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(port) >> (8 * i));
    } else {
      bytes[i] = static_cast<std::uint8_t>(port.m_storage[i / 4] >> (8 * (i % 4)));
    }
  }
}

inline std::string Describe(const isa::Instruction& insn) {
  static constexpr std::pair<Field, const char*> kNames[] = {
      {Field::kAcc, "acc"},       {Field::kUb, "ub"},         {Field::kRows, "rows"},
      {Field::kBias, "bias"},     {Field::kBiasRow, "bias_row"}, {Field::kFunc, "func"},
      {Field::kScale, "scale"},   {Field::kShift, "shift"},   {Field::kZeroPoint, "zp"},
      {Field::kLo, "lo"},         {Field::kHi, "hi"},         {Field::kOp, "op"},
      {Field::kBcast, "bcast"},   {Field::kA, "a"},           {Field::kB, "b"},
      {Field::kDst, "dst"},       {Field::kSrc, "src"},       {Field::kInW, "in_w"},
      {Field::kOutH, "out_h"},    {Field::kOutW, "out_w"},    {Field::kWinH, "win_h"},
      {Field::kWinW, "win_w"},    {Field::kStrideH, "stride_h"}, {Field::kStrideW, "stride_w"},
      {Field::kBcol, "bcol"},     {Field::kScalar, "scalar"}, {Field::kImm, "imm"}};
  std::ostringstream out;
  out << (insn.opcode == Opcode::kActivate ? "activate"
          : insn.opcode == Opcode::kVector ? "vector"
          : insn.opcode == Opcode::kAccVec ? "accvec" : "pool");
  for (const auto& [field, name] : kNames) {
    if (insn[field] != 0) out << ' ' << name << "=0x" << std::hex << insn[field] << std::dec;
  }
  return out.str();
}

struct Grants {
  double ub_rd = 1.0, ub_wr = 1.0, acc_rd = 1.0, acc_wr = 1.0;  // probability that a port is granted
};

template <class Model>
class Bench {
 public:
  static constexpr std::uint64_t kProgram = 0x1000;
  static constexpr std::uint64_t kData = 0x10000;

  Bench(const char* config, std::uint64_t seed, const std::filesystem::path& wave)
      : golden_(LoadConfigNameOrFile(config)),  // a name, or the path of a test configuration (rect.toml)
        sim_("vector", {.trace_path = wave, .seed = seed}),
        rng_(seed ^ 0x5eed) {
    const Config& c = golden_.config();
    bf16_ = c.dtype == DType::kBf16;
    cols_ = c.cols;
    width_ = std::max(c.rows, c.cols);
    elem_bytes_ = bf16_ ? 2 : 1;
    row_bytes_ = width_ * elem_bytes_;
    ub_rows_ = golden_.UbRows();
    acc_rows_ = golden_.AccRows();
    mirror_.assign(ub_rows_ * row_bytes_, 0);
    sim_->launch_start = 0;
    sim_->cmd_valid = 0;
    SetBytes(sim_->cmd_insn, std::vector<std::uint8_t>(32, 0));
    sim_->ub_rd_allow = 0;
    sim_->ub_wr_allow = 0;
    sim_->acc_rd_allow = 0;
    sim_->acc_wr_allow = 0;
    sim_->bd_acc_rd_en = 0;
    sim_->bd_ub_wr_en = 0;
    sim_->bd_ub_rd_en = 0;
    sim_->bd_ub_addr = 0;
    SetBytes(sim_->bd_ub_wr_data, std::vector<std::uint8_t>(row_bytes_, 0));
    sim_->bd_acc_wr_en = 0;
    sim_->bd_acc_addr = 0;
    SetBytes(sim_->bd_acc_wr_data, std::vector<std::uint8_t>(4 * cols_, 0));
    sim_.Reset();
    sim_->launch_start = 1;
    sim_.Tick();
    sim_->launch_start = 0;
  }

  bool bf16() const { return bf16_; }
  std::uint32_t width() const { return width_; }
  std::uint32_t cols() const { return cols_; }
  std::uint64_t ub_rows() const { return ub_rows_; }
  std::uint64_t acc_rows() const { return acc_rows_; }
  std::mt19937_64& rng() { return rng_; }
  Harness<Model>& sim() { return sim_; }

  // ---- random data ---------------------------------------------------------------------------
  std::uint16_t RandomBf16() {
    static constexpr std::uint16_t kSpecial[] = {
        0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x8080, 0x3F80, 0xBF80, 0x4000,
        0x40C0, 0x40BF, 0x40C1, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x0100};
    switch (rng_() % 8) {
      case 0: return kSpecial[rng_() % std::size(kSpecial)];
      case 1: return static_cast<std::uint16_t>(rng_());
      default: {  // moderate values, 2^-8 .. 2^7, where sums and products round
        const auto sign = static_cast<std::uint16_t>((rng_() & 1) << 15);
        const auto exponent = static_cast<std::uint16_t>(119 + rng_() % 16);
        return static_cast<std::uint16_t>(sign | exponent << 7 | (rng_() & 0x7F));
      }
    }
  }
  std::uint32_t RandomF32() {
    static constexpr std::uint32_t kSpecial[] = {
        0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x3F800000,
        0x40C00000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFF800001,
        0x3F808000, 0x3F818000, 0x7F7F8000, 0x00808000};
    switch (rng_() % 8) {
      case 0: return kSpecial[rng_() % std::size(kSpecial)];
      case 1: return static_cast<std::uint32_t>(rng_());
      case 2: {  // bf16 rounding ties
        return (static_cast<std::uint32_t>(RandomBf16()) << 16) | 0x8000;
      }
      default: {
        const auto sign = static_cast<std::uint32_t>(rng_() & 1) << 31;
        const auto exponent = static_cast<std::uint32_t>(115 + rng_() % 24);
        return sign | exponent << 23 | (static_cast<std::uint32_t>(rng_()) & 0x7FFFFF);
      }
    }
  }
  std::uint32_t RandomInt32() {
    switch (rng_() % 4) {
      case 0: return static_cast<std::uint32_t>(static_cast<std::int32_t>(rng_() % 600) - 300);
      case 1: return static_cast<std::uint32_t>(static_cast<std::int32_t>(rng_() % (1 << 21)) - (1 << 20));
      case 2: return static_cast<std::uint32_t>(rng_());
      default: {
        static constexpr std::uint32_t kSpecial[] = {0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000,
                                                     127, 128, 0xFFFFFF80, 0xFFFFFF7F, 6, 7};
        return kSpecial[rng_() % std::size(kSpecial)];
      }
    }
  }
  std::vector<std::uint8_t> RandomUbRow() {
    std::vector<std::uint8_t> row(row_bytes_);
    for (std::uint32_t j = 0; j < width_; ++j) {
      if (bf16_) {
        const std::uint16_t v = RandomBf16();
        row[2 * j] = static_cast<std::uint8_t>(v);
        row[2 * j + 1] = static_cast<std::uint8_t>(v >> 8);
      } else {
        row[j] = static_cast<std::uint8_t>(rng_());
      }
    }
    return row;
  }
  std::vector<std::uint32_t> RandomAccRow() {
    std::vector<std::uint32_t> row(cols_);
    for (auto& v : row) v = bf16_ ? RandomF32() : RandomInt32();
    return row;
  }

  // ---- state -------------------------------------------------------------------------------
  // Writes rows [first, first + rows.size()) of the unified buffer in both.
  void FillUb(std::uint64_t first, const std::vector<std::vector<std::uint8_t>>& rows) {
    std::vector<std::uint8_t> bytes;
    for (const auto& row : rows) bytes.insert(bytes.end(), row.begin(), row.end());
    golden_.WriteMemory(kData, bytes);
    RunGoldenOk(isa::MakeInstruction(Opcode::kLoad, {{Field::kMem, 0},
                                                    {Field::kDram, kData},
                                                    {Field::kStride, row_bytes_},
                                                    {Field::kRow, first},
                                                    {Field::kCol, 0},
                                                    {Field::kRows, rows.size()},
                                                    {Field::kElems, width_}}));
    sim_->bd_ub_wr_en = 1;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      sim_->bd_ub_addr = first + i;
      SetBytes(sim_->bd_ub_wr_data, rows[i]);
      sim_.Tick();
      std::memcpy(&mirror_[(first + i) * row_bytes_], rows[i].data(), row_bytes_);
    }
    sim_->bd_ub_wr_en = 0;
  }
  void FillAcc(std::uint64_t first, const std::vector<std::vector<std::uint32_t>>& rows) {
    std::vector<std::uint8_t> bytes;
    for (const auto& row : rows) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(row.data());
      bytes.insert(bytes.end(), p, p + 4 * row.size());
    }
    golden_.WriteMemory(kData, bytes);
    RunGoldenOk(isa::MakeInstruction(Opcode::kLoad, {{Field::kMem, 1},
                                                    {Field::kDram, kData},
                                                    {Field::kStride, 4 * cols_},
                                                    {Field::kRow, first},
                                                    {Field::kCol, 0},
                                                    {Field::kRows, rows.size()},
                                                    {Field::kElems, cols_}}));
    sim_->bd_acc_wr_en = 1;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      sim_->bd_acc_addr = first + i;
      const auto* p = reinterpret_cast<const std::uint8_t*>(rows[i].data());
      SetBytes(sim_->bd_acc_wr_data, std::span<const std::uint8_t>(p, 4 * rows[i].size()));
      sim_.Tick();
    }
    sim_->bd_acc_wr_en = 0;
  }
  void RandomFill(std::uint64_t ub_first, std::uint64_t ub_count) {
    std::vector<std::vector<std::uint8_t>> ub;
    for (std::uint64_t i = 0; i < ub_count; ++i) ub.push_back(RandomUbRow());
    FillUb(ub_first, ub);
    std::vector<std::vector<std::uint32_t>> acc;
    for (std::uint64_t i = 0; i < acc_rows_; ++i) acc.push_back(RandomAccRow());
    FillAcc(0, acc);
  }

  // Runs `insn` on the golden model alone; false (and nothing changed) if it faults.
  bool RunGolden(const isa::Instruction& insn) {
    std::vector<std::uint8_t> program;
    for (const isa::Instruction& i : {insn, isa::MakeInstruction(Opcode::kHalt, {})}) {
      const isa::Word word = isa::EncodeOrThrow(i);
      program.insert(program.end(), word.begin(), word.end());
    }
    golden_.WriteMemory(kProgram, program);
    return golden_.Execute(kProgram, 2).Ok();
  }
  void RunGoldenOk(const isa::Instruction& insn) {
    ASSERT_TRUE(RunGolden(insn)) << golden_.LastErrorMessage();
  }

  // Runs `insn` on both (it must be legal) under the grant probabilities `grants`, checks the
  // handshake and the whole unified buffer. Returns the cycles from acceptance to done.
  std::uint64_t Run(const isa::Instruction& insn, const Grants& grants = {}) {
    EXPECT_TRUE(RunGolden(insn)) << Describe(insn) << ": " << golden_.LastErrorMessage();
    const isa::Word word = isa::EncodeOrThrow(insn);
    SetBytes(sim_->cmd_insn, word);
    sim_->cmd_valid = 1;
    std::bernoulli_distribution ub_rd(grants.ub_rd), ub_wr(grants.ub_wr), acc_rd(grants.acc_rd),
        acc_wr(grants.acc_wr);
    std::uint64_t accepted_at = 0, cycles = 0;
    bool accepted = false, finished = false;
    std::vector<std::uint8_t> data(row_bytes_);
    for (std::uint64_t cycle = 0; cycle < kTimeout; ++cycle) {
      sim_->ub_rd_allow = ub_rd(rng_);
      sim_->ub_wr_allow = ub_wr(rng_);
      sim_->acc_rd_allow = acc_rd(rng_);
      sim_->acc_wr_allow = acc_wr(rng_);
      sim_.Eval();
      if (sim_->done) {
        EXPECT_TRUE(accepted && !finished) << Describe(insn) << ": done without an instruction";
        finished = true;
        cycles = cycle - accepted_at;
        break;
      }
      const bool accept_now = !accepted && sim_->cmd_ready;
      bool wrote = false;
      std::uint64_t wr_addr = 0;
      if (sim_->mon_ub_wr) {
        wrote = true;
        wr_addr = sim_->mon_ub_wr_addr;
        GetBytes(sim_->mon_ub_wr_data, data);
        ++writes_;
      }
      reads_ += sim_->mon_ub_rd + sim_->mon_acc_rd;
      writes_ += sim_->mon_acc_wr;
      sim_.Tick();
      if (accept_now) {
        accepted = true;
        accepted_at = cycle;
        sim_->cmd_valid = 0;
      }
      if (wrote) std::memcpy(&mirror_[wr_addr * row_bytes_], data.data(), row_bytes_);
    }
    EXPECT_TRUE(finished) << Describe(insn) << ": no done within " << kTimeout << " cycles";
    // One pulse only.
    sim_->ub_rd_allow = 1;
    sim_->ub_wr_allow = 1;
    sim_->acc_rd_allow = 1;
    sim_->acc_wr_allow = 1;
    sim_.Tick();
    sim_.Eval();
    EXPECT_FALSE(sim_->done) << Describe(insn) << ": done held for two cycles";
    EXPECT_FALSE(sim_->mon_ub_wr || sim_->mon_ub_rd || sim_->mon_acc_rd || sim_->mon_acc_wr)
        << Describe(insn) << ": port traffic after done";
    if (insn.opcode == Opcode::kAccVec) {
      CompareAcc(insn, insn[Field::kDst], insn[Field::kRows]);
    } else {
      CompareUb(insn);
    }
    ++instructions_;
    return cycles;
  }

  // Every unified-buffer row of the RTL (its mirror) against the model.
  void CompareUb(const isa::Instruction& insn) {
    int reported = 0;
    for (std::uint64_t r = 0; r < ub_rows_ && reported < 4; ++r) {
      const std::uint8_t* got = &mirror_[r * row_bytes_];
      const auto want = golden_.UbRow(r);
      if (std::memcmp(got, want.data(), row_bytes_) == 0) continue;
      ++reported;
      std::ostringstream msg;
      msg << Describe(insn) << ": UB row " << r << " differs (element: rtl/model)";
      for (std::uint32_t j = 0; j < width_; ++j) {
        std::uint32_t g = 0, w = 0;
        std::memcpy(&g, got + j * elem_bytes_, elem_bytes_);
        std::memcpy(&w, want.data() + j * elem_bytes_, elem_bytes_);
        if (g != w) msg << ' ' << j << ":0x" << std::hex << g << "/0x" << w << std::dec;
      }
      ADD_FAILURE() << msg.str();
    }
  }

  // Accumulator rows [first, first + count) of the RTL's RAM (through the backdoor read port)
  // against the model's, bit for bit.
  void CompareAcc(const isa::Instruction& insn, std::uint64_t first, std::uint64_t count) {
    std::vector<std::uint8_t> row(4 * cols_);
    int reported = 0;
    sim_->bd_acc_rd_en = 1;
    for (std::uint64_t r = first; r < first + count && reported < 4; ++r) {
      sim_->bd_acc_addr = r;
      sim_.Tick();
      GetBytes(sim_->bd_acc_rd_data, row);
      const auto want = golden_.AccRow(r);
      if (std::memcmp(row.data(), want.data(), row.size()) == 0) continue;
      ++reported;
      std::ostringstream msg;
      msg << Describe(insn) << ": ACC row " << r << " differs (element: rtl/model)";
      for (std::uint32_t j = 0; j < cols_; ++j) {
        std::uint32_t g = 0;
        std::memcpy(&g, row.data() + 4 * j, 4);
        if (g != want[j]) msg << ' ' << j << ":0x" << std::hex << g << "/0x" << want[j] << std::dec;
      }
      ADD_FAILURE() << msg.str();
    }
    sim_->bd_acc_rd_en = 0;
  }

  // The RAM itself (through the backdoor read port) against the mirror, rows [first, +count).
  void CheckRam(std::uint64_t first, std::uint64_t count) {
    std::vector<std::uint8_t> row(row_bytes_);
    sim_->bd_ub_rd_en = 1;
    for (std::uint64_t r = first; r < first + count; ++r) {
      sim_->bd_ub_addr = r;
      sim_.Tick();
      GetBytes(sim_->bd_ub_rd_data, row);
      ASSERT_EQ(0, std::memcmp(row.data(), &mirror_[r * row_bytes_], row_bytes_))
          << "UB RAM row " << r << " differs from the monitored writes";
    }
    sim_->bd_ub_rd_en = 0;
  }

  std::uint64_t instructions() const { return instructions_; }
  std::uint64_t writes() const { return writes_; }
  std::uint64_t reads() const { return reads_; }

 private:
  static constexpr std::uint64_t kTimeout = 200000;
  model::GoldenModel golden_;
  Harness<Model> sim_;
  std::mt19937_64 rng_;
  bool bf16_ = false;
  std::uint32_t cols_ = 0, width_ = 0, elem_bytes_ = 0, row_bytes_ = 0;
  std::uint64_t ub_rows_ = 0, acc_rows_ = 0;
  std::vector<std::uint8_t> mirror_;
  std::uint64_t instructions_ = 0, writes_ = 0, reads_ = 0;
};

}  // namespace systole::rtl::vector_test
