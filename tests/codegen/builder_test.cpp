// ProgramBuilder: tokens added only where a cross-unit dependency needs one, FIFO rules checked
// at emission, device memory laid out with the instructions after the data.
#include <gtest/gtest.h>

#include "tests/codegen/codegen_test_util.hpp"

namespace systole::codegen::testing {
namespace {

TEST(Builder, AddsOneTokenPerCrossUnitDependencyAndChecksTheFifo) {
  ProgramBuilder builder(LoadConfig("tiny"));
  builder.Emit(LoadInsn(isa::MemSpace::kUb, 0, 4, 0, 0, 4, 4), {{Space::kUb, 0, 4, true}});
  builder.Emit(LoadWeightsInsn(0, 4, 4, 4), {});
  builder.Emit(LoadWeightsInsn(0, 4, 4, 4), {});
  EXPECT_THROW(builder.Emit(LoadWeightsInsn(0, 4, 4, 4), {}), std::logic_error);  // FIFO of 2
  builder.Emit(MatmulInsn(0, 0, 4, 4, true, false),
               {{Space::kUb, 0, 4, false}, {Space::kAcc, 0, 4, true}});
  // A second reader of the same rows needs no new token: the first one already waited.
  builder.Emit(MatmulInsn(0, 4, 4, 4, true, false),
               {{Space::kUb, 0, 4, false}, {Space::kAcc, 4, 8, true}});
  EXPECT_THROW(builder.Emit(MatmulInsn(0, 0, 4, 4, true, false), {}), std::logic_error);
  const image::Program program = builder.Finish();
  const isa::Instruction load = isa::DecodeOrThrow(program.words[0]);
  const isa::Instruction first = isa::DecodeOrThrow(program.words[3]);
  const isa::Instruction second = isa::DecodeOrThrow(program.words[4]);
  EXPECT_EQ(load.signal, isa::UnitBit(isa::Unit::kMxu));
  EXPECT_EQ(first.wait, isa::UnitBit(isa::Unit::kLoad));
  EXPECT_EQ(second.wait, 0);
}

// Prefetched loads are consumed long after they are emitted, so their tokens are outstanding
// across many instructions; with a tiny token_capacity the builder must move signals later
// instead of overflowing (the model would fault with TOKEN_OVERFLOW).
TEST(Builder, KeepsOutstandingTokensWithinTheCapacity) {
  Config config = LoadConfig("tiny");
  config.token_capacity = 8;
  ProgramBuilder builder(config);
  const Tensor a = builder.AddInput("A", DataType::kInt8, {90, 40});
  const Tensor b = builder.AddInput("B", DataType::kInt8, {40, 9});
  const Tensor out = builder.AddOutput("out", DataType::kInt32, {90, 9});
  Gemm(builder, a, b, std::nullopt, out);
  const image::Program program = builder.Finish();
  RunOnModel(config, program, {});
}

TEST(Builder, PlacesTheInstructionsAfterTheDataAndValidates) {
  ProgramBuilder builder(LoadConfig("small"));
  const Tensor in = builder.AddInput("in", DataType::kBf16, {3, 5});
  const Tensor out = builder.AddOutput("out", DataType::kBf16, {3, 5});
  Activation(builder, in, out, isa::ActFunc::kRelu);
  const image::Program program = builder.Finish();
  EXPECT_GE(program.text_address, out.address + out.Bytes());
  EXPECT_EQ(program.text_address % isa::kInstructionBytes, 0u);
  EXPECT_TRUE(image::ValidateProgram(program).empty());
  ASSERT_NE(program.FindInput("in"), nullptr);
  ASSERT_NE(program.FindOutput("out"), nullptr);
  EXPECT_EQ(program.config, "small");
}

}  // namespace
}  // namespace systole::codegen::testing
