// batch-norm-training, -inference and -grad (XLA's semantics: statistics over every dimension
// but feature_index): attributes parsed, shapes checked with their location, values against
// numbers worked by hand, and the gradient against central differences of the forward op in
// f64. python/tests/test_batch_norm.py compares all three with JAX on random data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/hlo/hlo_test_util.hpp"

namespace systole::hlo {
namespace {

using ::testing::HasSubstr;
using testing::ErrorOf;
using testing::F32;
using testing::RunText;

std::string Training(const std::string& type, const std::string& dims, const std::string& features,
                     const std::string& attributes) {
  return "HloModule bn\nENTRY e {\n  x = " + type + "[" + dims + "] parameter(0)\n  s = " + type + "[" + features +
         "] parameter(1)\n  o = " + type + "[" + features + "] parameter(2)\n  ROOT t = (" + type + "[" + dims + "], " +
         type + "[" + features + "], " + type + "[" + features + "]) batch-norm-training(x, s, o), " + attributes +
         "\n}\n";
}

TEST(BatchNorm, TrainingNormalizesEachFeatureOverTheOtherDimensions) {
  // Feature dimension 1: columns {1, 3}, {2, 6}, {3, 9} have means 2, 4, 6 and variances 1, 4, 9.
  const Literal result = RunText(Training("f32", "2,3", "3", "epsilon=0, feature_index=1"),
                                 {F32({2, 3}, {1, 2, 3, 3, 6, 9}), F32({3}, {1, 2, 3}), F32({3}, {0, 0, 1})});
  ASSERT_EQ(result.elements.size(), 3u);
  EXPECT_EQ(result.elements[0].values, (std::vector<double>{-1, -2, -2, 1, 2, 4}));
  EXPECT_EQ(result.elements[1].values, (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(result.elements[2].values, (std::vector<double>{1, 4, 9}));
}

TEST(BatchNorm, EpsilonIsAddedToTheVarianceAndFeatureIndexPicksTheDimension) {
  // Feature dimension 0 of [2, 2]: rows {0, 2} and {1, 1}: variances 1 and 0.
  const Literal result = RunText(Training("f32", "2,2", "2", "epsilon=3, feature_index=0"),
                                 {F32({2, 2}, {0, 2, 1, 1}), F32({2}, {1, 1}), F32({2}, {0, 0})});
  EXPECT_EQ(result.elements[0].values, (std::vector<double>{-0.5, 0.5, 0, 0}));  // ±1 / sqrt(1 + 3)
  EXPECT_EQ(result.elements[2].values, (std::vector<double>{1, 0}));             // the variance without ε
}

TEST(BatchNorm, InferenceUsesTheGivenStatistics) {
  const Literal result = RunText(R"(HloModule bn
ENTRY e {
  x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  m = f32[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT y = f32[2,2] batch-norm-inference(x, s, o, m, v), epsilon=0, feature_index=1
})", {F32({2, 2}, {5, 0, 9, 4}), F32({2}, {2, 1}), F32({2}, {1, -1}), F32({2}, {5, 2}), F32({2}, {4, 16})});
  EXPECT_EQ(result.values, (std::vector<double>{1, -1.5, 5, -0.5}));
}

// batch-norm-grad is the gradient of the training op's output with the statistics depending on
// the operand: check it against central differences of Σ dy · batch-norm-training(x)[0].
TEST(BatchNorm, GradEqualsCentralDifferencesOfTheTrainingOutput) {
  const std::vector<double> x0{0.3, -1.2, 2.0, 0.7, 1.5, -0.4, 0.1, 0.9, -2.2, 1.1, 0.0, 0.6};
  const std::vector<double> scale{1.5, -0.5, 2.0}, offset{0.2, 0.1, -0.3}, dy{0.5, -1.0, 0.25, 2.0, 0.0, -0.5,
                                                                              1.0, 0.3, -0.7, -0.2, 0.8, 1.4};
  const auto f64 = [](std::vector<std::int64_t> dims, std::vector<double> values) {
    return testing::Array(ElementType::kF64, std::move(dims), std::move(values));
  };
  const std::string training = Training("f64", "4,3", "3", "epsilon=0.01, feature_index=1");
  const Literal stats = RunText(training, {f64({4, 3}, x0), f64({3}, scale), f64({3}, offset)});
  const Literal grad = RunText(R"(HloModule bn
ENTRY e {
  x = f64[4,3] parameter(0)
  s = f64[3] parameter(1)
  m = f64[3] parameter(2)
  v = f64[3] parameter(3)
  dy = f64[4,3] parameter(4)
  ROOT g = (f64[4,3], f64[3], f64[3]) batch-norm-grad(x, s, m, v, dy), epsilon=0.01, feature_index=1
})", {f64({4, 3}, x0), f64({3}, scale), stats.elements[1], stats.elements[2], f64({4, 3}, dy)});
  const auto loss = [&](const std::vector<double>& x, const std::vector<double>& s, const std::vector<double>& o) {
    const Literal out = RunText(training, {f64({4, 3}, x), f64({3}, s), f64({3}, o)});
    double sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) sum += dy[i] * out.elements[0].values[i];
    return sum;
  };
  const double h = 1e-6;
  for (std::size_t i = 0; i < x0.size(); ++i) {
    std::vector<double> up = x0, down = x0;
    up[i] += h;
    down[i] -= h;
    EXPECT_NEAR(grad.elements[0].values[i], (loss(up, scale, offset) - loss(down, scale, offset)) / (2 * h), 1e-6)
        << "grad_operand " << i;
  }
  for (std::size_t f = 0; f < 3; ++f) {
    std::vector<double> up = scale, down = scale;
    up[f] += h;
    down[f] -= h;
    EXPECT_NEAR(grad.elements[1].values[f], (loss(x0, up, offset) - loss(x0, down, offset)) / (2 * h), 1e-6)
        << "grad_scale " << f;
    up = offset;
    down = offset;
    up[f] += h;
    down[f] -= h;
    EXPECT_NEAR(grad.elements[2].values[f], (loss(x0, scale, up) - loss(x0, scale, down)) / (2 * h), 1e-6)
        << "grad_offset " << f;
  }
}

// tests/hlo/data/batch_norm_train_step.hlo (also a fuzz_hlo seed): forward and backward of one
// layer. Properties that hold whatever the arithmetic order: each feature's output has mean
// offset, its input gradient sums to zero, and grad_offset is the sum of dy.
TEST(BatchNorm, ATrainStepFileRunsForwardAndBackward) {
  std::ifstream in(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests/hlo/data/batch_norm_train_step.hlo");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<double> offset{0.25, -1, 0};
  std::vector<double> x(24), dy(24);
  for (std::size_t i = 0; i < 24; ++i) {
    x[i] = std::sin(0.7 * static_cast<double>(i)) * 3;
    dy[i] = std::cos(1.3 * static_cast<double>(i));
  }
  const Literal out = RunText(text.str(), {F32({2, 2, 2, 3}, x), F32({3}, {1, 2, 0.5}), F32({3}, offset),
                                           F32({2, 2, 2, 3}, dy)});
  ASSERT_EQ(out.elements.size(), 4u);
  for (std::size_t f = 0; f < 3; ++f) {
    double y_sum = 0, dx_sum = 0, dy_sum = 0;
    for (std::size_t i = f; i < 24; i += 3) {
      y_sum += out.elements[0].values[i];
      dx_sum += out.elements[1].values[i];
      dy_sum += dy[i];
    }
    EXPECT_NEAR(y_sum / 8, offset[f], 1e-6) << "feature " << f;
    EXPECT_NEAR(dx_sum, 0, 1e-5) << "feature " << f;
    EXPECT_NEAR(out.elements[3].values[f], dy_sum, 1e-5) << "feature " << f;
  }
}

TEST(BatchNorm, ShapesAndAttributesAreCheckedWithTheirLocation) {
  EXPECT_THAT(ErrorOf([] { testing::ParseAndVerify(Training("f32", "2,3", "2", "epsilon=0, feature_index=1")); }),
              HasSubstr("test.hlo:6:"));
  EXPECT_THAT(ErrorOf([] { testing::ParseAndVerify(Training("f32", "2,3", "2", "epsilon=0, feature_index=1")); }),
              HasSubstr("scale (operand 1, 's') must be f32[3], found f32[2]"));
  EXPECT_THAT(ErrorOf([] { testing::ParseAndVerify(Training("f32", "2,3", "3", "epsilon=0, feature_index=2")); }),
              HasSubstr("feature_index 2 is out of range for rank 2"));
  EXPECT_THAT(ErrorOf([] { testing::ParseAndVerify(Training("f32", "2,3", "3", "epsilon=-1, feature_index=1")); }),
              HasSubstr("epsilon must be a finite value >= 0, found -1"));
  EXPECT_THAT(ErrorOf([] { testing::ParseAndVerify(Training("s32", "2,3", "3", "epsilon=0, feature_index=1")); }),
              HasSubstr("needs a floating-point operand"));
}

}  // namespace
}  // namespace systole::hlo
