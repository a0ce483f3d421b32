// dot and convolution against references written the other way round: the convolution
// reference materializes the dilated, padded input and slides the dilated kernel over it.
#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "tests/hlo/hlo_test_util.hpp"

namespace systole::hlo {
namespace {

using testing::F32;
using testing::RunText;

std::vector<double> RandomValues(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-4, 4);  // small integers: every sum is exact
  std::vector<double> values(count);
  for (double& v : values) v = small(rng);
  return values;
}

std::size_t U(int value) { return static_cast<std::size_t>(value); }

TEST(HloDot, MatrixTimesMatrix) {
  const Literal r = RunText(R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                            {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 2}, {7, 8, 9, 10, 11, 12})});
  EXPECT_EQ(r.values, (std::vector<double>{58, 64, 139, 154}));
}

TEST(HloDot, VectorDotVectorGivesScalar) {
  const Literal r = RunText(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})",
                            {F32({4}, {1, 2, 3, 4}), F32({4}, {5, 6, 7, 8})});
  EXPECT_EQ(r.values, (std::vector<double>{70}));
}

TEST(HloDot, GeneralBatchAndTransposedContraction) {
  // out[b, m, n] = Σ_k lhs[k, b, m] * rhs[n, b, k]
  const std::vector<double> lhs = RandomValues(3 * 2 * 4, 1);
  const std::vector<double> rhs = RandomValues(5 * 2 * 3, 2);
  const Literal r = RunText(R"(
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[5,2,3] parameter(1)
  ROOT d = f32[2,4,5] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={1}, rhs_contracting_dims={2}
})",
                            {F32({3, 2, 4}, lhs), F32({5, 2, 3}, rhs)});
  for (int b = 0; b < 2; ++b) {
    for (int m = 0; m < 4; ++m) {
      for (int n = 0; n < 5; ++n) {
        double expected = 0;
        for (int k = 0; k < 3; ++k) expected += lhs[U((k * 2 + b) * 4 + m)] * rhs[U((n * 2 + b) * 3 + k)];
        EXPECT_EQ(r.values[U((b * 4 + m) * 5 + n)], expected) << b << "," << m << "," << n;
      }
    }
  }
}

struct ConvCase {
  int batch, height, width, channels, kh, kw, outputs, groups;
  int stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right;
  int lhs_dilation, rhs_dilation;
};

std::size_t At4(int a, int b, int c, int d, int size_b, int size_c, int size_d) {
  return U(((a * size_b + b) * size_c + c) * size_d + d);
}

// NHWC x HWIO reference: materialize the dilated and padded input, then slide.
std::vector<double> ReferenceConv(const ConvCase& c, const std::vector<double>& input, const std::vector<double>& kernel,
                                  int& out_h, int& out_w) {
  const int dilated_h = (c.height - 1) * c.lhs_dilation + 1 + c.pad_top + c.pad_bottom;
  const int dilated_w = (c.width - 1) * c.lhs_dilation + 1 + c.pad_left + c.pad_right;
  std::vector<double> padded(U(c.batch * dilated_h * dilated_w * c.channels), 0.0);
  for (int n = 0; n < c.batch; ++n) {
    for (int y = 0; y < c.height; ++y) {
      for (int x = 0; x < c.width; ++x) {
        const int py = c.pad_top + y * c.lhs_dilation;
        const int px = c.pad_left + x * c.lhs_dilation;
        if (py < 0 || px < 0 || py >= dilated_h || px >= dilated_w) continue;
        for (int ch = 0; ch < c.channels; ++ch) {
          padded[At4(n, py, px, ch, dilated_h, dilated_w, c.channels)] = input[At4(n, y, x, ch, c.height, c.width, c.channels)];
        }
      }
    }
  }
  const int window_h = (c.kh - 1) * c.rhs_dilation + 1;
  const int window_w = (c.kw - 1) * c.rhs_dilation + 1;
  out_h = (dilated_h - window_h) / c.stride_h + 1;
  out_w = (dilated_w - window_w) / c.stride_w + 1;
  const int group_in = c.channels / c.groups;
  const int group_out = c.outputs / c.groups;
  std::vector<double> out(U(c.batch * out_h * out_w * c.outputs), 0.0);
  for (int n = 0; n < c.batch; ++n) {
    for (int oy = 0; oy < out_h; ++oy) {
      for (int ox = 0; ox < out_w; ++ox) {
        for (int o = 0; o < c.outputs; ++o) {
          const int g = o / group_out;
          double sum = 0;
          for (int ky = 0; ky < c.kh; ++ky) {
            for (int kx = 0; kx < c.kw; ++kx) {
              for (int ci = 0; ci < group_in; ++ci) {
                const double x = padded[At4(n, oy * c.stride_h + ky * c.rhs_dilation, ox * c.stride_w + kx * c.rhs_dilation,
                                            g * group_in + ci, dilated_h, dilated_w, c.channels)];
                sum += x * kernel[At4(ky, kx, ci, o, c.kw, group_in, c.outputs)];
              }
            }
          }
          out[At4(n, oy, ox, o, out_h, out_w, c.outputs)] = sum;
        }
      }
    }
  }
  return out;
}

class HloConvolution : public ::testing::TestWithParam<ConvCase> {};

