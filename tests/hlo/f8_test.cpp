// The f8 element types of JAX and XLA (f8e4m3fn, f8e5m2) on the host: parsed, rounded as
// ml_dtypes rounds them (tests/hlo/data/f8_reference.txt, written by f8_reference.py from the
// library JAX uses — every value of each format, the ties between neighbours, overflow,
// infinities, NaN, subnormals, random float32 values), and run by the interpreter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/hlo/hlo_test_util.hpp"
#include "toolchain/hlo/literal.hpp"

namespace systole::hlo {
namespace {

TEST(F8, RoundingMatchesMlDtypes) {
  std::ifstream in(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests/hlo/data/f8_reference.txt");
  ASSERT_TRUE(in) << "tests/hlo/data/f8_reference.txt";
  std::string line;
  int checked = 0, bad = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string type_name, input_text, expected_text;
    fields >> type_name >> input_text >> expected_text;
    const auto type = ElementTypeFromName(type_name);
    ASSERT_TRUE(type.has_value()) << line;
    const double input = std::bit_cast<float>(static_cast<std::uint32_t>(std::stoul(input_text, nullptr, 16)));
    const double got = RoundToType(*type, input);
    const bool ok = expected_text == "nan"
                        ? std::isnan(got)
                        : std::bit_cast<std::uint32_t>(static_cast<float>(got)) ==
                              static_cast<std::uint32_t>(std::stoul(expected_text, nullptr, 16));
    if (!ok && ++bad <= 10) ADD_FAILURE() << line << ": got " << got;
    ++checked;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(checked, 6000);
}

TEST(F8, ConvertThroughBothTypesOnTheInterpreter) {
  const Literal result = testing::RunText(R"(HloModule f8
ENTRY e {
  x = f32[6] parameter(0)
  a = f8e4m3fn[6] convert(x)
  b = f8e5m2[6] convert(x)
  wa = f32[6] convert(a)
  wb = f32[6] convert(b)
  sum = f32[6] add(wa, wb)
  ROOT t = (f8e4m3fn[6], f8e5m2[6], f32[6]) tuple(a, b, sum)
}
)", {testing::F32({6}, {1.0, 0.3, 464.0, 1000.0, -0.001, 60000.0})});
  ASSERT_EQ(result.elements.size(), 3u);
  // Values ml_dtypes gives: 0.3 -> 0.3125 in both; 464, a tie, -> 448 in both; 1000 and 60000
  // overflow e4m3fn (NaN) but not e5m2 (1024, 57344); -0.001 is subnormal in both formats.
  const std::vector<double>& a = result.elements[0].values;
  EXPECT_EQ(a[0], 1.0);
  EXPECT_EQ(a[1], 0.3125);
  EXPECT_EQ(a[2], 448.0);
  EXPECT_TRUE(std::isnan(a[3]));
  EXPECT_EQ(a[4], -0.001953125);  // -2^-9, e4m3fn's smallest subnormal
  EXPECT_TRUE(std::isnan(a[5]));
  const std::vector<double>& b = result.elements[1].values;
  EXPECT_EQ(b[1], 0.3125);
  EXPECT_EQ(b[3], 1024.0);
  EXPECT_EQ(b[4], -0.0009765625);  // -2^-10
  EXPECT_EQ(b[5], 57344.0);
  EXPECT_EQ(result.elements[0].shape.ToString(), "f8e4m3fn[6]");
  EXPECT_EQ(result.elements[2].values[0], 2.0);  // widened back and added in f32
}

TEST(F8, OtherEightBitFormatsAreRefusedByName) {
  EXPECT_THAT(testing::ErrorOf([] { ParseModule("HloModule m\nENTRY e {\n  ROOT p = f8e4m3fnuz[2] parameter(0)\n}\n", "m.hlo"); }),
              ::testing::HasSubstr("m.hlo:3:12: expected an element type"));
}

}  // namespace
}  // namespace systole::hlo
