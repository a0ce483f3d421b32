// ACTIVATE, VECTOR and POOL in both element types, every function, operation and option,
// with expectations computed here from docs/ISA.md and docs/NUMERICS.md.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "tests/model/model_test_util.hpp"

namespace systole::model {
namespace {

using namespace testing;  // NOLINT: test helpers
using isa::ActFunc;
using isa::MemSpace;
using isa::VecOp;

constexpr std::uint32_t kF32One = 0x3F800000;

isa::Instruction Activate(std::uint64_t acc, std::uint64_t ub, std::uint64_t rows, ActFunc func,
                          std::uint64_t scale, std::uint64_t shift = 0, std::int64_t zp = 0,
                          std::uint16_t lo = 0, std::uint16_t hi = 0, bool bias = false,
                          std::uint64_t bias_row = 0) {
  return Insn(Opcode::kActivate, {{Field::kAcc, acc},
                                  {Field::kUb, ub},
                                  {Field::kRows, rows},
                                  {Field::kFunc, static_cast<std::uint64_t>(func)},
                                  {Field::kScale, scale},
                                  {Field::kShift, shift},
                                  {Field::kZeroPoint, static_cast<std::uint64_t>(zp)},
                                  {Field::kLo, lo},
                                  {Field::kHi, hi},
                                  {Field::kBias, bias ? 1u : 0u},
                                  {Field::kBiasRow, bias_row}});
}

isa::Instruction Vector(VecOp op, std::uint64_t a, std::uint64_t b, std::uint64_t dst,
                        std::uint64_t rows, bool bcast = false, ActFunc func = ActFunc::kNone,
                        std::uint64_t shift = 0, std::uint16_t lo = 0, std::uint16_t hi = 0) {
  return Insn(Opcode::kVector, {{Field::kOp, static_cast<std::uint64_t>(op)},
                                {Field::kA, a},
                                {Field::kB, b},
                                {Field::kDst, dst},
                                {Field::kRows, rows},
                                {Field::kBcast, bcast ? 1u : 0u},
                                {Field::kFunc, static_cast<std::uint64_t>(func)},
                                {Field::kShift, shift},
                                {Field::kLo, lo},
                                {Field::kHi, hi}});
}

// ---- ACTIVATE, int8 ------------------------------------------------------------------------

// Loads `values` (4 per row) into ACC rows 0.., runs one ACTIVATE, returns UB rows 100.. .
std::vector<std::int8_t> ActivateInt8(const std::vector<std::int32_t>& values,
                                      const isa::Instruction& activate,
                                      const std::vector<std::int32_t>& bias_row = {}) {
  GoldenModel model(LoadConfig("tiny"));
  WriteArray(model, kDataAddress, values);
  std::vector<isa::Instruction> program = {Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress, 16, 0,
                                               0, values.size() / 4, 4)};
  if (!bias_row.empty()) {
    WriteArray(model, kDataAddress + 0x1000, bias_row);
    program.push_back(Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress + 0x1000, 16, 63, 0, 1, 4));
  }
  program.push_back(Sync());
  program.push_back(activate);
  program.push_back(Halt());
  RunOk(model, program);
  std::vector<std::int8_t> out;
  for (std::size_t i = 0; i < values.size(); ++i) out.push_back(model.UbInt8(100 + i / 4, i % 4));
  return out;
}

TEST(ActivateInt8, ScaleShiftRoundsHalfUpThenSaturates) {
  // shift 1, scale 1: v/2 rounded half up; then zp; then saturation.
  const std::vector<std::int32_t> v = {5, -5, -7, 7, 300, -300, 255, -256};
  const auto out = ActivateInt8(v, Activate(0, 100, 2, ActFunc::kNone, 1, 1, 0));
  EXPECT_EQ(out, (std::vector<std::int8_t>{3, -2, -3, 4, 127, -128, 127, -128}));
  const auto with_zp = ActivateInt8(v, Activate(0, 100, 2, ActFunc::kNone, 1, 1, -3));
  EXPECT_EQ(with_zp, (std::vector<std::int8_t>{0, -5, -6, 1, 127, -128, 125, -128}));
}

