// systole_mxu (rtl/mxu/) against the golden model's MATMUL, bit for bit.
//
// Every test is a list of episodes. An episode is one launch: launch_start, fresh UB rows and
// accumulator contents, then a sequence of weight-tile pushes and MATMULs. The same episode
// runs on the golden model as a program (LOAD the UB and ACC images, LOAD_WEIGHTS per tile,
// MATMUL, HALT) and on the RTL, where tiles enter the weight-row port and MATMULs the command
// port independently, each with its own random gaps (so a pop may wait for its tile, and tiles
// may run ahead up to the FIFO's capacity). Afterwards every accumulator row is compared.
//
// This file is compiled once per configuration (MXU_CONFIG, MXU_MODEL): tiny (4x4 int8),
// small-int8 (16x16 int8) and small (16x16 bf16).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include MXU_MODEL_HEADER
#include "sim/rtl/harness.hpp"
#include "tests/model/model_test_util.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl {
namespace {

using Model = MXU_MODEL;
namespace mt = model::testing;
using isa::Field;
using isa::MemSpace;
using isa::Opcode;

// ---- ports as little-endian byte strings ----------------------------------------------------

template <class Port>
void SetPort(Port& port, const std::uint8_t* bytes, std::size_t count) {
  if constexpr (std::is_integral_v<Port>) {
    std::uint64_t value = 0;
    std::memcpy(&value, bytes, std::min(count, sizeof(value)));
    port = static_cast<Port>(value);
  } else {
    std::memset(port.data(), 0, sizeof(port));
    std::memcpy(port.data(), bytes, std::min(count, sizeof(port)));
  }
}

template <class Port>
void GetPort(const Port& port, std::uint8_t* bytes, std::size_t count) {
  if constexpr (std::is_integral_v<Port>) {
    const auto value = static_cast<std::uint64_t>(port);
    std::memcpy(bytes, &value, std::min(count, sizeof(value)));
  } else {
    std::memcpy(bytes, port.data(), std::min(count, sizeof(port)));
  }
}

// ---- episodes -------------------------------------------------------------------------------

struct Matmul {
  std::uint32_t ub = 0, acc = 0, rows = 1, k = 1;
  bool pop = false, accumulate = false;
};

struct Op {
  bool is_tile = false;
  std::vector<std::uint8_t> tile;  // R x C elements, row-major, little-endian
  Matmul matmul;
};

// Random gaps: before each command / weight row, with `percent` probability, 1..max_gap idle
// cycles.
struct Gaps {
  unsigned cmd_percent = 0, cmd_max = 0;
  unsigned wrow_percent = 0, wrow_max = 0;
};

struct Episode {
  std::vector<std::uint8_t> ub;   // rows [0, n) of the UB, W elements each
  std::vector<std::uint32_t> acc;  // every accumulator row, C elements each (initial contents)
  std::vector<Op> ops;
  Gaps gaps;
  // Hold the first command back until the weight FIFO stops accepting rows (tiles ahead).
  bool tiles_first = false;
  std::uint64_t gap_seed = 1;  // the random gaps, so that an episode replays exactly
};

struct RunStats {
  std::uint64_t first_accept = 0, last_done = 0;  // cycles
  std::uint64_t busy = 0, stall_wfifo = 0, dones = 0, matmul_rows = 0, matmuls = 0;
  std::uint64_t first_ub_read = 0, first_acc_write = 0;
  double seconds = 0;
};

class MxuBench {
 public:
  MxuBench(std::uint64_t seed, const std::filesystem::path& wave)
      : config_(LoadConfig(MXU_CONFIG)),
        golden_(config_),
        sim_("mxu", {.trace_path = wave, .seed = seed}),
        rng_(seed),
        r_(config_.rows),
        c_(config_.cols),
        e_(ElementBytes(config_.dtype)),
        w_(config_.UbRowElems()),
        bf16_(config_.dtype == DType::kBf16) {
    sim_->launch_start = 0;
    sim_->cmd_valid = 0;
    SetPort(sim_->cmd_insn, zeros_.data(), 0);
    sim_->wrow_valid = 0;
    SetPort(sim_->wrow_data, zeros_.data(), 0);
    sim_->tb_ub_wr_en = 0;
    sim_->tb_ub_wr_addr = 0;
    SetPort(sim_->tb_ub_wr_data, zeros_.data(), 0);
    sim_->tb_acc_wr_en = 0;
    sim_->tb_acc_wr_addr = 0;
    SetPort(sim_->tb_acc_wr_data, zeros_.data(), 0);
    sim_->tb_acc_rd_en = 0;
    sim_->tb_acc_rd_addr = 0;
    sim_.Reset();
  }

