// LOAD, STORE and LOAD_WEIGHTS: strided copies in both directions and to both memories,
// partial rows, partial weight tiles, and their byte counters.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "tests/model/model_test_util.hpp"

namespace systole::model {
namespace {

using namespace testing;  // NOLINT: test helpers
using isa::MemSpace;

TEST(Load, StridedIntoUnifiedBufferLeavesOtherElements) {
  GoldenModel model(LoadConfig("tiny"));  // rows of 4 int8
  WriteArray<std::int8_t>(model, kDataAddress, std::vector<std::int8_t>(64, 0x77));
  std::vector<std::int8_t> source(40);
  for (std::uint32_t i = 0; i < 40; ++i) source[i] = static_cast<std::int8_t>(i - 20);
  WriteArray(model, kDataAddress + 0x100, source);
  // Fill rows 10..12 with 0x77, then overwrite elements 1..2 of each from a stride of 8 bytes.
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 10, 0, 3, 4),
                Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress + 0x100 + 3, 8, 10, 1, 3, 2),
                Halt()});
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(model.UbInt8(10 + i, 0), 0x77);
    EXPECT_EQ(model.UbInt8(10 + i, 1), source[3 + 8 * i]);
    EXPECT_EQ(model.UbInt8(10 + i, 2), source[3 + 8 * i + 1]);
    EXPECT_EQ(model.UbInt8(10 + i, 3), 0x77);
  }
  EXPECT_EQ(model.UbInt8(13, 0), 0);
  EXPECT_EQ(model.Counter("BYTES_DRAM_TO_UB"), 12u + 6u);
}

TEST(Load, StrideZeroBroadcastsOneRow) {
  GoldenModel model(LoadConfig("tiny"));
  WriteArray<std::int8_t>(model, kDataAddress, {5, -6, 7, -8});
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 0, 0, 0, 5, 4), Halt()});
  for (std::uint32_t row = 0; row < 5; ++row) EXPECT_EQ(model.UbInt8(row, 3), -8);
}

TEST(Load, StridedIntoAccumulators) {
  GoldenModel model(LoadConfig("tiny"));  // rows of 4 int32
  std::vector<std::int32_t> source(12);
  for (std::uint32_t i = 0; i < 12; ++i) source[i] = -1000000 * static_cast<std::int32_t>(i) - 7;
  WriteArray(model, kDataAddress, source);
  // Two elements per row from a stride of 3 words into columns 2..3 of rows 60..63.
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress + 4, 12, 60, 2, 4, 2), Halt()});
  for (std::uint32_t i = 0; i < 4; ++i) {
    const auto row = model.AccRow(60 + i);
    EXPECT_EQ(row[0], 0u);
    EXPECT_EQ(row[1], 0u);
    EXPECT_EQ(static_cast<std::int32_t>(row[2]), source[1 + 3 * i]);
    EXPECT_EQ(static_cast<std::int32_t>(row[3]), source[2 + 3 * i]);
  }
  EXPECT_EQ(model.Counter("BYTES_DRAM_TO_ACC"), 32u);
}

TEST(Load, Bf16BitsAreCopiedUnchanged) {
  GoldenModel model(LoadConfig("small"));  // rows of 16 bf16
  const std::vector<std::uint16_t> bits = {0x0001, 0xFFC1, 0x8000, 0x7F81, 0x3F80};  // no FTZ here
  WriteArray(model, kDataAddress, bits);
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 10, 7, 11, 1, 5), Halt()});
  for (std::uint32_t j = 0; j < 5; ++j) EXPECT_EQ(model.UbBf16(7, 11 + j), bits[j]);
  RunOk(model, {Dma(Opcode::kStore, MemSpace::kUb, kDataAddress + 0x100, 10, 7, 11, 1, 5), Halt()});
  EXPECT_EQ(ReadArray<std::uint16_t>(model, kDataAddress + 0x100, 5), bits);
}

isa::Instruction Widen(isa::Instruction load) {
  load[Field::kWiden] = 1;
  return load;
}

