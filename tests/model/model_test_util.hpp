// Helpers shared by the golden-model tests: building programs from isa::Instruction values,
// moving typed arrays in and out of device memory, a reproducible random seed, and a reference
// implementation of docs/NUMERICS.md written independently of sim/model/numerics.hpp (different
// code on purpose: it uses <cmath> classification and a distance comparison for rounding, so
// that a bug in the model's bit tricks cannot hide in an identical bug here).
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/util/test_seed.hpp"
#include "arch/config/config.hpp"
#include "arch/isa/isa.hpp"
#include "arch/regs/regmap.hpp"
#include "sim/model/golden_model.hpp"

namespace systole::model::testing {

using isa::Field;
using isa::Opcode;
using regs::ErrorCode;

inline constexpr std::uint64_t kProgramAddress = 0x1000;
inline constexpr std::uint64_t kDataAddress = 0x10000;
inline constexpr std::uint8_t kLoadUnit = isa::UnitBit(isa::Unit::kLoad),
                              kWeightUnit = isa::UnitBit(isa::Unit::kWeight),
                              kMxuUnit = isa::UnitBit(isa::Unit::kMxu),
                              kVectorUnit = isa::UnitBit(isa::Unit::kVector),
                              kStoreUnit = isa::UnitBit(isa::Unit::kStore);

// ---- programs ------------------------------------------------------------------------------

inline isa::Instruction Insn(Opcode opcode,
                             std::initializer_list<std::pair<Field, std::uint64_t>> fields = {},
                             std::uint8_t wait = 0, std::uint8_t signal = 0) {
  return isa::MakeInstruction(opcode, fields, wait, signal);
}

inline isa::Instruction Halt() { return Insn(Opcode::kHalt); }
inline isa::Instruction Sync() { return Insn(Opcode::kSync); }

// LOAD/STORE of `rows` x `elems` elements between device memory and a buffer.
inline isa::Instruction Dma(Opcode opcode, isa::MemSpace mem, std::uint64_t dram,
                            std::uint64_t stride, std::uint64_t row, std::uint64_t col,
                            std::uint64_t rows, std::uint64_t elems) {
  return Insn(opcode, {{Field::kMem, static_cast<std::uint64_t>(mem)},
                       {Field::kDram, dram},
                       {Field::kStride, stride},
                       {Field::kRow, row},
                       {Field::kCol, col},
                       {Field::kRows, rows},
                       {Field::kElems, elems}});
}

inline isa::Instruction LoadWeights(std::uint64_t dram, std::uint64_t stride, std::uint64_t rows,
                                    std::uint64_t cols) {
  return Insn(Opcode::kLoadWeights, {{Field::kDram, dram},
                                     {Field::kStride, stride},
                                     {Field::kRows, rows},
                                     {Field::kCols, cols}});
}

inline isa::Instruction Matmul(std::uint64_t ub, std::uint64_t acc, std::uint64_t rows,
                               std::uint64_t k, bool pop, bool accumulate) {
  return Insn(Opcode::kMatmul, {{Field::kUb, ub},
                                {Field::kAcc, acc},
                                {Field::kRows, rows},
                                {Field::kK, k},
                                {Field::kPop, pop ? 1u : 0u},
                                {Field::kAccumulate, accumulate ? 1u : 0u}});
}

// Encodes `program` at `pc` and runs it as one launch.
inline LaunchResult RunProgram(GoldenModel& model, const std::vector<isa::Instruction>& program,
                               std::uint64_t pc = kProgramAddress) {
  std::vector<std::uint8_t> bytes;
  for (const isa::Instruction& insn : program) {
    const isa::Word word = isa::EncodeOrThrow(insn);
    bytes.insert(bytes.end(), word.begin(), word.end());
  }
  model.WriteMemory(pc, bytes);
  return model.Execute(pc, static_cast<std::uint32_t>(program.size()));
}

// Runs `program` and expects it to reach HALT.
inline void RunOk(GoldenModel& model, const std::vector<isa::Instruction>& program) {
  const LaunchResult result = RunProgram(model, program);
  ASSERT_TRUE(result.Ok()) << result.message;
}

// ---- typed device memory -------------------------------------------------------------------

template <typename T>
void WriteArray(GoldenModel& model, std::uint64_t address, const std::vector<T>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());  // little-endian
  model.WriteMemory(address, bytes);
}