  std::mt19937_64& rng() { return rng_; }
  std::uint32_t R() const { return r_; }
  std::uint32_t C() const { return c_; }
  bool Bf16() const { return bf16_; }
  std::uint32_t UbRows() const { return static_cast<std::uint32_t>(golden_.UbRows()); }
  std::uint32_t AccRows() const { return static_cast<std::uint32_t>(golden_.AccRows()); }
  std::uint32_t WfifoTiles() const { return config_.weight_fifo_tiles; }
  std::uint64_t Cycle() const { return sim_.Cycle(); }

  // ---- random data ----
  std::uint16_t RandomElement(bool specials) {
    if (bf16_) return mt::RandomBf16(rng_, specials);
    return static_cast<std::uint16_t>(rng_() & 0xFF);
  }
  void PutElement(std::vector<std::uint8_t>& bytes, std::size_t index, std::uint16_t value) {
    bytes[index * e_] = static_cast<std::uint8_t>(value);
    if (e_ == 2) bytes[index * e_ + 1] = static_cast<std::uint8_t>(value >> 8);
  }
  std::vector<std::uint8_t> RandomUb(std::uint32_t rows, bool specials) {
    std::vector<std::uint8_t> ub(std::size_t{rows} * w_ * e_);
    for (std::size_t i = 0; i < std::size_t{rows} * w_; ++i) PutElement(ub, i, RandomElement(specials));
    return ub;
  }
  // A tile with rows >= kr and columns >= kc zero (what LOAD_WEIGHTS with rows=kr, cols=kc
  // pushes).
  std::vector<std::uint8_t> RandomTile(bool specials, std::uint32_t kr = 0, std::uint32_t kc = 0) {
    if (kr == 0) kr = r_;
    if (kc == 0) kc = c_;
    std::vector<std::uint8_t> tile(std::size_t{r_} * c_ * e_);
    for (std::uint32_t t = 0; t < r_; ++t) {
      for (std::uint32_t j = 0; j < c_; ++j) {
        PutElement(tile, t * c_ + j, t < kr && j < kc ? RandomElement(specials) : 0);
      }
    }
    return tile;
  }
  std::uint32_t RandomAccValue(bool specials) {
    if (!bf16_) return static_cast<std::uint32_t>(rng_());
    if (specials && rng_() % 8 == 0) {
      static constexpr std::uint32_t kSpecial[] = {0x00000000, 0x80000000, 0x00000001, 0x807FFFFF,
                                                   0x00800000, 0x7F800000, 0xFF800000, 0x7FC00000,
                                                   0xFFC00001, 0x7F7FFFFF, 0xFF7FFFFF};
      return kSpecial[rng_() % std::size(kSpecial)];
    }
    return std::uint32_t{mt::RandomBf16(rng_, false)} << 16 | static_cast<std::uint32_t>(rng_() & 0xFFFF);
  }
  std::vector<std::uint32_t> RandomAcc(bool specials) {
    std::vector<std::uint32_t> acc(std::size_t{AccRows()} * c_);
    for (auto& v : acc) v = RandomAccValue(specials);
    return acc;
  }

  // ---- one episode on both models ----
  RunStats Run(const Episode& episode) {
    RunGolden(episode);
    const RunStats stats = RunRtl(episode);
    CompareAcc();
    return stats;
  }

