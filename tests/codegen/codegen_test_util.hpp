// Helpers for the code-generator tests: running a generated program on the golden model,
// random operands with a printed seed, and element access in both element types.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/util/test_seed.hpp"
#include "arch/config/config.hpp"
#include "arch/image/program.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/model/numerics.hpp"
#include "toolchain/codegen/kernels.hpp"

namespace systole::codegen::testing {

// The seed of a randomized test: tests/util/test_seed.hpp's (SYSTOLE_SEED, else one derived
// from the test's name, so CI repeats itself), printed with the command that replays it.
inline std::uint64_t TestSeed() { return systole::test::Seed(); }

// Tensor contents as raw little-endian element bits: int8 in the low byte, bf16 16 bits,
// fp32 / int32 32 bits.
struct HostTensor {
  Tensor tensor;
  std::vector<std::uint32_t> bits;
};

inline std::vector<std::uint8_t> ToBytes(const Tensor& t, const std::vector<std::uint32_t>& bits) {
  const std::uint64_t e = t.ElementBytes();
  std::vector<std::uint8_t> bytes(bits.size() * e);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    for (std::uint64_t b = 0; b < e; ++b) bytes[i * e + b] = static_cast<std::uint8_t>(bits[i] >> (8 * b));
  }
  return bytes;
}

inline std::vector<std::uint32_t> FromBytes(const Tensor& t, const std::vector<std::uint8_t>& bytes) {
  const std::uint64_t e = t.ElementBytes();
  std::vector<std::uint32_t> bits(bytes.size() / e);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    std::uint32_t v = 0;
    for (std::uint64_t b = 0; b < e; ++b) v |= std::uint32_t{bytes[i * e + b]} << (8 * b);
    bits[i] = v;
  }
  return bits;
}

// Random element bits for a tensor of `dtype`: bf16 values in [-range, range], int8 in
// [-range, range] (clamped to the int8 range), fp32 in [-range, range], int32 likewise.
inline std::vector<std::uint32_t> RandomBits(std::mt19937_64& rng, DataType dtype,
                                             std::uint64_t count, double range) {
  std::vector<std::uint32_t> bits(count);
  std::uniform_real_distribution<double> real(-range, range);
  const auto int_range = static_cast<std::int64_t>(range);
  std::uniform_int_distribution<std::int64_t> integer(-int_range, int_range);
  for (auto& v : bits) {
    switch (dtype) {
      case DataType::kBf16:
        v = numerics::F32ToBf16(model::BitsFromFloat(static_cast<float>(real(rng))));
        break;
      case DataType::kFp32: v = model::BitsFromFloat(static_cast<float>(real(rng))); break;
      case DataType::kInt8:
        v = static_cast<std::uint8_t>(std::clamp<std::int64_t>(integer(rng), -128, 127));
        break;
      case DataType::kInt32: v = static_cast<std::uint32_t>(integer(rng)); break;
    }
  }
  return bits;
}

inline std::int32_t AsInt8(std::uint32_t bits) { return static_cast<std::int8_t>(bits & 0xFF); }
inline std::uint32_t Widen(std::uint32_t bf16_bits) {
  return numerics::Bf16ToF32(static_cast<std::uint16_t>(bf16_bits));
}

// Runs `program` on a fresh golden model with `inputs` and returns the model (for outputs
// and counters). Fails the test if the launch faults.
inline std::unique_ptr<model::GoldenModel> RunOnModel(const Config& config,
                                                      const image::Program& program,
                                                      const std::vector<HostTensor>& inputs) {
  auto device = std::make_unique<model::GoldenModel>(config);
  for (const image::DataSegment& segment : program.data) {
    device->WriteMemory(segment.address, segment.bytes);
  }
  for (const HostTensor& input : inputs) {
    device->WriteMemory(input.tensor.address, ToBytes(input.tensor, input.bits));
  }
  std::vector<std::uint8_t> text;
  for (const isa::Word& word : program.words) text.insert(text.end(), word.begin(), word.end());
  device->WriteMemory(program.text_address, text);
  const model::LaunchResult result =
      device->Execute(program.text_address, static_cast<std::uint32_t>(program.words.size()));
  EXPECT_TRUE(result.Ok()) << result.message;
  return device;
}

inline std::vector<std::uint32_t> ReadTensor(model::GoldenModel& device, const Tensor& t) {
  std::vector<std::uint8_t> bytes(t.Bytes());
  device.ReadMemory(t.address, bytes);
  return FromBytes(t, bytes);
}

// Compares element bits and reports the first few mismatches with their index.
inline void ExpectSameBits(const std::vector<std::uint32_t>& expected,
                           const std::vector<std::uint32_t>& actual, const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  int reported = 0;
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == actual[i]) continue;
    ++mismatches;
    if (reported++ < 5) {
      ADD_FAILURE() << what << ": element " << i << " expected 0x" << std::hex << expected[i]
                    << " got 0x" << actual[i] << std::dec;
    }
  }
  EXPECT_EQ(mismatches, 0u) << what;
}

// Row-major [K, N] element bits as column-blocked [ceil(N/cols), K, cols] (kernels.hpp),
// the padding columns zero.
inline std::vector<std::uint32_t> BlockColumns(const std::vector<std::uint32_t>& bits, std::uint64_t k,
                                               std::uint64_t n, std::uint64_t cols) {
  const std::uint64_t blocks = (n + cols - 1) / cols;
  std::vector<std::uint32_t> out(blocks * k * cols, 0);
  for (std::uint64_t row = 0; row < k; ++row) {
    for (std::uint64_t col = 0; col < n; ++col) out[((col / cols) * k + row) * cols + col % cols] = bits[row * n + col];
  }
  return out;
}

// The inverse: column-blocked [ceil(N/cols), K, cols] back to row-major [K, N].
inline std::vector<std::uint32_t> UnblockColumns(const std::vector<std::uint32_t>& bits, std::uint64_t k,
                                                 std::uint64_t n, std::uint64_t cols) {
  std::vector<std::uint32_t> out(k * n);
  for (std::uint64_t row = 0; row < k; ++row) {
    for (std::uint64_t col = 0; col < n; ++col) out[row * n + col] = bits.at(((col / cols) * k + row) * cols + col % cols);
  }
  return out;
}

// A bias vector of N as the replicated [ceil(N/cols), rows, cols] (kernels.hpp).
inline std::vector<std::uint32_t> ReplicateBias(const std::vector<std::uint32_t>& bits, std::uint64_t rows,
                                                std::uint64_t cols) {
  const std::uint64_t n = bits.size(), blocks = (n + cols - 1) / cols;
  std::vector<std::uint32_t> out(blocks * rows * cols, 0);
  for (std::uint64_t j = 0; j < blocks; ++j) {
    for (std::uint64_t row = 0; row < rows; ++row) {
      for (std::uint64_t c = 0; c < cols && j * cols + c < n; ++c) out[(j * rows + row) * cols + c] = bits[j * cols + c];
    }
  }
  return out;
}

// Configurations the kernel tests run on (v2 with small shapes).
inline std::vector<std::string> TestConfigs() { return {"tiny", "small", "small-int8", "v2"}; }

// gtest parameter names cannot contain '-'.
inline std::string ConfigTestName(const ::testing::TestParamInfo<std::string>& param) {
  std::string name = param.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace systole::codegen::testing
