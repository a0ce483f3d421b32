// Inputs and outputs as NumPy arrays, and the documented random-input generator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/hlo/hlo_test_util.hpp"
#include "toolchain/hlo/io.hpp"

namespace systole::hlo {
namespace {

constexpr std::string_view kModule = R"(
ENTRY e {
  a = bf16[3,2] parameter(1)
  b = f32[5] parameter(0)
  c = s32[4] parameter(2)
  d = pred[2] parameter(3)
  inner = (f32[5], bf16[3,2]) tuple(b, a)
  ROOT t = ((f32[5], bf16[3,2]), s32[4], pred[2]) tuple(inner, c, d)
}
)";

TEST(HloIo, RandomInputsFollowTheDocumentedRecipe) {
  const Module module = testing::ParseAndVerify(kModule);
  const std::vector<Literal> inputs = RandomInputs(module, 42);
  ASSERT_EQ(inputs.size(), 4u);
  EXPECT_EQ(inputs[0].shape.ToString(), "f32[5]");  // parameter(0) first
  EXPECT_EQ(inputs[1].shape.ToString(), "bf16[3,2]");
  std::mt19937_64 rng(42);
  for (double value : inputs[0].values) {
    const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    EXPECT_EQ(value, static_cast<double>(static_cast<float>(2 * unit - 1)));
  }
  for (double value : inputs[1].values) {
    const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    EXPECT_EQ(value, RoundToType(ElementType::kBf16, 2 * unit - 1));
    EXPECT_EQ(value, RoundToType(ElementType::kBf16, value));
  }
  for (double value : inputs[2].values) EXPECT_EQ(value, static_cast<double>(rng() % 17) - 8);
  for (double value : inputs[3].values) EXPECT_EQ(value, static_cast<double>(rng() & 1));
  EXPECT_EQ(RandomInputs(module, 42)[1].values, inputs[1].values);
  EXPECT_NE(RandomInputs(module, 43)[0].values, inputs[0].values);
}

TEST(HloIo, OutputsFlattenTuplesInOrder) {
  const Module module = testing::ParseAndVerify(kModule);
  const Literal result = Interpreter(module).Run(RandomInputs(module, 7));
  const std::vector<npy::Array> arrays = OutputArrays(result);
  ASSERT_EQ(arrays.size(), 4u);
  EXPECT_EQ(arrays[0].type, npy::ElementType::kFloat32);
  EXPECT_EQ(arrays[0].shape, (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(arrays[1].type, npy::ElementType::kFloat32);  // bf16 travels as float32
  EXPECT_EQ(arrays[1].shape, (std::vector<std::uint64_t>{3, 2}));
  EXPECT_EQ(arrays[2].type, npy::ElementType::kInt32);
  EXPECT_EQ(arrays[3].type, npy::ElementType::kUInt8);
}

TEST(HloIo, InputsFromArraysCheckShapesAndRound) {
  const Module module = testing::ParseAndVerify("ENTRY e {\n  ROOT a = bf16[2] parameter(0)\n}\n");
  npy::Array array{npy::ElementType::kFloat32, {2}, {1.00390625, 3}};
  const std::vector<Literal> inputs = InputsFromArrays(module, {array});
  EXPECT_EQ(inputs[0].values, (std::vector<double>{1, 3}));
  array.shape = {3};
  array.values.push_back(0);
  EXPECT_THAT(testing::ErrorOf([&] { InputsFromArrays(module, {array}); }),
              ::testing::HasSubstr("arr_0 has shape (3) but parameter 0 ('a') is bf16[2]"));
  EXPECT_THAT(testing::ErrorOf([&] { InputsFromArrays(module, {}); }),
              ::testing::HasSubstr("0 input array(s) given but the entry computation 'e' takes 1"));
}

// f32 1000 into an s8 parameter once became 127 and NaN became 0, silently; `.s` programs
// refuse the same values. Exact conversion refuses them, naming the array, its dtype, the
// parameter and its type; kLossy keeps XLA's convert for whoever asks for it.
TEST(HloIo, LossyInputValuesAreRefusedUnlessAskedFor) {
  const Module module = testing::ParseAndVerify("ENTRY e {\n  ROOT a = s8[3] parameter(0)\n}\n");
  const npy::Array fits{npy::ElementType::kFloat32, {3}, {-128, 0, 127}};
  EXPECT_EQ(InputsFromArrays(module, {fits})[0].values, fits.values);
  for (const double bad : {1000.0, 0.5, std::nan("")}) {
    const npy::Array array{npy::ElementType::kFloat32, {3}, {1, 2, bad}};
    EXPECT_THAT(testing::ErrorOf([&] { InputsFromArrays(module, {array}, InputConversion::kExact, "in.npz"); }),
                ::testing::HasSubstr("in.npz: arr_0 (float32) for parameter 0 ('a', s8[3]): element 2 = "))
        << bad;
    EXPECT_THROW(InputsFromArrays(module, {array}), LossyInputError);
  }
  const npy::Array big{npy::ElementType::kFloat32, {3}, {1000, -1000, std::nan("")}};
  EXPECT_EQ(InputsFromArrays(module, {big}, InputConversion::kLossy)[0].values, (std::vector<double>{127, -128, 0}));
}

TEST(HloIo, FloatInputsRoundButDoNotOverflow) {
  const Module module = testing::ParseAndVerify("ENTRY e {\n  ROOT a = bf16[3] parameter(0)\n}\n");
  const npy::Array array{npy::ElementType::kFloat64, {3}, {1.00390625, INFINITY, std::nan("")}};
  const std::vector<Literal> inputs = InputsFromArrays(module, {array});
  EXPECT_EQ(inputs[0].values[0], 1.0);  // rounded: NumPy has no bf16, float32 stands in for it
  EXPECT_TRUE(std::isinf(inputs[0].values[1]));
  EXPECT_TRUE(std::isnan(inputs[0].values[2]));
  const npy::Array huge{npy::ElementType::kFloat64, {3}, {1, 2, 1e300}};
  EXPECT_THAT(testing::ErrorOf([&] { InputsFromArrays(module, {huge}); }),
              ::testing::HasSubstr("element 2 = 1e+300 does not fit bf16 (it would become inf)"));
}

}  // namespace
}  // namespace systole::hlo