// `load mem=acc widen`: bf16 elements become the fp32 of the same value, bit for bit the bf16
// bits above 16 zero bits — NaN payloads, signed zeros, infinities and subnormals included.
TEST(Load, WidenBf16IntoAccumulatorsIsExact) {
  GoldenModel model(LoadConfig("small"));  // rows of 16 fp32
  // 1.0, -3.0, -0.0, +inf, a NaN, the smallest bf16 subnormal, 0.5078125 (1 + 1/64, halved)
  const std::vector<std::uint16_t> bits = {0x3F80, 0xC040, 0x8000, 0x7F80, 0x7FC1, 0x0001, 0x3F02};
  const std::vector<float> values = {1.0f, -3.0f, -0.0f, std::numeric_limits<float>::infinity(), 0.0f,
                                     0.0f, 0.5078125f};
  WriteArray(model, kDataAddress, bits);
  WriteArray(model, kDataAddress + 0x40, bits);
  // Two rows, elements 2..8, the second from 0x40 bytes on (a stride of 32 bf16 elements).
  RunOk(model, {Widen(Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress, 0x40, 5, 2, 2, 7)), Halt()});
  for (std::uint32_t r = 5; r < 7; ++r) {
    const auto row = model.AccRow(r);
    EXPECT_EQ(row[1], 0u);
    EXPECT_EQ(row[9], 0u);
    for (std::uint32_t j = 0; j < 7; ++j) {
      EXPECT_EQ(row[2 + j], std::uint32_t{bits[j]} << 16) << "element " << j;
      if (j < 4 || j == 6) {
        EXPECT_EQ(std::bit_cast<float>(row[2 + j]), values[j]) << "element " << j;
      }
    }
  }
  EXPECT_TRUE(std::isnan(std::bit_cast<float>(model.AccRow(5)[6])));
  EXPECT_EQ(model.Counter("BYTES_DRAM_TO_ACC"), 2u * 7u * 2u);  // device bytes: 2 per element
}

TEST(Load, WidenInt8IntoAccumulatorsSignExtends) {
  GoldenModel model(LoadConfig("tiny"));  // rows of 4 int32
  WriteArray<std::int8_t>(model, kDataAddress, {-128, -1, 0, 127, 5, -6, 7, -8});
  RunOk(model, {Widen(Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress, 4, 10, 0, 2, 4)), Halt()});
  const std::vector<std::int32_t> expected = {-128, -1, 0, 127, 5, -6, 7, -8};
  for (std::uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(static_cast<std::int32_t>(model.AccRow(10 + i / 4)[i % 4]), expected[i]) << i;
  }
  EXPECT_EQ(model.Counter("BYTES_DRAM_TO_ACC"), 8u);
  // Without widen the same bytes are two int32 words.
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress, 4, 20, 0, 2, 1), Halt()});
  EXPECT_EQ(model.AccRow(20)[0], 0x7F00FF80u);
}

// With mem=ub the flag changes nothing: UB elements are of the array's type already.
TEST(Load, WidenIntoTheUnifiedBufferIsAPlainLoad) {
  GoldenModel model(LoadConfig("small"));
  const std::vector<std::uint16_t> bits = {0x3F80, 0xC040, 0x0001};
  WriteArray(model, kDataAddress, bits);
  RunOk(model, {Widen(Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 6, 3, 4, 1, 3)), Halt()});
  for (std::uint32_t j = 0; j < 3; ++j) EXPECT_EQ(model.UbBf16(3, 4 + j), bits[j]);
  EXPECT_EQ(model.Counter("BYTES_DRAM_TO_UB"), 6u);
}

