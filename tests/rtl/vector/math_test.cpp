// rtl/vector/systole_vector_math (VECTOR's transcendental functions, micro-programmed) against
// sim/model/transcendental.cpp, bit for bit, 16 lanes at a time: every bf16 input of every
// function (exhaustive), then random fp32 inputs (half raw bit patterns, half in [-20, 20]) and
// the edge cases of docs/NUMERICS.md (signed zeros, subnormals, infinities, NaNs, the overflow
// and underflow ranges of exp) — and the cycles each function takes.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <iostream>
#include <random>
#include <vector>

#include "Vvl_vector_math.h"
#include "sim/model/numerics.hpp"
#include "sim/model/transcendental.hpp"
#include "sim/rtl/harness.hpp"
#include "tests/util/test_seed.hpp"

namespace systole::rtl {
namespace {

using isa::VecMath;
constexpr unsigned kLanes = 16;  // the test top's W
constexpr std::array kFunctions = {VecMath::kExp,     VecMath::kRecip,    VecMath::kRsqrt,
                                   VecMath::kTanh,    VecMath::kSigmoid,  VecMath::kGeluTanh,
                                   VecMath::kGeluErf, VecMath::kLog};

class MathBench {
 public:
  explicit MathBench(std::uint64_t seed) : sim_("vector_math", {.trace_path = {}, .seed = seed}) {
    sim_->start_i = 0;
    sim_->func_i = 0;
    for (unsigned l = 0; l < kLanes; ++l) sim_->v_i[l] = 0;
    sim_.Reset();
  }

  // Runs `math` on up to 16 inputs; returns the cycles from start to done. Every mismatch is
  // reported (the first 20).
  std::uint64_t Check(VecMath math, const std::vector<std::uint32_t>& inputs) {
    sim_->func_i = static_cast<std::uint8_t>(math);
    for (unsigned l = 0; l < kLanes; ++l) sim_->v_i[l] = l < inputs.size() ? inputs[l] : 0;
    sim_->start_i = 1;
    sim_.Tick();
    sim_->start_i = 0;
    std::uint64_t cycles = 1;
    sim_.Eval();
    while (!sim_->done_o) {
      sim_.Tick();
      ++cycles;
      if (cycles > 1000) {
        ADD_FAILURE() << "no done_o after 1000 cycles";
        return cycles;
      }
    }
    for (unsigned l = 0; l < inputs.size(); ++l) {
      const std::uint32_t want = model::ApplyMathF32(math, inputs[l]);
      const std::uint32_t got = sim_->y_o[l];
      if (got != want && reported_++ < 20) {
        ADD_FAILURE() << "math " << static_cast<int>(math) << std::hex << " input 0x"
                      << inputs[l] << ": rtl 0x" << got << " model 0x" << want;
      }
      mismatches_ += got != want;
    }
    sim_.Tick();
    return cycles;
  }
  std::uint64_t mismatches() const { return mismatches_; }

 private:
  Harness<Vvl_vector_math> sim_;
  std::uint64_t mismatches_ = 0;
  int reported_ = 0;
};

// The model's fp32 inputs come from fp32 operations, so they are flushed: so are these.
std::uint32_t Flushed(std::uint32_t bits) { return model::FlushF32(bits); }

TEST(VectorMath, EveryBf16InputOfEveryFunction) {
  MathBench bench(test::Seed());
  for (const VecMath math : kFunctions) {
    std::uint64_t cycles = 0;
    std::vector<std::uint32_t> inputs;
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
      inputs.push_back(Flushed(b << 16));
      if (inputs.size() == kLanes) {
        cycles = bench.Check(math, inputs);
        inputs.clear();
      }
    }
    std::cout << "[ cycles   ] math " << static_cast<int>(math) << ": " << cycles
              << " cycles per row\n";
  }
  EXPECT_EQ(bench.mismatches(), 0u);
}

TEST(VectorMath, RandomFp32InputsAndEdgeCases) {
  const std::uint64_t seed = test::Seed();
  MathBench bench(seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> near(-20.0f, 20.0f);
  std::vector<std::uint32_t> edges = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                                      0xFFC00001, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,
                                      0x3F800000, 0xBF800000, 0x7F000000, 0x00FFFFFF};
  for (const float x : {88.72283f, 88.72284f, 89.0f, -87.33654f, -104.0f, -150.0f, 134.0f,
                        -13.3f, -10.05f, 9.0f, 10.0f, 0.1733f, 1e-20f, -1e-20f, 1.0f, 1.41421354f}) {
    for (std::uint32_t d = 0; d < 3; ++d) {
      edges.push_back(model::BitsFromFloat(x) + d);
      edges.push_back(model::BitsFromFloat(x) - d);
    }
  }
  for (const VecMath math : kFunctions) {
    for (std::size_t i = 0; i < edges.size(); i += kLanes) {
      bench.Check(math, std::vector<std::uint32_t>(
                            edges.begin() + static_cast<std::ptrdiff_t>(i),
                            edges.begin() + static_cast<std::ptrdiff_t>(std::min(edges.size(), i + kLanes))));
    }
    for (int run = 0; run < 1500; ++run) {
      std::vector<std::uint32_t> inputs;
      for (unsigned l = 0; l < kLanes; ++l) {
        inputs.push_back(Flushed((l & 1) != 0 ? static_cast<std::uint32_t>(rng())
                                              : model::BitsFromFloat(near(rng))));
      }
      bench.Check(math, inputs);
    }
  }
  EXPECT_EQ(bench.mismatches(), 0u);
}

}  // namespace
}  // namespace systole::rtl