TEST(ActivateInt8, EveryFunction) {
  const std::vector<std::int32_t> v = {-20, -1, 0, 3, 6, 7, 100, 1000};
  EXPECT_EQ(ActivateInt8(v, Activate(0, 100, 2, ActFunc::kRelu, 1)),
            (std::vector<std::int8_t>{0, 0, 0, 3, 6, 7, 100, 127}));
  EXPECT_EQ(ActivateInt8(v, Activate(0, 100, 2, ActFunc::kRelu6, 1)),
            (std::vector<std::int8_t>{0, 0, 0, 3, 6, 6, 6, 6}));
  // clamp to [-5, 500] (int16 bounds), then zp 10 and saturation.
  EXPECT_EQ(ActivateInt8(v, Activate(0, 100, 2, ActFunc::kClamp, 1, 0, 10,
                                     static_cast<std::uint16_t>(-5), 500)),
            (std::vector<std::int8_t>{5, 9, 10, 13, 16, 17, 110, 127}));
  // The function applies before the zero point: relu then zp -128.
  EXPECT_EQ(ActivateInt8(v, Activate(0, 100, 2, ActFunc::kRelu, 1, 0, -128)),
            (std::vector<std::int8_t>{-128, -128, -128, -125, -122, -121, -28, 127}));
}

TEST(ActivateInt8, BiasWrapsAndLargeScaleUsesInt64) {
  const std::vector<std::int32_t> v = {INT32_MAX, 10, -10, 1 << 20};
  const std::vector<std::int32_t> bias = {1, -10, 10, 0};
  // INT32_MAX + 1 wraps to INT32_MIN; * 3 / 2^33 = -0.75 -> -1 (half up of -0.75 is -1).
  // (1 << 20) * 3 / 2^33 = 0.000366 -> 0.
  const auto out = ActivateInt8(v, Activate(0, 100, 1, ActFunc::kNone, 3, 33, 0, 0, 0, true, 63),
                                bias);
  EXPECT_EQ(out, (std::vector<std::int8_t>{-1, 0, 0, 0}));
  // A multiplier of INT32_MIN with shift 40: v * S fits int64 even for v = INT32_MIN.
  const std::vector<std::int32_t> w = {INT32_MIN, -(1 << 12), 1 << 12, 3 << 10};
  const auto extreme = ActivateInt8(w, Activate(0, 100, 1, ActFunc::kNone,
                                                static_cast<std::uint32_t>(INT32_MIN), 40));
  // 2^31 * 2^31 / 2^40 = 2^22 -> 127; 2^12 * 2^31 / 2^40 = 8; -8; 3 * 2^10 * 2^31 / 2^40 = 6 -> -6.
  EXPECT_EQ(extreme, (std::vector<std::int8_t>{127, 8, -8, -6}));
}

TEST(ActivateInt8, ScaleFieldZeroMeansOne) {
  // docs/ISA.md: a scale field of 0 (what an omitted `scale=` assembles to) means 1, so that
  // forgetting it cannot silently zero a layer. The shift still applies.
  EXPECT_EQ(ActivateInt8({5, -5, 100, 7}, Activate(0, 100, 1, ActFunc::kNone, 0, 0, 2)),
            (std::vector<std::int8_t>{7, -3, 102, 9}));
  EXPECT_EQ(ActivateInt8({5, -5, 100, 7}, Activate(0, 100, 1, ActFunc::kNone, 0, 1)),
            (std::vector<std::int8_t>{3, -2, 50, 4}));
}

// ---- ACTIVATE, bf16 ------------------------------------------------------------------------

std::vector<std::uint16_t> ActivateBf16(const Config& config, const std::vector<std::uint32_t>& v,
                                        const isa::Instruction& activate,
                                        const std::vector<std::uint32_t>& bias_row = {}) {
  GoldenModel model(config);
  const std::uint32_t c = config.cols;
  WriteArray(model, kDataAddress, v);
  std::vector<isa::Instruction> program = {
      Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress, c * 4, 0, 0, v.size() / c, c)};
  if (!bias_row.empty()) {
    WriteArray(model, kDataAddress + 0x1000, bias_row);
    program.push_back(Dma(Opcode::kLoad, MemSpace::kAcc, kDataAddress + 0x1000, c * 4, 50, 0, 1, c));
  }
  // Dirty the output rows first so that zeroing of elements C..W is visible.
  WriteArray(model, kDataAddress + 0x2000, std::vector<std::uint16_t>(64, 0x1234));
  program.push_back(Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress + 0x2000, 0, 100, 0,
                        v.size() / c, config.UbRowElems()));
  program.push_back(Sync());
  program.push_back(activate);
  program.push_back(Halt());
  RunOk(model, program);
  std::vector<std::uint16_t> out;
  for (std::size_t row = 0; row < v.size() / c; ++row) {
    for (std::uint32_t j = 0; j < config.UbRowElems(); ++j) out.push_back(model.UbBf16(100 + row, j));
  }
  return out;
}

