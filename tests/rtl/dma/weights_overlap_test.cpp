// The WEIGHT unit overlaps back-to-back LOAD_WEIGHTS (rtl/dma/systole_dma_weights.sv): it takes
// the next instruction once the current one's rows are all handed to the row reader, so the
// next tile's requests go out while this tile's words come back. These tests feed LOAD_WEIGHTS
// as fast as the unit takes them, against a memory with a long latency, and check that
//  * every tile's rows are the golden model's (k rows from memory, then zero rows), in order;
//  * `done` pulses once per instruction, in order, right after its last row;
//  * (directed) N tiles take fewer than N × latency cycles — without the overlap every tile
//    pays the latency plus its ROWS rows — and the unit took a tile before the previous was done.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <random>
#include <vector>

#include "Vvl_dma_small.h"
#include "Vvl_dma_tiny.h"
#include "arch/config/config.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/rtl/harness.hpp"
#include "sim/rtl/memory_port.hpp"
#include "sim/rtl/signals.hpp"
#include "tests/model/model_test_util.hpp"
#include "tests/rtl/dma/dma_tb.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl {
namespace {

using model::testing::Halt;
using model::testing::kDataAddress;
using model::testing::LoadWeights;
using model::testing::RunProgram;

using dma_tb::kDataBytes;
using dma_tb::kWeight;

constexpr unsigned kLatency = 40;

struct Tile {
  isa::Instruction insn;
  std::uint64_t dram, stride, k, n;
};

struct Outcome {
  std::uint64_t first_accept = 0, last_done = 0;
  bool overlapped = false;  // some tile was taken before the previous tile's done
};

// Runs `tiles` back to back; `random_stalls` adds memory and weight-FIFO back-pressure.
template <class Model>
Outcome RunTiles(const Config& config, std::uint64_t seed, const std::vector<Tile>& tiles,
                 model::DeviceMemory& memory, bool random_stalls) {
  test::Waveform wave(false);
  MemoryPort port(memory, {.latency = kLatency, .ready_percent = random_stalls ? 70u : 100u,
                           .seed = seed});
  Harness<Model> sim("dma", {.trace_path = wave.Path(), .seed = seed});
  std::mt19937_64 rng(seed ^ 0x5eed);
  sim->cmd_valid = 0;
  sim->wrow_ready = 0;
  sim->mem_req_ready = 0;
  sim->mem_rsp_valid = 0;
  sim.Reset();

  const unsigned e = ElementBytes(config.dtype);
  const std::uint64_t row_bytes = config.cols * e;
  std::vector<std::vector<std::uint8_t>> rows;
  std::uint64_t next = 0, dones = 0, bytes = 0;
  Outcome out;
  while (dones < tiles.size()) {
    if (sim.Cycle() > 100000) throw TimeoutError("dma: weight tiles never finished");
    sim->wrow_ready = random_stalls ? rng() % 4 != 0 : 1;
    if (next < tiles.size()) {
      SetSignalBytes(sim->cmd_insn, isa::EncodeOrThrow(tiles[next].insn));
      sim->cmd_valid = 1u << kWeight;
    } else {
      sim->cmd_valid = 0;
    }
    port.BeforeEdge(sim.dut(), sim.Cycle());
    if ((sim->done >> kWeight) & 1u) {
      ++dones;
      out.last_done = sim.Cycle();
      // `done` is registered: the tile's last row was pushed at the previous edge.
      EXPECT_EQ(rows.size(), dones * config.rows) << "done of tile " << dones - 1 << " out of order";
    }
    if (sim->wrow_valid && sim->wrow_ready) {
      std::vector<std::uint8_t> row(row_bytes);
      for (unsigned i = 0; i < row_bytes; ++i) row[i] = SignalByte(sim->wrow_data, i);
      rows.push_back(row);
    }
    bytes += sim->bytes_total;
    if (next < tiles.size() && ((sim->cmd_ready >> kWeight) & 1u)) {
      if (next == 0) out.first_accept = sim.Cycle();
      if (next > dones) out.overlapped = true;
      ++next;
    }
    sim.Tick();
    port.AfterEdge();
  }

  std::uint64_t want_bytes = 0;
  EXPECT_EQ(rows.size(), tiles.size() * config.rows);
  for (std::size_t i = 0; i < tiles.size() && (i + 1) * config.rows <= rows.size(); ++i) {
    const Tile& t = tiles[i];
    want_bytes += t.k * t.n * e;
    for (std::uint64_t r = 0; r < config.rows; ++r) {
      std::vector<std::uint8_t> expect(row_bytes, 0);
      if (r < t.k) memory.Read(t.dram + r * t.stride, std::span(expect.data(), t.n * e));
      EXPECT_EQ(rows[i * config.rows + r], expect) << "tile " << i << " row " << r;
    }
  }
  EXPECT_EQ(bytes, want_bytes) << "BYTES_WEIGHTS counted per instruction";
  return out;
}

// `count` legal LOAD_WEIGHTS (checked on the golden model); full tiles when `full`.
std::vector<Tile> MakeTiles(const Config& config, std::mt19937_64& rng, int count, bool full) {
  const unsigned e = ElementBytes(config.dtype);
  auto pick = [&rng](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
  std::vector<Tile> tiles;
  model::GoldenModel golden(config);
  while (static_cast<int>(tiles.size()) < count) {
    Tile t;
    t.k = full ? config.rows : pick(1, config.rows);
    t.n = full ? config.cols : pick(1, config.cols);
    t.stride = full ? config.cols * e : e * pick(0, 2 * config.cols);
    // Whole-word tiles when full, so that every row is one aligned word like the compiler's.
    t.dram = kDataAddress + (full ? 32 * pick(0, kDataBytes / 64)
                                  : e * pick(0, (kDataBytes / 2) / e));
    t.insn = LoadWeights(t.dram, t.stride, t.k, t.n);
    if (RunProgram(golden, {t.insn, Halt()}).Ok()) tiles.push_back(t);
  }
  return tiles;
}

template <class Model>
void BackToBack(const char* config_name, bool random) {
  const Config config = LoadConfig(config_name);
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  model::DeviceMemory memory(config.memory_bytes);
  std::vector<std::uint8_t> image(kDataBytes);
  for (auto& b : image) b = static_cast<std::uint8_t>(rng());
  memory.Write(kDataAddress, image);

  const int count = random ? 40 : 8;
  const auto tiles = MakeTiles(config, rng, count, !random);
  const Outcome out = RunTiles<Model>(config, seed, tiles, memory, random);
  const std::uint64_t cycles = out.last_done - out.first_accept;
  std::cout << "[ weights  ] " << count << " tiles of " << config.rows << " rows, memory latency "
            << kLatency << ": " << cycles << " cycles (" << cycles / count << " per tile)\n";
  EXPECT_TRUE(out.overlapped) << "the unit never took a tile before the previous one was done";
  if (!random) {
    EXPECT_LT(cycles, count * kLatency);
  }
}

TEST(DmaWeights, TinyBackToBackTilesOverlapTheMemoryLatency) {
  BackToBack<Vvl_dma_tiny>("tiny", false);
}
TEST(DmaWeights, SmallBackToBackTilesOverlapTheMemoryLatency) {
  BackToBack<Vvl_dma_small>("small", false);
}
TEST(DmaWeights, TinyRandomTilesWithBackPressureStayInOrder) {
  BackToBack<Vvl_dma_tiny>("tiny", true);
}
TEST(DmaWeights, SmallRandomTilesWithBackPressureStayInOrder) {
  BackToBack<Vvl_dma_small>("small", true);
}

}  // namespace
}  // namespace systole::rtl