  void CompareAcc() {
    std::vector<std::uint8_t> bytes(std::size_t{c_} * 4);
    int mismatches = 0;
    for (std::uint32_t row = 0; row < AccRows(); ++row) {
      sim_->tb_acc_rd_en = 1;
      sim_->tb_acc_rd_addr = row;
      sim_.Tick();
      sim_->tb_acc_rd_en = 0;
      sim_.Eval();
      GetPort(sim_->tb_acc_rd_data, bytes.data(), bytes.size());
      const auto expect = golden_.AccRow(row);
      for (std::uint32_t j = 0; j < c_; ++j) {
        std::uint32_t got = 0;
        std::memcpy(&got, &bytes[j * 4], 4);
        if (got != expect[j] && mismatches++ < 8) {
          ADD_FAILURE() << fmt::format("ACC[{}][{}]: rtl 0x{:08x}, golden 0x{:08x}", row, j, got,
                                       expect[j]);
        }
      }
    }
    EXPECT_EQ(mismatches, 0) << "accumulator elements differ";
  }

 private:
  void RunGolden(const Episode& episode) {
    const std::uint64_t ub_rows = episode.ub.size() / (std::size_t{w_} * e_);
    const std::uint64_t ub_addr = 0x10000;
    const std::uint64_t acc_addr = Align(ub_addr + episode.ub.size());
    const std::uint64_t tile_addr = Align(acc_addr + episode.acc.size() * 4);
    std::uint64_t tiles = 0;
    for (const Op& op : episode.ops) tiles += op.is_tile ? 1 : 0;
    const std::uint64_t tile_bytes = std::size_t{r_} * c_ * e_;
    const std::uint64_t program_addr = Align(tile_addr + tiles * tile_bytes);

    if (!episode.ub.empty()) golden_.WriteMemory(ub_addr, episode.ub);
    mt::WriteArray(golden_, acc_addr, episode.acc);
    std::vector<isa::Instruction> program;
    if (ub_rows > 0) {
      program.push_back(mt::Dma(Opcode::kLoad, MemSpace::kUb, ub_addr, std::uint64_t{w_} * e_, 0, 0,
                                ub_rows, w_));
    }
    program.push_back(mt::Dma(Opcode::kLoad, MemSpace::kAcc, acc_addr, std::uint64_t{c_} * 4, 0, 0,
                              AccRows(), c_));
    program.push_back(mt::Sync());
    std::uint64_t next_tile = tile_addr;
    for (const Op& op : episode.ops) {
      if (op.is_tile) {
        golden_.WriteMemory(next_tile, op.tile);
        program.push_back(mt::LoadWeights(next_tile, std::uint64_t{c_} * e_, r_, c_));
        next_tile += tile_bytes;
      } else {
        const Matmul& m = op.matmul;
        program.push_back(mt::Matmul(m.ub, m.acc, m.rows, m.k, m.pop, m.accumulate));
      }
    }
    program.push_back(mt::Halt());
    const model::LaunchResult result = mt::RunProgram(golden_, program, program_addr);
    ASSERT_TRUE(result.Ok()) << result.message;
  }

  static std::uint64_t Align(std::uint64_t address) { return (address + 0xFFF) & ~std::uint64_t{0xFFF}; }

  static std::uint32_t Gap(std::mt19937_64& rng, unsigned percent, unsigned max) {
    if (max == 0 || rng() % 100 >= percent) return 0;
    return 1 + static_cast<std::uint32_t>(rng() % max);
  }

