// The DMA engines against the golden model: random legal LOAD, STORE and LOAD_WEIGHTS
// instructions run on both; every touched UB/accumulator row, all of device memory's data
// region and every weight row must be identical. Memory accepts requests on a random 70% of
// cycles and weight rows are taken with random back-pressure, to exercise every handshake.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
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

using model::GoldenModel;
using model::testing::Dma;
using model::testing::Halt;
using model::testing::kDataAddress;
using model::testing::LoadWeights;
using model::testing::RunProgram;

using dma_tb::Engine;
using dma_tb::kDataBytes;
using dma_tb::kLoad;
using dma_tb::kStore;
using dma_tb::kWeight;

// The first `bytes` bytes of a Verilator signal.
template <class Signal>
std::vector<std::uint8_t> Bytes(const Signal& signal, unsigned bytes) {
  std::vector<std::uint8_t> out(bytes);
  for (unsigned i = 0; i < bytes; ++i) out[i] = SignalByte(signal, i);
  return out;
}

template <class Model>
class DmaBench {
 public:
  DmaBench(const Config& config, std::uint64_t seed, const std::filesystem::path& wave)
      : config_(config), golden_(config), memory_(config.memory_bytes),
        port_(memory_, {.latency = 6, .ready_percent = 70, .seed = seed}),
        sim_("dma", {.trace_path = wave, .seed = seed}), rng_(seed) {
    std::vector<std::uint8_t> image(kDataBytes);
    for (auto& b : image) b = static_cast<std::uint8_t>(rng_());
    golden_.WriteMemory(kDataAddress, image);
    memory_.Write(kDataAddress, image);
    sim_->cmd_valid = 0;
    sim_->wrow_ready = 0;
    sim_->peek_ub_addr = 0;
    sim_->peek_acc_addr = 0;
    sim_->mem_req_ready = 0;
    sim_->mem_rsp_valid = 0;
    sim_.Reset();
  }

  void Step() {
    sim_->wrow_ready = rng_() % 4 != 0;
    port_.BeforeEdge(sim_.dut(), sim_.Cycle());
    if (sim_->wrow_valid && sim_->wrow_ready) {
      weight_rows_.push_back(Bytes(sim_->wrow_data, config_.cols * ElementBytes(config_.dtype)));
    }
    bytes_ += sim_->bytes_total;
    sim_.Tick();
    port_.AfterEdge();
  }

  // Runs one instruction on the RTL engine; returns false (and runs nothing) if the golden model
  // rejects it.
  bool Run(Engine engine, const isa::Instruction& insn) {
    const auto result = RunProgram(golden_, {insn, Halt()});
    if (!result.Ok()) return false;
    SetSignalBytes(sim_->cmd_insn, isa::EncodeOrThrow(insn));
    sim_->cmd_valid = 1u << engine;
    sim_.Eval();
    while (!((sim_->cmd_ready >> engine) & 1u)) Step();
    Step();
    sim_->cmd_valid = 0;
    std::uint64_t waited = 0;
    while (!((sim_->done >> engine) & 1u)) {
      Step();
      if (++waited > 200000) throw TimeoutError("dma: engine never finished");
    }
    return true;
  }

  std::vector<std::uint8_t> PeekUb(std::uint64_t row) {
    sim_->peek_ub_addr = static_cast<std::uint32_t>(row);
    Step();
    return Bytes(sim_->peek_ub_data, config_.UbRowBytes());
  }
  std::vector<std::uint32_t> PeekAcc(std::uint64_t row) {
    sim_->peek_acc_addr = static_cast<std::uint32_t>(row);
    Step();
    const auto bytes = Bytes(sim_->peek_acc_data, config_.cols * 4);
    std::vector<std::uint32_t> out(config_.cols);
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }

  const Config& config_;
  GoldenModel golden_;
  model::DeviceMemory memory_;
  MemoryPort port_;
  Harness<Model> sim_;
  std::mt19937_64 rng_;
  std::vector<std::vector<std::uint8_t>> weight_rows_;
  std::uint64_t bytes_ = 0;
};