TEST(ActivateBf16, EveryFunctionWithBiasAndScale) {
  const Config config = LoadConfig("small");
  std::mt19937_64 rng(TestSeed());
  std::vector<std::uint32_t> v(16 * 3), bias(16);
  for (auto& x : v) x = ref::FromBf16(RandomBf16(rng, true)) | static_cast<std::uint32_t>(rng() & 0xFFFF);
  for (auto& x : bias) x = ref::FromBf16(RandomBf16(rng, true));
  v[0] = 0x80000000;  // -0: relu gives +0
  v[1] = 0x00000001;  // subnormal: flushed
  const std::uint32_t scale = 0x3FC00000;  // 1.5
  const std::uint16_t lo = 0xBF80, hi = 0x4040;  // clamp to [-1, 3]
  for (ActFunc func : {ActFunc::kNone, ActFunc::kRelu, ActFunc::kRelu6, ActFunc::kClamp}) {
    for (bool with_bias : {false, true}) {
      SCOPED_TRACE(fmt::format("func {} bias {}", static_cast<int>(func), with_bias));
      const auto out = ActivateBf16(
          config, v, Activate(0, 100, 3, func, scale, 0, 0, lo, hi, with_bias, 50), bias);
      for (std::size_t i = 0; i < v.size(); ++i) {
        std::uint32_t x = v[i];
        if (with_bias) x = ref::Add(x, bias[i % 16]);
        x = ref::Mul(x, scale);
        switch (func) {
          case ActFunc::kNone: break;
          case ActFunc::kRelu: x = ref::Max(x, 0); break;
          case ActFunc::kRelu6: x = ref::Min(ref::Max(x, 0), 0x40C00000); break;
          case ActFunc::kClamp: x = ref::Min(ref::Max(x, ref::FromBf16(lo)), ref::FromBf16(hi)); break;
        }
        ASSERT_EQ(out[i], ref::ToBf16(x)) << "element " << i << " input " << std::hex << v[i];
      }
    }
  }
}

TEST(ActivateBf16, ScaleFieldZeroMeansOne) {
  const std::vector<std::uint32_t> v = {0x3FC00000, 0xC0200000, 0x80000000, 0x7F800000,
                                        0x3F800000, 0x40000000, 0x40400000, 0x40800000,
                                        0x3E800000, 0x3F000000, 0xBF000000, 0x41200000,
                                        0x42C80000, 0xC2C80000, 0x00000000, 0x3F400000};
  const auto out = ActivateBf16(LoadConfig("small"), v, Activate(0, 100, 1, ActFunc::kNone, 0));
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(out[i], ref::ToBf16(v[i])) << i;
}

TEST(ActivateBf16, ZeroesElementsBeyondColumnsOnTallArrays) {
  Config config = LoadConfig("small");
  config.name = "tall";
  config.rows = 16;
  config.cols = 8;  // UB rows are 16 wide, ACTIVATE writes 8
  config.Validate();
  std::vector<std::uint32_t> v(8, 0x40000000);  // 2.0
  const auto out = ActivateBf16(config, v, Activate(0, 100, 1, ActFunc::kNone, kF32One));
  for (std::uint32_t j = 0; j < 8; ++j) EXPECT_EQ(out[j], 0x4000);
  for (std::uint32_t j = 8; j < 16; ++j) EXPECT_EQ(out[j], 0x0000);
}

// ---- VECTOR --------------------------------------------------------------------------------