  RunStats RunRtl(const Episode& episode) {
    RunStats stats;
    // A new launch: the weight FIFO and the stationary tile are cleared.
    sim_->launch_start = 1;
    sim_.Tick();
    sim_->launch_start = 0;
    // UB and ACC contents through the test ports.
    const std::size_t ub_row_bytes = std::size_t{w_} * e_;
    for (std::size_t row = 0; row * ub_row_bytes < episode.ub.size(); ++row) {
      sim_->tb_ub_wr_en = 1;
      sim_->tb_ub_wr_addr = static_cast<std::uint32_t>(row);
      SetPort(sim_->tb_ub_wr_data, &episode.ub[row * ub_row_bytes], ub_row_bytes);
      sim_.Tick();
    }
    sim_->tb_ub_wr_en = 0;
    for (std::uint32_t row = 0; row < AccRows(); ++row) {
      sim_->tb_acc_wr_en = 1;
      sim_->tb_acc_wr_addr = row;
      SetPort(sim_->tb_acc_wr_data, reinterpret_cast<const std::uint8_t*>(&episode.acc[row * c_]),
              std::size_t{c_} * 4);
      sim_.Tick();
    }
    sim_->tb_acc_wr_en = 0;

    // The two streams.
    std::vector<isa::Word> commands;
    std::vector<const std::uint8_t*> weight_rows;
    for (const Op& op : episode.ops) {
      if (op.is_tile) {
        for (std::uint32_t t = 0; t < r_; ++t) weight_rows.push_back(&op.tile[std::size_t{t} * c_ * e_]);
      } else {
        const Matmul& m = op.matmul;
        commands.push_back(isa::EncodeOrThrow(mt::Matmul(m.ub, m.acc, m.rows, m.k, m.pop, m.accumulate)));
        stats.matmul_rows += m.rows;
        ++stats.matmuls;
      }
    }
    const Gaps& gaps = episode.gaps;
    std::mt19937_64 gap_rng(episode.gap_seed);
    std::size_t next_cmd = 0, next_row = 0;
    std::uint32_t cmd_gap = Gap(gap_rng, gaps.cmd_percent, gaps.cmd_max);
    std::uint32_t row_gap = Gap(gap_rng, gaps.wrow_percent, gaps.wrow_max);
    bool hold_commands = episode.tiles_first;
    std::uint64_t budget = 10000 + 4 * stats.matmul_rows + weight_rows.size() * (gaps.wrow_max + 4) +
                           commands.size() * (gaps.cmd_max + 4 * (r_ + c_));
    const auto start = std::chrono::steady_clock::now();
    while (next_cmd < commands.size() || next_row < weight_rows.size() || stats.dones < commands.size()) {
      if (budget-- == 0) {
        ADD_FAILURE() << fmt::format("timeout at cycle {}: {} of {} commands accepted, {} of {} "
                                     "weight rows, {} done", sim_.Cycle(), next_cmd, commands.size(),
                                     next_row, weight_rows.size(), stats.dones);
        return stats;
      }
      const bool cmd_valid = next_cmd < commands.size() && cmd_gap == 0 && !hold_commands;
      sim_->cmd_valid = cmd_valid;
      if (cmd_valid) SetPort(sim_->cmd_insn, commands[next_cmd].data(), commands[next_cmd].size());
      const bool row_valid = next_row < weight_rows.size() && row_gap == 0;
      sim_->wrow_valid = row_valid;
      if (row_valid) SetPort(sim_->wrow_data, weight_rows[next_row], std::size_t{c_} * e_);
      sim_.Eval();
      const bool cmd_fire = cmd_valid && sim_->cmd_ready;
      const bool row_fire = row_valid && sim_->wrow_ready;
      if (hold_commands && (!sim_->wrow_ready || next_row == weight_rows.size())) hold_commands = false;
      if (cmd_fire && next_cmd == 0) stats.first_accept = sim_.Cycle();
      if (sim_->ub_rd_en && stats.first_ub_read == 0) stats.first_ub_read = sim_.Cycle();
      if (sim_->acc_wr_en && stats.first_acc_write == 0) stats.first_acc_write = sim_.Cycle();
      stats.busy += sim_->busy_event;
      stats.stall_wfifo += sim_->stall_wfifo;
      if (sim_->done) {
        ++stats.dones;
        stats.last_done = sim_.Cycle();
        if (stats.dones > commands.size()) ADD_FAILURE() << "more done pulses than MATMULs";
      }
      sim_.Tick();
      if (cmd_fire) {
        ++next_cmd;
        cmd_gap = Gap(gap_rng, gaps.cmd_percent, gaps.cmd_max);
      } else if (cmd_gap > 0 && !hold_commands) {
        --cmd_gap;
      }
      if (row_fire) {
        ++next_row;
        row_gap = Gap(gap_rng, gaps.wrow_percent, gaps.wrow_max);
      } else if (row_gap > 0) {
        --row_gap;
      }
    }
    sim_->cmd_valid = 0;
    sim_->wrow_valid = 0;
    // Nothing more may happen after the last done.
    for (int i = 0; i < 2 * static_cast<int>(r_ + c_) + 8; ++i) {
      sim_.Eval();
      EXPECT_FALSE(sim_->done) << "done pulse without a MATMUL at cycle " << sim_.Cycle();
      EXPECT_FALSE(sim_->acc_wr_en) << "accumulator write after the last done";
      EXPECT_FALSE(sim_->busy_event);
      sim_.Tick();
    }
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(stats.busy, stats.matmul_rows) << "busy_event must count every input row once";
    return stats;
  }