template <class Model>
void RandomDmaAgainstGoldenModel(const char* config_name) {
  const Config config = LoadConfig(config_name);
  const std::uint64_t seed = test::Seed();
  test::Waveform wave(false);
  DmaBench<Model> bench(config, seed, wave.Path());
  std::mt19937_64& rng = bench.rng_;
  const unsigned e = ElementBytes(config.dtype);
  auto pick = [&rng](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };

  // Fill the rows the test uses with random data first, so that a write to an element outside
  // [col, col+elems) or a missing write cannot hide behind rows that are still zero.
  const std::uint64_t ub_rows = std::min<std::uint64_t>(config.UbRows(), 256);
  const std::uint64_t acc_rows = config.AccRows();
  ASSERT_TRUE(bench.Run(kLoad, Dma(isa::Opcode::kLoad, isa::MemSpace::kUb, kDataAddress,
                                   config.UbRowBytes(), 0, 0, ub_rows, config.UbRowElems())));
  ASSERT_TRUE(bench.Run(kLoad, Dma(isa::Opcode::kLoad, isa::MemSpace::kAcc, kDataAddress + 0x100,
                                   config.AccRowBytes(), 0, 0, acc_rows, config.cols)));

  int loads = 0, stores = 0, weights = 0;
  for (int iteration = 0; iteration < 300; ++iteration) {
    const unsigned kind = static_cast<unsigned>(rng() % 3);
    const bool acc = rng() % 3 == 0;
    const unsigned s = acc ? 4 : e;
    const std::uint64_t width = acc ? config.cols : config.UbRowElems();
    // Mostly the prefilled rows; now and then anywhere, up to the last row.
    const std::uint64_t buffer_rows =
        acc ? acc_rows : (rng() % 8 == 0 ? config.UbRows() : ub_rows);
    const std::uint64_t elems = pick(1, width);
    const std::uint64_t col = pick(0, width - elems);
    const std::uint64_t rows = pick(1, 6);
    const std::uint64_t row = pick(0, buffer_rows - rows);
    const std::uint64_t stride = s * pick(0, 3 * width);
    const std::uint64_t dram = kDataAddress + s * pick(0, (kDataBytes / 2) / s);
    const auto space = acc ? isa::MemSpace::kAcc : isa::MemSpace::kUb;
    if (kind == 0) {
      if (!bench.Run(kLoad, Dma(isa::Opcode::kLoad, space, dram, stride, row, col, rows, elems))) continue;
      ++loads;
      for (std::uint64_t r = row; r < row + rows; ++r) {
        if (acc) {
          const auto span = bench.golden_.AccRow(r);
          ASSERT_EQ(bench.PeekAcc(r), std::vector<std::uint32_t>(span.begin(), span.end()))
              << "LOAD acc row " << r << " (iteration " << iteration << ")";
        } else {
          const auto span = bench.golden_.UbRow(r);
          ASSERT_EQ(bench.PeekUb(r), std::vector<std::uint8_t>(span.begin(), span.end()))
              << "LOAD ub row " << r << " (iteration " << iteration << ")";
        }
      }
    } else if (kind == 1) {
      const std::uint64_t k = pick(1, config.rows), n = pick(1, config.cols);
      const std::uint64_t wstride = e * pick(0, 2 * config.cols);
      const auto insn = LoadWeights(dram, wstride, k, n);
      bench.weight_rows_.clear();
      if (!bench.Run(kWeight, insn)) continue;
      ++weights;
      ASSERT_EQ(bench.weight_rows_.size(), config.rows);
      for (std::uint64_t t = 0; t < config.rows; ++t) {
        std::vector<std::uint8_t> expect(config.cols * e, 0);
        if (t < k) bench.memory_.Read(dram + t * wstride, std::span(expect.data(), n * e));
        ASSERT_EQ(bench.weight_rows_[t], expect) << "weight row " << t << " (iteration " << iteration << ")";
      }
    } else {
      // Store into the upper half of the data region so loads keep finding random data.
      const std::uint64_t dst = kDataAddress + kDataBytes / 2 + s * pick(0, (kDataBytes / 4) / s);
      if (!bench.Run(kStore, Dma(isa::Opcode::kStore, space, dst, stride, row, col, rows, elems))) continue;
      ++stores;
      std::vector<std::uint8_t> want(kDataBytes), got(kDataBytes);
      bench.golden_.ReadMemory(kDataAddress, want);
      bench.memory_.Read(kDataAddress, got);
      ASSERT_EQ(got, want) << "device memory after STORE (iteration " << iteration << ")";
    }
  }
  EXPECT_GT(loads, 50);
  EXPECT_GT(stores, 50);
  EXPECT_GT(weights, 50);
  // Every byte the engines moved was counted (the golden model counts host bytes too).
  const std::uint64_t moved = bench.golden_.Counter("BYTES_DRAM_TO_UB") +
                              bench.golden_.Counter("BYTES_DRAM_TO_ACC") +
                              bench.golden_.Counter("BYTES_WEIGHTS") +
                              bench.golden_.Counter("BYTES_UB_TO_DRAM") +
                              bench.golden_.Counter("BYTES_ACC_TO_DRAM");
  EXPECT_EQ(bench.bytes_, moved);
  std::cout << "[ dma      ] " << loads << " loads, " << stores << " stores, " << weights
            << " weight tiles in " << bench.sim_.Cycle() << " cycles\n";
}

TEST(Dma, TinyInt8MatchesGoldenModel) { RandomDmaAgainstGoldenModel<Vvl_dma_tiny>("tiny"); }
TEST(Dma, SmallBf16MatchesGoldenModel) { RandomDmaAgainstGoldenModel<Vvl_dma_small>("small"); }

}  // namespace
}  // namespace systole::rtl
