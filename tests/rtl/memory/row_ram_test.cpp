// systole_row_ram against a plain C++ array: lane-masked writes, two independent read ports,
// zero initial contents, and a read of the row being written (undefined: the simulation returns
// the old row inverted, so that a user relying on it fails its own tests) marked as such.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>

#include "Vvl_row_ram.h"
#include "sim/rtl/harness.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace systole::rtl {
namespace {

constexpr int kDepth = 64;
constexpr int kLanes = 4;

TEST(RowRam, StartsZeroAndMatchesAModelUnderRandomTraffic) {
  const std::uint64_t seed = test::Seed();
  test::Waveform wave;
  Harness<Vvl_row_ram> sim("row_ram", {.trace_path = wave.Path(), .seed = seed});
  std::array<std::uint32_t, kDepth> model{};  // 4 lanes of 8 bits = one uint32 per row
  std::mt19937_64 rng(seed);
  sim->wr_en = 0;
  sim->rd_en = 0;
  sim.Reset();

  std::array<std::uint32_t, 2> expect{};
  std::array<bool, 2> pending{};
  for (int cycle = 0; cycle < 4000; ++cycle) {
    // Check the reads issued at the previous edge.
    for (int p = 0; p < 2; ++p) {
      if (pending[p]) {
        const auto got = static_cast<std::uint32_t>(sim->rd_data >> (32 * p));
        ASSERT_EQ(got, expect[p]) << "cycle " << cycle << " port " << p;
      }
    }
    const bool write = rng() % 2;
    const auto wr_addr = static_cast<std::uint32_t>(rng() % kDepth);
    const auto lanes = static_cast<std::uint32_t>(rng() % 16);
    const auto data = static_cast<std::uint32_t>(rng());
    sim->wr_en = write;
    sim->wr_addr = wr_addr;
    sim->wr_lanes = lanes;
    sim->wr_data = data;
    std::uint32_t rd_en = 0, rd_addr = 0;
    for (int p = 0; p < 2; ++p) {
      pending[p] = rng() % 3 != 0;
      // Half the reads hit the row being written: undefined, marked by the inverted old row.
      const auto addr = rng() % 2 ? wr_addr : static_cast<std::uint32_t>(rng() % kDepth);
      if (pending[p]) {
        rd_en |= 1u << p;
        expect[p] = write && addr == wr_addr ? ~model[addr] : model[addr];
      }
      rd_addr |= addr << (6 * p);
    }
    sim->rd_en = rd_en;
    sim->rd_addr = rd_addr;
    sim.Tick();
    if (write) {
      for (int l = 0; l < kLanes; ++l) {
        if (lanes & (1u << l)) {
          const std::uint32_t mask = 0xffu << (8 * l);
          model[wr_addr] = (model[wr_addr] & ~mask) | (data & mask);
        }
      }
    }
  }
}

}  // namespace
}  // namespace systole::rtl

namespace systole::rtl {
namespace {

TEST(RowRam, ReadDuringWriteIsMarkedUndefined) {
  test::Waveform wave;
  Harness<Vvl_row_ram> sim("row_ram", {.trace_path = wave.Path()});
  sim->wr_en = 0;
  sim->rd_en = 0;
  sim.Reset();
  sim->wr_en = 1;
  sim->wr_addr = 5;
  sim->wr_lanes = 0xf;
  sim->wr_data = 0x11223344;
  sim->rd_en = 1;
  sim->rd_addr = 5;
  sim.Tick();
  EXPECT_EQ(static_cast<std::uint32_t>(sim->rd_data), ~0u);  // old row 0, inverted
  sim->wr_data = 0x55667788;
  sim->wr_lanes = 0x1;
  sim.Tick();
  EXPECT_EQ(static_cast<std::uint32_t>(sim->rd_data), ~0x11223344u);
  sim->wr_en = 0;
  sim.Tick();
  EXPECT_EQ(static_cast<std::uint32_t>(sim->rd_data), 0x11223388u);
}

}  // namespace
}  // namespace systole::rtl