TEST(VectorInt8, EveryOperationWithSaturation) {
  GoldenModel model(LoadConfig("tiny"));
  const std::vector<std::int8_t> a = {100, -100, 7, -7, 127, -128, 0, 5};
  const std::vector<std::int8_t> b = {100, 100, -3, -3, 127, -128, 0, -5};
  WriteArray(model, kDataAddress, a);
  WriteArray(model, kDataAddress + 0x100, b);
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 2, 4),
                Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress + 0x100, 4, 2, 0, 2, 4), Sync(),
                Vector(VecOp::kAdd, 0, 2, 10, 2), Vector(VecOp::kSub, 0, 2, 12, 2),
                Vector(VecOp::kMul, 0, 2, 14, 2, false, ActFunc::kNone, 0),
                Vector(VecOp::kMul, 0, 2, 16, 2, false, ActFunc::kNone, 3),
                Vector(VecOp::kMax, 0, 2, 18, 2), Vector(VecOp::kMin, 0, 2, 20, 2), Halt()});
  auto at = [&](std::uint64_t row0, std::uint32_t i) { return model.UbInt8(row0 + i / 4, i % 4); };
  for (std::uint32_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(at(10, i), ref::SaturateInt8(a[i] + b[i]));
    EXPECT_EQ(at(12, i), ref::SaturateInt8(a[i] - b[i]));
    EXPECT_EQ(at(14, i), ref::SaturateInt8(a[i] * b[i]));
    EXPECT_EQ(at(16, i), ref::SaturateInt8(ref::Requantize(a[i], b[i], 3)));
    EXPECT_EQ(at(18, i), std::max(a[i], b[i]));
    EXPECT_EQ(at(20, i), std::min(a[i], b[i]));
  }
  EXPECT_EQ(at(16, 2), -3);  // 7 * -3 / 8 = -2.625 -> -3
  EXPECT_EQ(at(16, 3), 3);   // -7 * -3 / 8 = 2.625 -> 3
}

TEST(VectorInt8, FunctionsBroadcastAndInPlace) {
  GoldenModel model(LoadConfig("tiny"));
  WriteArray<std::int8_t>(model, kDataAddress, {1, 2, 3, 4, -10, 20, -30, 40, 9, -9, 9, -9});
  WriteArray<std::int8_t>(model, kDataAddress + 0x100, {-5, 5, 0, 1});
  RunOk(model,
        {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 3, 4),
         Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress + 0x100, 4, 7, 0, 1, 4), Sync(),
         // rows 0..2 + row 7 in place, then relu
         Vector(VecOp::kAdd, 0, 7, 0, 3, /*bcast=*/true, ActFunc::kRelu), Sync(),
         Vector(VecOp::kAdd, 0, 7, 20, 1, true, ActFunc::kRelu6),
         Vector(VecOp::kSub, 1, 7, 21, 1, true, ActFunc::kClamp, 0,
                static_cast<std::uint16_t>(-12), 3),
         Halt()});
  const std::vector<std::vector<int>> expected = {{0, 7, 3, 5}, {0, 25, 0, 41}, {4, 0, 9, 0}};
  for (std::uint32_t r = 0; r < 3; ++r) {
    for (std::uint32_t j = 0; j < 4; ++j) EXPECT_EQ(model.UbInt8(r, j), expected[r][j]) << r << "," << j;
  }
  // relu6(row0 + row7) where row0 is now {0, 7, 3, 5}: {-5, 12, 3, 6} -> {0, 6, 3, 6}
  EXPECT_EQ(model.UbInt8(20, 0), 0);
  EXPECT_EQ(model.UbInt8(20, 1), 6);
  EXPECT_EQ(model.UbInt8(20, 3), 6);
  // clamp(row1 - row7, -12, 3) with row1 = {0, 25, 0, 41}: {5, 20, 0, 40} -> {3, 3, 0, 3}
  EXPECT_EQ(model.UbInt8(21, 0), 3);
  EXPECT_EQ(model.UbInt8(21, 2), 0);
  EXPECT_EQ(model.UbInt8(21, 3), 3);
}

TEST(VectorInt8, OverlappingRowsProcessInOrder) {
  GoldenModel model(LoadConfig("tiny"));
  WriteArray<std::int8_t>(model, kDataAddress, {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  // dst = a + 1: row i+1 is overwritten with 2 * row i before it is read, so values double on.
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 0, 0, 3, 4), Sync(),
                Vector(VecOp::kAdd, 0, 0, 1, 2), Halt()});
  EXPECT_EQ(model.UbInt8(1, 0), 2);
  EXPECT_EQ(model.UbInt8(2, 0), 4);
}