  Config config_;
  model::GoldenModel golden_;
  Harness<Model> sim_;
  std::mt19937_64 rng_;
  std::uint32_t r_, c_, e_, w_;
  bool bf16_;
  std::array<std::uint8_t, 1> zeros_{};
};

// ---- helpers to write episodes --------------------------------------------------------------

Op Tile(std::vector<std::uint8_t> tile) { return Op{.is_tile = true, .tile = std::move(tile), .matmul = {}}; }
Op Mm(std::uint32_t ub, std::uint32_t acc, std::uint32_t rows, std::uint32_t k, bool pop,
      bool accumulate) {
  return Op{.is_tile = false, .tile = {}, .matmul = {ub, acc, rows, k, pop, accumulate}};
}

// ---- directed tests -------------------------------------------------------------------------

TEST(MXU_SUITE, LatencyAndOneMatmul) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  MxuBench bench(seed, wave.Path());
  const std::uint32_t r = bench.R(), c = bench.C();
  Episode ep;
  ep.ub = bench.RandomUb(8, false);
  ep.acc = bench.RandomAcc(false);
  ep.ops = {Tile(bench.RandomTile(false)), Mm(0, 0, 3, r, true, false)};
  const RunStats stats = bench.Run(ep);
  // ub_rd_en of the first row to its accumulator write: R + C + 1 cycles.
  EXPECT_EQ(stats.first_acc_write - stats.first_ub_read, r + c + 1);
  EXPECT_EQ(stats.dones, 1u);
  std::cout << fmt::format("[ latency  ] ub_rd_en -> acc_wr_en: {} cycles (R + C + 1)\n",
                           stats.first_acc_write - stats.first_ub_read);
}

TEST(MXU_SUITE, KBelowRMasksTheRestOfTheRow) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  MxuBench bench(seed, wave.Path());
  const std::uint32_t r = bench.R();
  Episode ep;
  ep.ub = bench.RandomUb(2 * r + 4, false);  // non-zero garbage beyond k everywhere
  ep.acc = bench.RandomAcc(false);
  ep.ops.push_back(Tile(bench.RandomTile(false)));
  std::uint32_t acc = 0;
  for (std::uint32_t k = 1; k <= r; ++k) {
    ep.ops.push_back(Mm(k % 4, acc, 3, k, k == 1, false));
    acc += 3;
    if (acc + 3 > bench.AccRows()) acc = 0;
  }
  bench.Run(ep);
}

TEST(MXU_SUITE, PopAndReuseOfTheStationaryTile) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  MxuBench bench(seed, wave.Path());
  const std::uint32_t r = bench.R();
  Episode ep;
  ep.ub = bench.RandomUb(16, false);
  ep.acc = bench.RandomAcc(false);
  ep.ops = {Tile(bench.RandomTile(false)), Tile(bench.RandomTile(false, r / 2 + 1, 1)),
            Mm(0, 0, 4, r, true, false),    // tile A
            Mm(4, 4, 2, r, false, false),   // A again
            Mm(0, 6, 1, r, false, true),    // A, accumulate
            Mm(2, 8, 5, r, true, false),    // tile B (partial tile: zero rows and columns)
            Tile(bench.RandomTile(false)),
            Mm(3, 13, 3, r, false, true),   // B again
            Mm(1, 16, 2, r, true, false),   // tile C
            Mm(1, 18, 2, r, false, false)};
  // Weight rows arrive late and slowly: pops must wait for their tiles.
  ep.gaps = {.cmd_percent = 0, .cmd_max = 0, .wrow_percent = 60, .wrow_max = 12};
  const RunStats stats = bench.Run(ep);
  EXPECT_GT(stats.stall_wfifo, 0u);
}

