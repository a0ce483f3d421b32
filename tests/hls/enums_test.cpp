// The HLS kernels name the ISA's enumerated fields with their own enums (the kernels are C++17
// and cannot include the ISA's C++20 header). Each must have exactly the ISA's values, in the
// ISA's order: a new op, function or mode in arch/isa fails here until the kernels learn it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "arch/isa/isa.hpp"
#include "hls/kernels/activate.hpp"
#include "hls/kernels/reduce.hpp"
#include "hls/kernels/vector_ops.hpp"

namespace systole::hls {
namespace {

// The value names of `field` of `opcode` in the ISA's table.
std::span<const std::string_view> NamesOf(isa::Opcode opcode, isa::Field field) {
  const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(opcode));
  EXPECT_NE(spec, nullptr);
  const isa::FieldSpec* found = isa::FindField(*spec, field);
  EXPECT_NE(found, nullptr);
  return found->names;
}

TEST(HlsEnums, MatchTheIsa) {
  using isa::Field;
  using isa::Opcode;
  const auto ops = NamesOf(Opcode::kVector, Field::kOp);
  EXPECT_EQ(ops.size(), static_cast<std::size_t>(VectorOp::kPass) + 1);
  EXPECT_EQ(static_cast<int>(VectorOp::kAdd), static_cast<int>(isa::VecOp::kAdd));
  EXPECT_EQ(static_cast<int>(VectorOp::kSub), static_cast<int>(isa::VecOp::kSub));
  EXPECT_EQ(static_cast<int>(VectorOp::kMul), static_cast<int>(isa::VecOp::kMul));
  EXPECT_EQ(static_cast<int>(VectorOp::kMax), static_cast<int>(isa::VecOp::kMax));
  EXPECT_EQ(static_cast<int>(VectorOp::kMin), static_cast<int>(isa::VecOp::kMin));
  EXPECT_EQ(static_cast<int>(VectorOp::kPass), static_cast<int>(isa::VecOp::kPass));

  const auto functions = NamesOf(Opcode::kVector, Field::kFunc);
  EXPECT_EQ(functions.size(), static_cast<std::size_t>(Function::kClamp) + 1);
  EXPECT_EQ(static_cast<int>(Function::kRelu), static_cast<int>(isa::ActFunc::kRelu));
  EXPECT_EQ(static_cast<int>(Function::kRelu6), static_cast<int>(isa::ActFunc::kRelu6));
  EXPECT_EQ(static_cast<int>(Function::kClamp), static_cast<int>(isa::ActFunc::kClamp));

  // The kernels' math field is the ISA's own type (arch/numerics/transcendental.hpp).
  EXPECT_EQ(NamesOf(Opcode::kVector, Field::kMath).size(), isa::kNumVecMath);

  EXPECT_EQ(NamesOf(Opcode::kReduce, Field::kOp).size(), static_cast<std::size_t>(ReduceOp::kSum) + 1);
  EXPECT_EQ(static_cast<int>(ReduceOp::kMax), static_cast<int>(isa::PoolOp::kMax));
  EXPECT_EQ(static_cast<int>(ReduceOp::kSum), static_cast<int>(isa::PoolOp::kSum));
  // systole_reduce takes REDUCE's over field as a bool: over=rows is 1.
  EXPECT_EQ(NamesOf(Opcode::kReduce, Field::kOver).size(), 2u);
  EXPECT_EQ(static_cast<int>(isa::ReduceOver::kRows), 1);
}

}  // namespace
}  // namespace systole::hls