TEST(Store, StridedFromBothMemoriesLeavesGaps) {
  GoldenModel model(LoadConfig("tiny"));
  WriteArray<std::int8_t>(model, kDataAddress, {1, 2, 3, 4, 5, 6, 7, 8});
  WriteArray<std::int32_t>(model, kDataAddress + 0x40, {-1, -2, -3, -4, -5, -6, -7, -8});
  WriteArray<std::uint8_t>(model, kDataAddress + 0x200, std::vector<std::uint8_t>(64, 0xEE));
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 3, 0, 2, 4),
                Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress + 0x40, 16, 9, 0, 2, 4),
                Sync(),
                // UB rows 3..4, elements 1..3, to a stride of 5 bytes.
                Dma(Opcode::kStore, MemSpace::kUb, kDataAddress + 0x200, 5, 3, 1, 2, 3),
                // ACC rows 9..10, element 2, to a stride of 8 bytes.
                Dma(Opcode::kStore, MemSpace::kAcc, kDataAddress + 0x220, 8, 9, 2, 2, 1),
                Halt()});
  const auto ub_out = ReadArray<std::uint8_t>(model, kDataAddress + 0x200, 10);
  EXPECT_EQ(ub_out, (std::vector<std::uint8_t>{2, 3, 4, 0xEE, 0xEE, 6, 7, 8, 0xEE, 0xEE}));
  const auto acc_out = ReadArray<std::int32_t>(model, kDataAddress + 0x220, 4);
  EXPECT_EQ(acc_out[0], -3);
  EXPECT_EQ(acc_out[1], static_cast<std::int32_t>(0xEEEEEEEE));
  EXPECT_EQ(acc_out[2], -7);
  EXPECT_EQ(model.Counter("BYTES_UB_TO_DRAM"), 6u);
  EXPECT_EQ(model.Counter("BYTES_ACC_TO_DRAM"), 8u);
}

TEST(Store, OverlappingRowsAreWrittenInOrder) {
  GoldenModel model(LoadConfig("tiny"));
  WriteArray<std::int8_t>(model, kDataAddress, {1, 2, 3, 4, 5, 6, 7, 8});
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 2, 4), Sync(),
                Dma(Opcode::kStore, MemSpace::kUb, kDataAddress + 0x100, 2, 0, 0, 2, 4), Halt()});
  EXPECT_EQ(ReadArray<std::int8_t>(model, kDataAddress + 0x100, 6),
            (std::vector<std::int8_t>{1, 2, 5, 6, 7, 8}));
}

TEST(LoadWeights, PartialTileIsZeroFilled) {
  GoldenModel model(LoadConfig("tiny"));  // 4 x 4 tiles
  std::vector<std::int8_t> matrix(30);
  for (std::uint32_t i = 0; i < 30; ++i) matrix[i] = static_cast<std::int8_t>(100 - 7 * i);
  WriteArray(model, kDataAddress, matrix);
  // A 3 x 2 corner from a matrix with rows of 10 bytes, starting at element 1.
  RunOk(model, {LoadWeights(kDataAddress + 1, 10, 3, 2), LoadWeights(kDataAddress, 10, 1, 1),
                Matmul(0, 0, 1, 4, true, false), Halt()});
  const WeightTile* tile = model.StationaryTile();
  ASSERT_NE(tile, nullptr);
  for (std::uint32_t t = 0; t < 4; ++t) {
    for (std::uint32_t j = 0; j < 4; ++j) {
      const std::int32_t expected = t < 3 && j < 2 ? matrix[1 + 10 * t + j] : 0;
      EXPECT_EQ(tile->Int8(t, j), expected) << t << "," << j;
    }
  }
  EXPECT_EQ(model.WeightFifoOccupancy(), 1u);  // the second tile still waits
  EXPECT_EQ(model.Counter("BYTES_WEIGHTS"), 7u);
}

TEST(LoadWeights, Bf16TileIsFlushedAndPartial) {
  GoldenModel model(LoadConfig("small"));  // 16 x 16 bf16
  std::vector<std::uint16_t> matrix(64);
  for (std::uint32_t i = 0; i < 64; ++i) matrix[i] = static_cast<std::uint16_t>(0x3F80 + i);
  matrix[1] = 0x8001;  // a subnormal: stationary as -0
  WriteArray(model, kDataAddress, matrix);
  RunOk(model, {LoadWeights(kDataAddress, 16, 4, 3), Matmul(0, 0, 1, 16, true, false), Halt()});
  const WeightTile* tile = model.StationaryTile();
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(tile->Bf16(0, 0), 0x3F80);
  EXPECT_EQ(tile->Bf16(0, 1), 0x8000);
  EXPECT_EQ(tile->Bf16(3, 2), matrix[3 * 8 + 2]);
  EXPECT_EQ(tile->Bf16(3, 3), 0);
  EXPECT_EQ(tile->Bf16(4, 0), 0);
  EXPECT_EQ(tile->Bf16(15, 15), 0);
  EXPECT_EQ(model.Counter("BYTES_WEIGHTS"), 4u * 3u * 2u);
}

}  // namespace
}  // namespace systole::model