TEST(MXU_SUITE, AccumulateAndOverwrite) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  MxuBench bench(seed, wave.Path());
  const std::uint32_t r = bench.R();
  Episode ep;
  ep.ub = bench.RandomUb(40, false);
  ep.acc = bench.RandomAcc(false);
  ep.ops = {Tile(bench.RandomTile(false)), Mm(0, 0, 10, r, true, true), Mm(10, 10, 10, r, false, false),
            Mm(20, 0, 20, r, false, true), Mm(5, 30, 7, r, false, false),
            Mm(6, 31, 7, r, false, true)};
  bench.Run(ep);
}

// K tiling: consecutive MATMULs accumulate into the same rows, the later ones reading what the
// earlier ones are still writing (forwarding), down to rows=1.
TEST(MXU_SUITE, BackToBackAccumulationIntoTheSameRows) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  MxuBench bench(seed, wave.Path());
  const std::uint32_t r = bench.R();
  Episode ep;
  ep.ub = bench.RandomUb(32, false);
  ep.acc = bench.RandomAcc(false);
  ep.ops.push_back(Tile(bench.RandomTile(false)));
  ep.ops.push_back(Mm(0, 5, 1, r, true, false));
  for (std::uint32_t i = 1; i < 12; ++i) ep.ops.push_back(Mm(i, 5, 1, r, false, true));  // rows=1
  for (std::uint32_t rows = 1; rows <= 4; ++rows) {  // rows = 2, 3, 4 chains: forwarding distances
    for (std::uint32_t i = 0; i < 4; ++i) ep.ops.push_back(Mm(i * 3, 10, rows, r, false, i > 0 || rows > 1));
  }
  // With tile swaps in between (pop each time).
  for (std::uint32_t i = 0; i < 3; ++i) {
    ep.ops.push_back(Tile(bench.RandomTile(false)));
    ep.ops.push_back(Mm(i, 20, 1, r, true, true));
  }
  for (std::uint32_t i = 0; i < 3; ++i) {
    ep.ops.push_back(Tile(bench.RandomTile(false)));
    ep.ops.push_back(Mm(i, 24, 2, r, true, true));
  }
  ep.tiles_first = true;
  bench.Run(ep);
}

TEST(MXU_SUITE, SpecialValues) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  MxuBench bench(seed, wave.Path());
  const std::uint32_t r = bench.R();
  auto& rng = bench.rng();
  for (int round = 0; round < 3; ++round) {
    Episode ep;
    // Mostly special values (bf16: NaN, inf, subnormals, signed zeros; int8: -128, 127, 0).
    ep.ub = bench.RandomUb(32, true);
    ep.acc = bench.RandomAcc(true);
    auto special_tile = [&] {
      std::vector<std::uint8_t> tile = bench.RandomTile(true);
      const auto specials = mt::SpecialBf16();
      for (std::size_t i = 0; i < tile.size() / (bench.Bf16() ? 2 : 1); ++i) {
        if (rng() % 3 != 0) continue;
        const std::uint16_t v = bench.Bf16() ? specials[rng() % specials.size()]
                                             : static_cast<std::uint16_t>(rng() % 2 ? 0x80 : 0x7F);
        bench.PutElement(tile, i, v);
      }
      return tile;
    };
    for (std::size_t i = 0; i < ep.ub.size() / (bench.Bf16() ? 2 : 1); ++i) {
      if (rng() % 3 != 0) continue;
      const auto specials = mt::SpecialBf16();
      bench.PutElement(ep.ub, i, bench.Bf16() ? specials[rng() % specials.size()]
                                              : static_cast<std::uint16_t>(rng() % 2 ? 0x80 : 0x7F));
    }
    ep.ops = {Tile(special_tile()), Mm(0, 0, 16, r, true, false), Mm(16, 16, 16, r, false, true),
              Tile(special_tile()), Mm(0, 32, 16, (r + 1) / 2, true, true),
              Mm(8, 32, 16, r, false, true)};
    bench.Run(ep);
  }
}