TEST(VectorBf16, EveryOperationAndFunction) {
  const Config config = LoadConfig("small");
  std::mt19937_64 rng(TestSeed());
  std::vector<std::uint16_t> a(16 * 4), b(16 * 4);
  for (auto& x : a) x = RandomBf16(rng, true);
  for (auto& x : b) x = RandomBf16(rng, true);
  a[0] = 0x8000;  // -0 vs +0
  b[0] = 0x0000;
  const std::uint16_t lo = 0xC000, hi = 0x3F00;  // clamp to [-2, 0.5]
  for (VecOp op : {VecOp::kAdd, VecOp::kSub, VecOp::kMul, VecOp::kMax, VecOp::kMin}) {
    for (ActFunc func : {ActFunc::kNone, ActFunc::kRelu, ActFunc::kRelu6, ActFunc::kClamp}) {
      for (bool bcast : {false, true}) {
        SCOPED_TRACE(fmt::format("op {} func {} bcast {}", static_cast<int>(op),
                                 static_cast<int>(func), bcast));
        GoldenModel model(config);
        WriteArray(model, kDataAddress, a);
        WriteArray(model, kDataAddress + 0x1000, b);
        RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 32, 0, 0, 4, 16),
                      Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress + 0x1000, 32, 10, 0, 4, 16),
                      Sync(), Vector(op, 0, 10, 0, 4, bcast, func, 0, lo, hi), Halt()});
        for (std::size_t i = 0; i < a.size(); ++i) {
          const std::uint32_t x = ref::FromBf16(a[i]);
          const std::uint32_t y = ref::FromBf16(b[bcast ? i % 16 : i]);
          std::uint32_t v = 0;
          switch (op) {
            case VecOp::kAdd: v = ref::Add(x, y); break;
            case VecOp::kSub: v = ref::Add(x, y ^ 0x80000000u); break;
            case VecOp::kMul: v = ref::Mul(x, y); break;
            case VecOp::kMax: v = ref::Max(x, y); break;
            case VecOp::kMin: v = ref::Min(x, y); break;
            case VecOp::kPass: v = x; break;  // vector_math_test.cpp covers pass
          }
          switch (func) {
            case ActFunc::kNone: break;
            case ActFunc::kRelu: v = ref::Max(v, 0); break;
            case ActFunc::kRelu6: v = ref::Min(ref::Max(v, 0), 0x40C00000); break;
            case ActFunc::kClamp:
              v = ref::Min(ref::Max(v, ref::FromBf16(lo)), ref::FromBf16(hi));
              break;
          }
          ASSERT_EQ(model.UbBf16(i / 16, static_cast<std::uint32_t>(i % 16)), ref::ToBf16(v))
              << "element " << i << std::hex << " a " << a[i] << " b " << b[i];
        }
      }
    }
  }
}

// ---- POOL ----------------------------------------------------------------------------------

isa::Instruction Pool(bool max, std::uint64_t src, std::uint64_t dst, std::uint64_t in_w,
                      std::uint64_t out_h, std::uint64_t out_w, std::uint64_t win,
                      std::uint64_t stride, std::uint64_t scale = 0, std::uint64_t shift = 0) {
  return Insn(Opcode::kPool, {{Field::kOp, max ? 0u : 1u},
                              {Field::kSrc, src},
                              {Field::kDst, dst},
                              {Field::kInW, in_w},
                              {Field::kOutH, out_h},
                              {Field::kOutW, out_w},
                              {Field::kWinH, win},
                              {Field::kWinW, win},
                              {Field::kStrideH, stride},
                              {Field::kStrideW, stride},
                              {Field::kScale, scale},
                              {Field::kShift, shift}});
}