template <typename T>
std::vector<T> ReadArray(GoldenModel& model, std::uint64_t address, std::size_t count) {
  std::vector<std::uint8_t> bytes(count * sizeof(T));
  model.ReadMemory(address, bytes);
  std::vector<T> values(count);
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

inline std::uint32_t Register(GoldenModel& model, std::string_view name) {
  const regs::Register* reg = regs::FindRegister(name);
  if (reg == nullptr) throw std::invalid_argument(std::string(name));
  return model.ReadRegister(reg->offset);
}

inline void SetRegister(GoldenModel& model, std::string_view name, std::uint32_t value) {
  const regs::Register* reg = regs::FindRegister(name);
  if (reg == nullptr) throw std::invalid_argument(std::string(name));
  model.WriteRegister(reg->offset, value);
}

// ---- seeds ---------------------------------------------------------------------------------

// The seed of a randomized test: tests/util/test_seed.hpp's (SYSTOLE_SEED, else one derived
// from the test's name, so CI repeats itself), printed with the command that replays it.
inline std::uint64_t TestSeed() { return systole::test::Seed(); }

// ---- reference numerics (independent of sim/model/numerics.hpp) ----------------------------

namespace ref {

inline float F(std::uint32_t bits) { return std::bit_cast<float>(bits); }
inline std::uint32_t Bits(float value) { return std::bit_cast<std::uint32_t>(value); }

inline float Flush(float value) {
  return std::fpclassify(value) == FP_SUBNORMAL ? std::copysign(0.0f, value) : value;
}

// The result rule of every fp32 operation: canonical NaN, else flushed.
inline std::uint32_t Result(float value) {
  return std::isnan(value) ? 0x7FC00000u : Bits(Flush(value));
}

inline std::uint32_t Add(std::uint32_t a, std::uint32_t b) {
  return Result(Flush(F(a)) + Flush(F(b)));
}
inline std::uint32_t Mul(std::uint32_t a, std::uint32_t b) {
  return Result(Flush(F(a)) * Flush(F(b)));
}

inline std::uint32_t Max(std::uint32_t a, std::uint32_t b) {
  const float x = Flush(F(a)), y = Flush(F(b));
  if (std::isnan(x) || std::isnan(y)) return 0x7FC00000u;
  if (x == 0 && y == 0) return (std::signbit(x) && std::signbit(y)) ? 0x80000000u : 0u;
  return Bits(x > y ? x : y);
}
inline std::uint32_t Min(std::uint32_t a, std::uint32_t b) {
  const float x = Flush(F(a)), y = Flush(F(b));
  if (std::isnan(x) || std::isnan(y)) return 0x7FC00000u;
  if (x == 0 && y == 0) return (std::signbit(x) || std::signbit(y)) ? 0x80000000u : 0u;
  return Bits(x < y ? x : y);
}

inline std::uint32_t FromBf16(std::uint16_t bf16) {
  return Bits(Flush(F(std::uint32_t{bf16} << 16)));
}

// Round to the nearer of the two bf16 values around x (compared in double, which holds both
// distances exactly); a tie goes to the one with an even last bit.
inline std::uint16_t ToBf16(std::uint32_t bits) {
  const float x = Flush(F(bits));
  if (std::isnan(x)) return 0x7FC0;
  const std::uint32_t flushed = Bits(x);
  const auto down = static_cast<std::uint16_t>(flushed >> 16);
  if ((flushed & 0xFFFF) == 0) return down;
  const auto up = static_cast<std::uint16_t>(down + 1);  // next magnitude (may be infinity)
  const double d_down = std::fabs(static_cast<double>(x) - F(std::uint32_t{down} << 16));
  const double d_up = std::fabs(static_cast<double>(F(std::uint32_t{up} << 16)) - x);
  std::uint16_t result = 0;
  if (std::isinf(F(std::uint32_t{up} << 16))) {
    // Rounding to infinity happens exactly when x is at least halfway to 2^128.
    const double halfway = 0x1.FFp127;  // (max bf16 0x1.FEp127 + 2^128) / 2
    result = std::fabs(static_cast<double>(x)) >= halfway ? up : down;
  } else if (d_down < d_up) {
    result = down;
  } else if (d_up < d_down) {
    result = up;
  } else {
    result = (down & 1) == 0 ? down : up;
  }
  const float value = F(std::uint32_t{result} << 16);
  return std::fpclassify(value) == FP_SUBNORMAL ? static_cast<std::uint16_t>(result & 0x8000)
                                                : result;
}

inline std::int8_t SaturateInt8(std::int64_t v) {
  return static_cast<std::int8_t>(std::clamp<std::int64_t>(v, -128, 127));
}

// (v*S + 2^(s-1)) >> s, rounding half up: written as floor division to differ from the model.
inline std::int64_t Requantize(std::int64_t v, std::int64_t scale, unsigned shift) {
  const std::int64_t product = v * scale;
  if (shift == 0) return product;
  const std::int64_t divisor = std::int64_t{1} << shift;
  const std::int64_t numerator = product + divisor / 2;
  std::int64_t quotient = numerator / divisor;  // truncates toward zero
  if (numerator % divisor != 0 && numerator < 0) --quotient;  // floor
  return quotient;
}

}  // namespace ref

// Interesting bf16 values for corner-case sweeps.
inline std::vector<std::uint16_t> SpecialBf16() {
  return {0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x8080, 0x3F80, 0xBF80, 0x4000,
          0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x0100, 0x2000, 0x5F00};
}

// A random bf16: mostly moderate normal numbers, sometimes a special value.
inline std::uint16_t RandomBf16(std::mt19937_64& rng, bool with_specials) {
  if (with_specials && rng() % 16 == 0) {
    const auto specials = SpecialBf16();
    return specials[rng() % specials.size()];
  }
  const auto sign = static_cast<std::uint16_t>((rng() & 1) << 15);
  const auto exponent = static_cast<std::uint16_t>(120 + rng() % 14);  // 2^-7 .. 2^6
  const auto fraction = static_cast<std::uint16_t>(rng() & 0x7F);
  return static_cast<std::uint16_t>(sign | exponent << 7 | fraction);
}

}  // namespace systole::model::testing
