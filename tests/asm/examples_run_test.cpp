// Assembles each example program, runs it on the golden model and checks its output against
// values computed here from the formulas in the example's header comment (not from the
// program's own data), so the assembler, the example and the model are all checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "arch/config/config.hpp"
#include "sim/model/golden_model.hpp"
#include "tests/asm/asm_test_util.hpp"
#include "toolchain/asm/assembler.hpp"
#include "toolchain/asm/bundle.hpp"

namespace systole::assembly {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::Program;
using image::DataSegment;
using image::TensorDesc;

namespace {

// Loads `program` into a fresh model of its configuration, runs it as a host would (data, then
// the words at text_address, then one launch) and returns the bytes of output `name`.
std::vector<std::uint8_t> RunOnModel(const Program& program, std::string_view name) {
  model::GoldenModel device(LoadConfig(program.config.value()));
  for (const DataSegment& segment : program.data)
    device.WriteMemory(segment.address, segment.bytes);
  std::vector<std::uint8_t> text(program.TextBytes());
  if (!text.empty()) std::memcpy(text.data(), program.words.data(), text.size());
  device.WriteMemory(program.text_address, text);
  const model::LaunchResult result =
      device.Execute(program.text_address, static_cast<std::uint32_t>(program.words.size()));
  EXPECT_TRUE(result.Ok()) << result.message << " at "
                           << program.SourceOf((result.fault_pc - program.text_address) / 32);
  const TensorDesc* output = program.FindOutput(name);
  EXPECT_NE(output, nullptr);
  std::vector<std::uint8_t> bytes(output == nullptr ? 0 : output->Bytes());
  if (output != nullptr) device.ReadMemory(output->address, bytes);
  return bytes;
}

Program Example(std::string_view file) {
  // Through LoadProgram and a bundle round trip, as the CLI would run it.
  return ParseBundle(SerializeBundle(LoadProgram(testing::ExampleDir() / file)));
}

float Bf16At(const std::vector<std::uint8_t>& bytes, std::size_t index) {
  const std::uint32_t bits =
      std::uint32_t{bytes.at(2 * index)} << 16 | std::uint32_t{bytes.at(2 * index + 1)} << 24;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// H[i][k] = max(0, k - 2i + 1): the hidden layer of both MLP examples.
int Hidden(int i, int k) { return std::max(0, k - 2 * i + 1); }

TEST(Examples, MlpBf16) {
  const std::vector<std::uint8_t> y = RunOnModel(Example("mlp_bf16.s"), "Y");
  ASSERT_EQ(y.size(), 8u * 16 * 2);
  for (int i = 0; i < 8; ++i) {
    float sum = 0;
    for (int k = 0; k < 16; ++k) sum += static_cast<float>(Hidden(i, k));
    for (int j = 0; j < 16; ++j) {
      const float expected = j < 15 ? static_cast<float>(Hidden(i, j)) * 0.5f - 1.0f : sum - 1.0f;
      EXPECT_EQ(Bf16At(y, static_cast<std::size_t>(i * 16 + j)), expected) << i << "," << j;
    }
  }
  EXPECT_EQ(Bf16At(y, 15), 135.0f);  // the checksum of row 0 quoted in the example
}

TEST(Examples, MlpInt8) {
  const std::vector<std::uint8_t> y = RunOnModel(Example("mlp_int8.s"), "Y");
  ASSERT_EQ(y.size(), 8u * 16);
  for (int i = 0; i < 8; ++i) {
    int sum = 0;
    for (int k = 0; k < 16; ++k) sum += Hidden(i, k);
    for (int j = 0; j < 16; ++j) {
      const std::int64_t v = j < 15 ? Hidden(i, j) - 2 : sum - 2;
      const std::int64_t expected = std::clamp<std::int64_t>(((3 * v + 2) >> 2) + 5, -128, 127);
      EXPECT_EQ(static_cast<std::int8_t>(y[static_cast<std::size_t>(i * 16 + j)]), expected)
          << i << "," << j;
    }
  }
  const std::vector<int> row0 = {4, 5, 6, 7, 7, 8, 9, 10, 10, 11, 12, 13, 13, 14, 15, 106};
  for (int j = 0; j < 16; ++j)
    EXPECT_EQ(static_cast<std::int8_t>(y[static_cast<std::size_t>(j)]),
              row0[static_cast<std::size_t>(j)]);
}

TEST(Examples, ConvPoolTiny) {
  const std::vector<std::uint8_t> out = RunOnModel(Example("conv_pool_tiny.s"), "OUT");
  ASSERT_EQ(out.size(), 2u * 2 * 4);
  // F[p] = [p, 0, 2x + 1, 5] for pixel p = 4y + x of the 4x4 image.
  const auto feature = [](int y, int x, int c) {
    const int values[4] = {4 * y + x, 0, 2 * x + 1, 5};
    return values[c];
  };
  const int k[4] = {3, 7, 5, -2};
  for (int oy = 0; oy < 2; ++oy) {
    for (int ox = 0; ox < 2; ++ox) {
      for (int c = 0; c < 4; ++c) {
        int max = -128, sum = 0;
        for (int wy = 0; wy < 2; ++wy) {
          for (int wx = 0; wx < 2; ++wx) {
            max = std::max(max, feature(2 * oy + wy, 2 * ox + wx, c));
            sum += feature(2 * oy + wy, 2 * ox + wx, c);
          }
        }
        const int average = (sum + 2) >> 2;
        const int expected = std::clamp(((max + average) * k[c] + 1) >> 1, -8, 40);
        EXPECT_EQ(static_cast<std::int8_t>(out[static_cast<std::size_t>((oy * 2 + ox) * 4 + c)]),
                  expected)
            << oy << "," << ox << "," << c;
      }
    }
  }
  // The table in the example's comment.
  const std::vector<int> table = {12, 0, 13, -8, 18, 0, 33, -8, 36, 0, 13, -8, 40, 0, 33, -8};
  for (std::size_t i = 0; i < table.size(); ++i)
    EXPECT_EQ(static_cast<std::int8_t>(out[i]), table[i]);
}

// gemm_tiny.s: Y1 = X · W1 = 2X and Y2 = X · W2, X[i][k] = i + k - 2, W2[k][j] = 1 + 4k + j.
TEST(Examples, GemmTiny) {
  const Program program = Example("gemm_tiny.s");
  const std::vector<std::uint8_t> y1 = RunOnModel(program, "Y1");
  const std::vector<std::uint8_t> y2 = RunOnModel(program, "Y2");
  ASSERT_EQ(y1.size(), 6u * 4u * 4u);
  ASSERT_EQ(y2.size(), 6u * 4u * 4u);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 4; ++j) {
      int expected = 0;
      for (int k = 0; k < 4; ++k) expected += (i + k - 2) * (1 + 4 * k + j);
      std::int32_t got1 = 0, got2 = 0;
      std::memcpy(&got1, &y1[static_cast<std::size_t>(i * 4 + j) * 4], 4);
      std::memcpy(&got2, &y2[static_cast<std::size_t>(i * 4 + j) * 4], 4);
      EXPECT_EQ(got1, 2 * (i + j - 2)) << "Y1[" << i << "][" << j << "]";
      EXPECT_EQ(got2, expected) << "Y2[" << i << "][" << j << "]";
    }
  }
}

// Softmax and layer norm on the device against float64: bf16 intermediates (e^(x - max), the
// mean, the squares, the variance) keep the results within a few bf16 ULP.
TEST(Examples, SoftmaxLayerNormBf16) {
  const Program program = Example("softmax_layernorm_bf16.s");
  const std::vector<std::uint8_t> p = RunOnModel(program, "P");
  const std::vector<std::uint8_t> n = RunOnModel(program, "N");
  ASSERT_EQ(p.size(), 4u * 16 * 2);
  ASSERT_EQ(n.size(), 4u * 16 * 2);
  for (int i = 0; i < 4; ++i) {
    double x[16], max = -1e9, sum = 0, mean = 0, var = 0;
    for (int k = 0; k < 16; ++k) {
      x[k] = (k - 2 * i) / 4.0;
      max = std::max(max, x[k]);
      mean += x[k] / 16;
    }
    for (int k = 0; k < 16; ++k) {
      sum += std::exp(x[k] - max);
      var += (x[k] - mean) * (x[k] - mean) / 16;
    }
    double total = 0;
    for (int j = 0; j < 16; ++j) {
      const double softmax = std::exp(x[j] - max) / sum;
      const double got = Bf16At(p, static_cast<std::size_t>(i * 16 + j));
      EXPECT_NEAR(got, softmax, 0.01 * softmax + 1e-6) << i << "," << j;
      total += got;
      const double norm = (x[j] - mean) / std::sqrt(var + 1.0 / 64);
      EXPECT_NEAR(Bf16At(n, static_cast<std::size_t>(i * 16 + j)), norm, 0.02) << i << "," << j;
    }
    EXPECT_NEAR(total, 1.0, 0.02) << "row " << i;
  }
}

// One Adam step in fp32 on the accumulators (ACCVEC): bit-identical to the same float32
// operations on the host, one rounding per operation, in the program's order.
TEST(Examples, AdamStepAccVec) {
  const Program program = Example("adam_step_accvec.s");
  const std::vector<std::uint8_t> w = RunOnModel(program, "W");
  const std::vector<std::uint8_t> m = RunOnModel(program, "M");
  const std::vector<std::uint8_t> v = RunOnModel(program, "V");
  ASSERT_EQ(w.size(), 2u * 16 * 4);
  const auto at = [](const std::vector<std::uint8_t>& bytes, std::size_t index) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, bytes.data() + 4 * index, 4);
    return bits;
  };
  const float b1 = 0.9f, b2 = 0.999f, one_minus_b1 = 0.1f, one_minus_b2 = 0.001f, lr = 0.001f, eps = 1e-8f;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 16; ++j) {
      // volatile: each operation rounds to float32 on its own, as the device's do.
      volatile float w0 = static_cast<float>((j - 8) / 8.0 + i), m0 = static_cast<float>((j % 5 - 2) / 64.0);
      volatile float v0 = static_cast<float>((j % 3 + 1) / 1024.0), g = static_cast<float>((j - 3 * i - 4) / 16.0);
      volatile float t = one_minus_b1 * g;
      volatile float m1 = b1 * m0;
      m1 = m1 + t;
      volatile float v1 = b2 * v0;
      t = g * g;
      t = t * one_minus_b2;
      v1 = v1 + t;
      t = v1 / one_minus_b2;
      t = std::sqrt(static_cast<float>(t));
      t = t + eps;
      volatile float u = m1 / one_minus_b1;
      u = u / t;
      u = u * lr;
      volatile float w1 = w0 - u;
      const std::size_t k = static_cast<std::size_t>(i * 16 + j);
      EXPECT_EQ(at(w, k), std::bit_cast<std::uint32_t>(static_cast<float>(w1))) << "W " << i << "," << j;
      EXPECT_EQ(at(m, k), std::bit_cast<std::uint32_t>(static_cast<float>(m1))) << "M " << i << "," << j;
      EXPECT_EQ(at(v, k), std::bit_cast<std::uint32_t>(static_cast<float>(v1))) << "V " << i << "," << j;
    }
  }
}

TEST(Examples, EveryExampleIsCovered) {
  // A new example must get a test here.
  std::vector<std::string> names;
  for (const auto& path : testing::ExampleFiles()) names.push_back(path.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"adam_step_accvec.s", "conv_pool_tiny.s", "gemm_tiny.s",
                                             "mlp_bf16.s", "mlp_int8.s", "softmax_layernorm_bf16.s"}));
}

}  // namespace
}  // namespace systole::assembly