// Tiles left in the FIFO at the end of a launch are gone in the next one.
TEST(MXU_SUITE, LaunchStartClearsTheWeightFifo) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  MxuBench bench(seed, wave.Path());
  const std::uint32_t r = bench.R();
  Episode first;
  first.ub = bench.RandomUb(8, false);
  first.acc = bench.RandomAcc(false);
  first.ops = {Tile(bench.RandomTile(false)), Mm(0, 0, 4, r, true, false)};
  for (std::uint32_t i = 0; i < bench.WfifoTiles(); ++i) first.ops.push_back(Tile(bench.RandomTile(false)));
  bench.Run(first);
  Episode second = first;
  second.ops = {Tile(bench.RandomTile(false)), Mm(0, 4, 4, r, true, false)};
  bench.Run(second);
}

// ---- randomized sequences ----------------------------------------------------------------

Episode RandomEpisode(MxuBench& bench, std::uint32_t ops) {
  auto& rng = bench.rng();
  const std::uint32_t r = bench.R(), c = bench.C();
  const std::uint32_t ub_rows = std::min<std::uint32_t>(bench.UbRows(), 4 * (r + c) + 16);
  const std::uint32_t acc_rows = bench.AccRows();
  const bool specials = rng() % 4 == 0;
  Episode ep;
  ep.ub = bench.RandomUb(ub_rows, specials);
  ep.acc = bench.RandomAcc(specials);
  ep.gaps = {.cmd_percent = static_cast<unsigned>(rng() % 60),
             .cmd_max = static_cast<unsigned>(rng() % 2 ? 3 : 2 * (r + c)),
             .wrow_percent = static_cast<unsigned>(rng() % 60),
             .wrow_max = static_cast<unsigned>(rng() % 2 ? 3 : 2 * r)};
  ep.tiles_first = rng() % 4 == 0;
  ep.gap_seed = rng();
  std::uint32_t outstanding = 0;  // pushed, not popped
  bool stationary = false;
  Matmul previous{};
  for (std::uint32_t i = 0; i < ops; ++i) {
    if (outstanding < bench.WfifoTiles() && (rng() % 3 == 0 || (!stationary && outstanding == 0))) {
      const std::uint32_t kr = rng() % 4 == 0 ? 1 + static_cast<std::uint32_t>(rng() % r) : r;
      const std::uint32_t kc = rng() % 4 == 0 ? 1 + static_cast<std::uint32_t>(rng() % c) : c;
      ep.ops.push_back(Tile(bench.RandomTile(specials, kr, kc)));
      ++outstanding;
      continue;
    }
    Matmul m;
    m.pop = outstanding > 0 && (!stationary || rng() % 2 == 0);
    if (m.pop) {
      --outstanding;
      stationary = true;
    }
    switch (rng() % 5) {
      case 0: m.rows = 1; break;
      case 1: m.rows = 2 + static_cast<std::uint32_t>(rng() % 3); break;
      case 2: m.rows = r + c + static_cast<std::uint32_t>(rng() % (r + c)); break;
      default: m.rows = 1 + static_cast<std::uint32_t>(rng() % (2 * (r + c))); break;
    }
    m.rows = std::min({m.rows, ub_rows, acc_rows});
    m.k = rng() % 2 ? r : 1 + static_cast<std::uint32_t>(rng() % r);
    m.ub = static_cast<std::uint32_t>(rng() % (ub_rows - m.rows + 1));
    if (i > 0 && rng() % 3 == 0 && previous.acc + m.rows <= acc_rows) {
      m.acc = previous.acc;  // K tiling: accumulate into the rows just written
      m.accumulate = true;
    } else {
      m.acc = static_cast<std::uint32_t>(rng() % (acc_rows - m.rows + 1));
      m.accumulate = rng() % 2 == 0;
    }
    ep.ops.push_back(Op{.is_tile = false, .tile = {}, .matmul = m});
    previous = m;
  }
  return ep;
}