TEST_P(HloConvolution, MatchesReferenceInNhwcAndNchw) {
  const ConvCase& c = GetParam();
  const std::vector<double> input = RandomValues(U(c.batch * c.height * c.width * c.channels), 3);
  const std::vector<double> kernel = RandomValues(U(c.kh * c.kw * (c.channels / c.groups) * c.outputs), 4);
  int out_h = 0;
  int out_w = 0;
  const std::vector<double> expected = ReferenceConv(c, input, kernel, out_h, out_w);
  const std::string window = fmt::format(
      "window={{size={}x{} stride={}x{} pad={}_{}x{}_{} lhs_dilate={}x{} rhs_dilate={}x{}}}", c.kh, c.kw, c.stride_h,
      c.stride_w, c.pad_top, c.pad_bottom, c.pad_left, c.pad_right, c.lhs_dilation, c.lhs_dilation, c.rhs_dilation,
      c.rhs_dilation);
  const std::vector<Literal> arguments{F32({c.batch, c.height, c.width, c.channels}, input),
                                       F32({c.kh, c.kw, c.channels / c.groups, c.outputs}, kernel)};
  const std::string nhwc = fmt::format(
      "ENTRY e {{\n  x = f32[{},{},{},{}] parameter(0)\n  k = f32[{},{},{},{}] parameter(1)\n"
      "  ROOT c = f32[{},{},{},{}] convolution(x, k), {}, dim_labels=b01f_01io->b01f, feature_group_count={}\n}}\n",
      c.batch, c.height, c.width, c.channels, c.kh, c.kw, c.channels / c.groups, c.outputs, c.batch, out_h, out_w,
      c.outputs, window, c.groups);
  EXPECT_EQ(RunText(nhwc, arguments).values, expected);

  // The same convolution with NCHW input, OIHW kernel and NCHW output, via transposes.
  const std::string nchw = fmt::format(
      "ENTRY e {{\n  x = f32[{0},{1},{2},{3}] parameter(0)\n  k = f32[{4},{5},{6},{7}] parameter(1)\n"
      "  xt = f32[{0},{3},{1},{2}] transpose(x), dimensions={{0,3,1,2}}\n"
      "  kt = f32[{7},{6},{4},{5}] transpose(k), dimensions={{3,2,0,1}}\n"
      "  c = f32[{0},{10},{8},{9}] convolution(xt, kt), {11}, dim_labels=bf01_oi01->bf01, feature_group_count={12}\n"
      "  ROOT back = f32[{0},{8},{9},{10}] transpose(c), dimensions={{0,2,3,1}}\n}}\n",
      c.batch, c.height, c.width, c.channels, c.kh, c.kw, c.channels / c.groups, c.outputs, out_h, out_w, c.outputs,
      window, c.groups);
  EXPECT_EQ(RunText(nchw, arguments).values, expected);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HloConvolution,
    ::testing::Values(ConvCase{1, 5, 5, 2, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    // same padding
                      ConvCase{2, 7, 6, 3, 3, 2, 4, 1, 2, 2, 1, 0, 0, 1, 1, 1},    // stride, asymmetric pad
                      ConvCase{1, 6, 6, 2, 3, 3, 2, 1, 1, 1, 0, 0, 0, 0, 1, 2},    // rhs (atrous) dilation
                      ConvCase{1, 3, 4, 2, 2, 2, 3, 1, 1, 1, 1, 1, 0, 1, 2, 1},    // lhs dilation (transposed conv)
                      ConvCase{1, 5, 5, 4, 3, 3, 6, 2, 1, 2, 1, 1, 1, 1, 1, 1},    // grouped
                      ConvCase{1, 6, 6, 4, 3, 3, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1},    // depthwise
                      ConvCase{1, 6, 5, 2, 3, 3, 2, 1, 1, 1, -1, 0, 0, -1, 1, 1},  // negative padding
                      ConvCase{3, 4, 4, 3, 1, 1, 5, 1, 1, 1, 0, 0, 0, 0, 1, 1}));  // 1x1

TEST(HloConvolutionOther, OneDimensionalAndReversedKernel) {
  const Literal r = RunText(R"(
ENTRY e {
  x = f32[1,1,5] parameter(0)
  k = f32[1,1,3] parameter(1)
  ROOT c = f32[1,1,3] convolution(x, k), window={size=3 rhs_reversal=1}, dim_labels=bf0_oi0->bf0
})",
                            {F32({1, 1, 5}, {1, 2, 3, 4, 5}), F32({1, 1, 3}, {1, 10, 100})});
  EXPECT_EQ(r.values, (std::vector<double>{100 + 20 + 3, 200 + 30 + 4, 300 + 40 + 5}));
}

TEST(HloConvolutionOther, Bf16ResultIsRoundedOnce) {
  const Literal r = RunText(R"(
ENTRY e {
  x = bf16[1,1,3] parameter(0)
  k = bf16[1,1,3] parameter(1)
  ROOT c = bf16[1,1,1] convolution(x, k), window={size=3}, dim_labels=bf0_oi0->bf0
})",
                            {testing::Array(ElementType::kBf16, {1, 1, 3}, {256, 1, 1}),
                             testing::Array(ElementType::kBf16, {1, 1, 3}, {1, 1, 1})});
  EXPECT_EQ(r.values, (std::vector<double>{258}));  // 258 exactly: no rounding between the adds
}

}  // namespace
}  // namespace systole::hlo
