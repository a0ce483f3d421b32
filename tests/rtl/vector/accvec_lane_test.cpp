// One ACCVEC lane (rtl/vector/systole_accvec_lane.sv: the IEEE binary32 units of
// rtl/numerics/systole_fp32_ieee_*.sv) against the golden model's AccOpF32, bit for bit:
// every pair of special operands and a large sample of random ones per op — raw bit patterns,
// subnormals of every size, operands of nearby exponents (cancellation, every alignment),
// magnitudes whose products and quotients underflow or overflow. add/sub/mul/max/min are
// combinational; div and sqrt are started and read 28 cycles later, as the engine does.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <random>

#include "Vvl_accvec_lane.h"
#include "sim/model/numerics.hpp"
#include "sim/rtl/harness.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"
#include "tests/util/fp32_operands.hpp"

namespace systole::rtl {
namespace {

using isa::AccOp;

class LaneBench {
 public:
  explicit LaneBench(std::uint64_t seed) : sim_("accvec_lane", {.trace_path = {}, .seed = seed}) {}

  void Check(AccOp op, std::uint32_t a, std::uint32_t b) {
    sim_->op_i = static_cast<std::uint8_t>(op);
    sim_->a_i = a;
    sim_->b_i = b;
    if (op == AccOp::kDiv || op == AccOp::kSqrt) {
      sim_->start_i = 1;
      sim_.Tick();
      sim_->start_i = 0;
      for (int i = 0; i < 27; ++i) sim_.Tick();  // y_o valid in the 28th cycle after start
    }
    sim_.Eval();
    const std::uint32_t want = model::AccOpF32(op, a, b);
    ++checked_;
    if (sim_->y_o != want && reported_++ < 20) {
      ADD_FAILURE() << "op " << static_cast<int>(op) << std::hex << ": a=0x" << a << " b=0x" << b
                    << " rtl=0x" << sim_->y_o << " model=0x" << want;
    }
  }
  std::uint64_t checked() const { return checked_; }

 private:
  Harness<Vvl_accvec_lane> sim_;
  std::uint64_t checked_ = 0;
  int reported_ = 0;
};

constexpr AccOp kOps[] = {AccOp::kAdd, AccOp::kSub, AccOp::kMul, AccOp::kMax,
                          AccOp::kMin, AccOp::kDiv, AccOp::kSqrt};

std::uint32_t Operand(std::mt19937_64& rng, std::uint32_t other) {
  const auto sign = static_cast<std::uint32_t>(rng() & 1) << 31;
  switch (rng() % 8) {
    case 0: return sign | (static_cast<std::uint32_t>(rng()) & 0x007FFFFF);  // subnormal
    case 1: {  // tiny or huge: products and quotients underflow and overflow
      const auto exponent = static_cast<std::uint32_t>(rng() % 2 ? 1 + rng() % 40 : 214 + rng() % 40);
      return sign | exponent << 23 | (static_cast<std::uint32_t>(rng()) & 0x7FFFFF);
    }
    case 2: return static_cast<std::uint32_t>(rng()) | 0x7F800000;  // inf and NaN payloads
    default: return systole::test::RandomOperand(rng, other);
  }
}

TEST(AccVecLane, SpecialPairs) {
  const std::uint64_t seed = test::Seed();
  LaneBench bench(seed);
  std::vector<std::uint32_t> values = systole::test::Specials();
  for (std::uint32_t v : {0x00400000u, 0x00000002u, 0x00800001u, 0x7FC12345u, 0xFF812345u,
                          0x7FFFFFFFu, 0x34000000u, 0x0B800000u, 0x5F800000u}) {
    values.push_back(v);
  }
  for (AccOp op : kOps) {
    for (std::uint32_t a : values) {
      for (std::uint32_t b : values) bench.Check(op, a, b);
    }
  }
  std::cout << "[ checked  ] " << bench.checked() << " special pairs\n";
}

TEST(AccVecLane, RandomOperandsMatchTheModel) {
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  LaneBench bench(seed);
  for (AccOp op : kOps) {
    const bool iterative = op == AccOp::kDiv || op == AccOp::kSqrt;
    const int pairs = iterative ? 60000 : 400000;
    for (int i = 0; i < pairs && !::testing::Test::HasFailure(); ++i) {
      const std::uint32_t a = Operand(rng, static_cast<std::uint32_t>(rng()));
      bench.Check(op, a, Operand(rng, a));
    }
  }
  std::cout << "[ checked  ] " << bench.checked() << " random pairs\n";
}

}  // namespace
}  // namespace systole::rtl