TEST(PoolInt8, MaxSumAndAverage) {
  GoldenModel model(LoadConfig("tiny"));
  // A 4 x 4 image with 4 channels: pixel (y, x) channel c = (y*4 + x) * (c == 1 ? -1 : 1) * 8 + c
  std::vector<std::int8_t> image(64);
  for (std::uint32_t p = 0; p < 16; ++p) {
    for (std::uint32_t c = 0; c < 4; ++c) image[p * 4 + c] = static_cast<std::int8_t>((c == 1 ? -p : p) * 8 + c);
  }
  WriteArray(model, kDataAddress, image);
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 4, 50, 0, 16, 4), Sync(),
                Pool(true, 50, 200, 4, 2, 2, 2, 2),           // 2x2 max, stride 2
                Pool(false, 50, 210, 4, 3, 3, 2, 1, 1, 0),    // 2x2 sum, stride 1 (saturates)
                Pool(false, 50, 220, 4, 2, 2, 2, 2, 1, 2),    // 2x2 average: sum * 1 >> 2
                Pool(false, 50, 230, 4, 3, 3, 2, 1, 0, 0),    // scale field 0 means 1
                Halt()});
  auto pixel = [&](std::uint32_t y, std::uint32_t x, std::uint32_t c) {
    return static_cast<int>(image[(y * 4 + x) * 4 + c]);
  };
  for (std::uint32_t oy = 0; oy < 3; ++oy) {
    for (std::uint32_t ox = 0; ox < 3; ++ox) {
      for (std::uint32_t c = 0; c < 4; ++c) {
        SCOPED_TRACE(fmt::format("({}, {}) channel {}", oy, ox, c));
        int sum = 0;
        for (std::uint32_t wy = 0; wy < 2; ++wy) {
          for (std::uint32_t wx = 0; wx < 2; ++wx) sum += pixel(oy + wy, ox + wx, c);
        }
        EXPECT_EQ(model.UbInt8(210 + oy * 3 + ox, c), ref::SaturateInt8(sum));
        EXPECT_EQ(model.UbInt8(230 + oy * 3 + ox, c), ref::SaturateInt8(sum));
        if (oy < 2 && ox < 2) {
          int max = -1000, sum2 = 0;
          for (std::uint32_t wy = 0; wy < 2; ++wy) {
            for (std::uint32_t wx = 0; wx < 2; ++wx) {
              max = std::max(max, pixel(2 * oy + wy, 2 * ox + wx, c));
              sum2 += pixel(2 * oy + wy, 2 * ox + wx, c);
            }
          }
          EXPECT_EQ(model.UbInt8(200 + oy * 2 + ox, c), max);
          EXPECT_EQ(model.UbInt8(220 + oy * 2 + ox, c), ref::SaturateInt8(ref::Requantize(sum2, 1, 2)));
        }
      }
    }
  }
}

TEST(PoolBf16, MaxAndAverageInWindowOrder) {
  const Config config = LoadConfig("small");
  GoldenModel model(config);
  std::mt19937_64 rng(TestSeed());
  // A 3 x 5 image of 16 channels with special values mixed in.
  std::vector<std::uint16_t> image(15 * 16);
  for (auto& v : image) v = RandomBf16(rng, true);
  image[0] = 0x8000;   // -0 and +0 in one max window
  image[16] = 0x0000;
  WriteArray(model, kDataAddress, image);
  const std::uint32_t ninth = 0x3DE38E39;  // fp32 1/9
  RunOk(model, {Dma(Opcode::kLoad, MemSpace::kUb, kDataAddress, 32, 0, 0, 15, 16), Sync(),
                Pool(true, 0, 100, 5, 1, 2, 3, 2),              // 3x3 max, stride 2
                Pool(false, 0, 110, 5, 1, 3, 3, 1, ninth, 0),   // 3x3 average, stride 1
                Halt()});
  for (std::uint32_t ox = 0; ox < 3; ++ox) {
    for (std::uint32_t c = 0; c < 16; ++c) {
      std::uint32_t sum = 0, max = 0;
      for (std::uint32_t wy = 0; wy < 3; ++wy) {
        for (std::uint32_t wx = 0; wx < 3; ++wx) {
          sum = ref::Add(sum, ref::FromBf16(image[(wy * 5 + ox + wx) * 16 + c]));
          if (ox < 2) {  // the max pool has two output pixels
            const std::uint32_t x = ref::FromBf16(image[(wy * 5 + 2 * ox + wx) * 16 + c]);
            max = (wy == 0 && wx == 0) ? x : ref::Max(max, x);
          }
        }
      }
      EXPECT_EQ(model.UbBf16(110 + ox, c), ref::ToBf16(ref::Mul(sum, ninth))) << ox << "," << c;
      if (ox < 2) {
        EXPECT_EQ(model.UbBf16(100 + ox, c), ref::ToBf16(max)) << ox << "," << c;
      }
    }
  }
}

}  // namespace
}  // namespace systole::model
