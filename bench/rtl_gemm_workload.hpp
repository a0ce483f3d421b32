// A GEMM program from the code generator (codegen::Gemm, operands and result in device memory)
// with seeded input values, ready to be written to any device: shared by the RTL benchmark
// (bench/rtl_core_bench.cpp) and the long v2 whole-core test (tests/rtl/core/long/).
#pragma once

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/image/program.hpp"
#include "toolchain/codegen/kernels.hpp"

namespace systole::rtl::bench {

struct GemmWorkload {
  image::Program program;        // data segments (the FillRow constants) and the words
  std::vector<image::DataSegment> inputs;  // A, B and bias, with values
  std::vector<std::uint8_t> text;   // program.words as bytes
  std::uint64_t macs = 0;           // M * K * N
};

// out[M,N] = relu(A[M,K] · B[K,N] + bias) in the configuration's element type. Values are small
// integers (bf16: also halves) so that every bf16 product is exact and the result is never
// trivially zero; the values do not change the timing.
inline GemmWorkload MakeGemm(const Config& config, std::uint64_t m, std::uint64_t k,
                             std::uint64_t n, std::uint64_t seed) {
  codegen::ProgramBuilder b(config);
  const codegen::Tensor a = b.AddInput("A", b.ElementType(), {m, k});
  const codegen::Tensor w = b.AddInput("B", b.ElementType(), {k, n});
  const codegen::Tensor bias = b.AddInput("bias", b.AccumulatorType(), {n});
  const codegen::Tensor out = b.AddOutput("out", b.ElementType(), {m, n});
  codegen::Gemm(b, a, w, bias, out,
                b.IsBf16() ? codegen::OutputTransform::Float(isa::ActFunc::kRelu)
                           : codegen::OutputTransform::Quantized(1, 6, 0, isa::ActFunc::kRelu));
  GemmWorkload work;
  work.program = b.Finish();
  work.macs = m * k * n;
  for (const isa::Word& word : work.program.words) {
    work.text.insert(work.text.end(), word.begin(), word.end());
  }
  std::mt19937_64 rng(seed);
  const auto element = [&](std::vector<std::uint8_t>& bytes, bool wide) {
    const int value = static_cast<int>(rng() % 9) - 4;
    if (b.IsBf16()) {
      // bf16 / fp32 of value or value + 0.5: sign, exponent and the top mantissa bits.
      const float f = static_cast<float>(value) + (rng() % 2 ? 0.5f : 0.0f);
      const auto bits = std::bit_cast<std::uint32_t>(f);
      if (wide) bytes.push_back(static_cast<std::uint8_t>(bits));
      if (wide) bytes.push_back(static_cast<std::uint8_t>(bits >> 8));
      bytes.push_back(static_cast<std::uint8_t>(bits >> 16));
      bytes.push_back(static_cast<std::uint8_t>(bits >> 24));
    } else {
      const auto v = static_cast<std::uint32_t>(value);
      for (unsigned i = 0; i < (wide ? 4u : 1u); ++i) {
        bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
      }
    }
  };
  for (const image::TensorDesc& input : work.program.inputs) {
    image::DataSegment segment;
    segment.name = input.name;
    segment.address = input.address;
    segment.dtype = input.dtype;
    const bool wide = input.name == "bias";
    for (std::uint64_t i = 0; i < input.Elements(); ++i) element(segment.bytes, wide);
    work.inputs.push_back(std::move(segment));
  }
  return work;
}

}  // namespace systole::rtl::bench