// Waveforms: tracing every episode of the 16x16 configurations would dominate the run time, so
// the episodes run untraced (unless SYSTOLE_WAVES=1) and a failing episode is replayed once on a
// fresh, traced model; that waveform is kept.
TEST(MXU_SUITE, RandomSequences) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave(true);
  std::optional<Episode> failed;
  {
    MxuBench bench(seed, test::WavesRequested() ? wave.Path() : std::filesystem::path());
    const int episodes = bench.R() * bench.C() > 64 ? 80 : 2000;
    std::uint64_t matmuls = 0, rows = 0, stalls = 0, cycles = 0;
    int passed = 0;
    for (int i = 0; i < episodes; ++i) {
      const std::uint64_t start = bench.Cycle();
      Episode episode = RandomEpisode(bench, 40);
      const RunStats stats = bench.Run(episode);
      if (::testing::Test::HasFailure()) {
        std::cout << fmt::format("[ replay   ] episode {} failed; replaying it alone with a "
                                 "waveform\n", i);
        failed = std::move(episode);
        break;
      }
      matmuls += stats.matmuls;
      rows += stats.matmul_rows;
      stalls += stats.stall_wfifo;
      cycles += bench.Cycle() - start;
      ++passed;
    }
    std::cout << fmt::format("[ random   ] {} episodes passed: {} MATMULs, {} input rows, {} "
                             "stall_wfifo cycles, {} cycles\n", passed, matmuls, rows, stalls,
                             cycles);
  }
  // One model at a time: the untraced one is gone before the traced replay starts.
  if (failed && !test::WavesRequested()) {
    MxuBench replay(seed, wave.Path());
    replay.Run(*failed);
  }
}

// ---- performance ---------------------------------------------------------------------------

// N back-to-back MATMULs, each popping a new tile, tiles pushed ahead: MAC utilization from the
// first accept to the last done must be at least 95%.
// rows_per_matmul 0 means R + C.
void Utilization(std::uint32_t rows_per_matmul, std::uint32_t matmuls, const char* what) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave(false);
  MxuBench bench(seed, wave.Path());
  const std::uint32_t r = bench.R(), c = bench.C();
  if (rows_per_matmul == 0) rows_per_matmul = r + c;
  rows_per_matmul = std::min(rows_per_matmul, bench.AccRows());
  Episode ep;
  ep.ub = bench.RandomUb(rows_per_matmul + 8, false);
  ep.acc = bench.RandomAcc(false);
  for (std::uint32_t i = 0; i < matmuls; ++i) {
    ep.ops.push_back(Tile(bench.RandomTile(false)));
    ep.ops.push_back(Mm(i % 8, 0, rows_per_matmul, r, true, i % 2 == 1));
  }
  ep.tiles_first = true;
  const RunStats stats = bench.Run(ep);
  const std::uint64_t cycles = stats.last_done - stats.first_accept + 1;
  const double macs = static_cast<double>(stats.matmul_rows) * r * c;
  const double utilization = macs / (static_cast<double>(cycles) * r * c);
  const double total_cycles = static_cast<double>(cycles);
  std::cout << fmt::format("[ util     ] {} {}: {} MATMULs x {} rows: {} cycles, utilization "
                           "{:.2f}% of {}x{} MACs/cycle; stall_wfifo {} cycles\n",
                           MXU_CONFIG, what, matmuls, rows_per_matmul, cycles,
                           100.0 * utilization, r, c, stats.stall_wfifo);
  std::cout << fmt::format("[ speed    ] {:.0f} cycles/s, {:.3g} PE-updates/s (Verilator, "
                           "including the test's driving)\n",
                           total_cycles / stats.seconds, total_cycles * r * c / stats.seconds);
  EXPECT_GE(utilization, 0.95);
}

TEST(MXU_SUITE, UtilizationLargeGemm) { Utilization(256, 24, "rows=256"); }
// The shortest MATMULs that still hide the tile swap: rows = R + C.
TEST(MXU_SUITE, UtilizationRowsRPlusC) { Utilization(0, 64, "rows=R+C"); }

}  // namespace
}  // namespace systole::rtl
