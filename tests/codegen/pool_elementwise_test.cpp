// Pooling, elementwise and activation kernels against references written from
// docs/NUMERICS.md and docs/ISA.md (POOL: row-major window order, padding as -inf / -128 for
// max and zero for average, which therefore counts the padding).
#include <gtest/gtest.h>

#include "tests/codegen/codegen_test_util.hpp"
#include "tests/codegen/reference.hpp"

namespace systole::codegen::testing {
namespace {

using isa::ActFunc;
using isa::VecOp;

struct PoolCase {
  std::uint64_t batch, h, w, ch;
  PoolParams params;
};

std::vector<std::uint32_t> PoolReference(const Config& config, const PoolCase& c,
                                         const std::vector<std::uint32_t>& in, std::uint64_t oh,
                                         std::uint64_t ow) {
  const bool bf16 = config.dtype == DType::kBf16, is_max = c.params.kind == PoolKind::kMax;
  const auto [scale_raw, shift] = EffectivePoolScale(config, c.params);
  const std::uint32_t scale = model::EffectiveScale(scale_raw, bf16);
  std::vector<std::uint32_t> out(c.batch * oh * ow * c.ch);
  for (std::uint64_t img = 0; img < c.batch; ++img) {
    for (std::uint64_t oy = 0; oy < oh; ++oy) {
      for (std::uint64_t ox = 0; ox < ow; ++ox) {
        for (std::uint64_t ch = 0; ch < c.ch; ++ch) {
          std::uint32_t f = 0;   // bf16 running value (fp32 bits)
          std::int64_t i = 0;    // int8 running value
          bool first = true;
          for (std::uint64_t wy = 0; wy < c.params.window_h; ++wy) {
            for (std::uint64_t wx = 0; wx < c.params.window_w; ++wx) {
              const std::int64_t y = static_cast<std::int64_t>(oy * c.params.stride_h + wy) - c.params.pad_top;
              const std::int64_t x = static_cast<std::int64_t>(ox * c.params.stride_w + wx) - c.params.pad_left;
              const bool valid = y >= 0 && y < static_cast<std::int64_t>(c.h) && x >= 0 &&
                                 x < static_cast<std::int64_t>(c.w);
              const std::uint32_t bits =
                  valid ? in[((img * c.h + static_cast<std::uint64_t>(y)) * c.w +
                              static_cast<std::uint64_t>(x)) * c.ch + ch]
                        : (is_max ? (bf16 ? 0xFF80u : 0x80u) : 0u);
              if (bf16) {
                const std::uint32_t v = Widen(bits);
                f = is_max ? (first ? v : model::MaxF32(f, v)) : model::AddF32(f, v);
              } else {
                const std::int64_t v = AsInt8(bits);
                i = is_max ? (first ? v : std::max(i, v)) : i + v;
              }
              first = false;
            }
          }
          std::uint32_t result;
          if (bf16) {
            result = numerics::F32ToBf16(is_max ? f : model::MulF32(f, scale));
          } else {
            if (!is_max) i = model::Requantize(i, static_cast<std::int32_t>(scale), shift);
            result = static_cast<std::uint8_t>(model::SaturateInt8(i));
          }
          out[((img * oh + oy) * ow + ox) * c.ch + ch] = result;
        }
      }
    }
  }
  return out;
}

PoolParams MakePool(PoolKind kind, std::uint32_t window, std::uint32_t stride, std::uint32_t pad) {
  PoolParams p;
  p.kind = kind;
  p.window_h = p.window_w = window;
  p.stride_h = p.stride_w = stride;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = pad;
  return p;
}

class PoolTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PoolTest, MaxAndAveragePoolingWithPaddingMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const std::uint64_t width = config.UbRowElems();
  std::vector<PoolCase> cases = {
      {1, 8, 8, width + 3, MakePool(PoolKind::kMax, 3, 2, 1)},   // ResNet's max pool
      // Many bands per slot, channel chunks of different widths and a last, shorter band:
      // the padding columns a slot keeps from earlier bands must still be there.
      {2, 41, 30, width + 3, MakePool(PoolKind::kMax, 3, 2, 1)},
      {1, 112, 112, width + 3, MakePool(PoolKind::kMax, 3, 2, 1)},  // ResNet's stem pool
      {1, 33, 20, width + 1, MakePool(PoolKind::kAverage, 3, 2, 1)},
      {2, 6, 7, 5, MakePool(PoolKind::kAverage, 2, 2, 0)},
      {1, 7, 7, 3, MakePool(PoolKind::kAverage, 3, 1, 1)},
      {1, 7, 7, 2 * width, MakePool(PoolKind::kAverage, 7, 1, 0)},  // global average pool
  };
  PoolCase asymmetric{1, 5, 6, 4, MakePool(PoolKind::kMax, 2, 1, 0)};
  asymmetric.params.pad_bottom = 1;
  asymmetric.params.pad_left = 1;
  cases.push_back(asymmetric);
  for (const PoolCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << config.name << " " << c.h << "x" << c.w << "x" << c.ch
                                      << " window " << c.params.window_h << " kind "
                                      << static_cast<int>(c.params.kind));
    ProgramBuilder builder(config);
    const DataType element = builder.ElementType();
    const Tensor in = builder.AddInput("in", element, {c.batch, c.h, c.w, c.ch});
    const auto& p = c.params;
    const std::uint64_t oh = (c.h + p.pad_top + p.pad_bottom - p.window_h) / p.stride_h + 1;
    const std::uint64_t ow = (c.w + p.pad_left + p.pad_right - p.window_w) / p.stride_w + 1;
    const Tensor out = builder.AddOutput("out", element, {c.batch, oh, ow, c.ch});
    Pool2D(builder, in, out, p);
    const image::Program program = builder.Finish();
    const HostTensor input{in, RandomBits(rng, element, in.Elements(), builder.IsBf16() ? 8.0 : 127.0)};
    auto device = RunOnModel(config, program, {input});
    ExpectSameBits(PoolReference(config, c, input.bits, oh, ow), ReadTensor(*device, out),
                   "pool output");
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, PoolTest, ::testing::ValuesIn(TestConfigs()), ConfigTestName);

// ---- elementwise ---------------------------------------------------------------------------

std::uint32_t ElementwiseReference(bool bf16, const ElementwiseParams& p, std::uint32_t a,
                                   std::uint32_t b) {
  if (bf16) {
    const std::uint32_t x = Widen(a), y = Widen(b);
    std::uint32_t v = 0;
    switch (p.op) {
      case VecOp::kAdd: v = model::AddF32(x, y); break;
      case VecOp::kSub: v = model::SubF32(x, y); break;
      case VecOp::kMul: v = model::MulF32(x, y); break;
      case VecOp::kMax: v = model::MaxF32(x, y); break;
      case VecOp::kMin: v = model::MinF32(x, y); break;
      case VecOp::kPass: v = x; break;  // the compiler does not emit it
    }
    return numerics::F32ToBf16(model::ApplyFunctionF32(
        p.func, v, numerics::Bf16ToF32(p.lo_bits), numerics::Bf16ToF32(p.hi_bits)));
  }
  const std::int32_t x = AsInt8(a), y = AsInt8(b);
  std::int64_t v = 0;
  switch (p.op) {
    case VecOp::kAdd: v = x + y; break;
    case VecOp::kSub: v = x - y; break;
    case VecOp::kMul: v = model::Requantize(x, y, p.shift); break;
    case VecOp::kMax: v = std::max(x, y); break;
    case VecOp::kMin: v = std::min(x, y); break;
    case VecOp::kPass: v = x; break;
  }
  return static_cast<std::uint8_t>(model::SaturateInt8(model::ApplyFunctionInt(
      p.func, v, static_cast<std::int16_t>(p.lo_bits), static_cast<std::int16_t>(p.hi_bits))));
}

class ElementwiseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ElementwiseTest, EveryOpWithAndWithoutBroadcastMatchesTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const bool bf16 = config.dtype == DType::kBf16;
  const std::uint16_t lo = bf16 ? 0xBF80 : static_cast<std::uint16_t>(-20);  // -1 / -20
  const std::uint16_t hi = bf16 ? 0x4000 : 50;                              // 2 / 50
  const std::vector<std::vector<std::uint64_t>> shapes = {{3, 5, 7}, {37}, {2, 3 * config.UbRowElems() + 1}};
  for (VecOp op : {VecOp::kAdd, VecOp::kSub, VecOp::kMul, VecOp::kMax, VecOp::kMin}) {
    for (const auto& shape : shapes) {
      for (bool broadcast : {false, true}) {
        ElementwiseParams p;
        p.op = op;
        p.func = static_cast<ActFunc>(static_cast<int>(op) % 4);
        p.lo_bits = lo;
        p.hi_bits = hi;
        p.shift = op == VecOp::kMul && !bf16 ? 4 : 0;
        SCOPED_TRACE(::testing::Message() << config.name << " op " << static_cast<int>(op)
                                          << " rank " << shape.size() << " bcast " << broadcast);
        ProgramBuilder builder(config);
        const DataType element = builder.ElementType();
        const Tensor a = builder.AddInput("a", element, shape);
        const Tensor b = builder.AddInput("b", element,
                                          broadcast ? std::vector<std::uint64_t>{shape.back()} : shape);
        const Tensor out = builder.AddOutput("out", element, shape);
        Elementwise(builder, a, b, out, p);
        const image::Program program = builder.Finish();
        const double range = bf16 ? 4.0 : 127.0;
        const HostTensor ha{a, RandomBits(rng, element, a.Elements(), range)};
        const HostTensor hb{b, RandomBits(rng, element, b.Elements(), range)};
        auto device = RunOnModel(config, program, {ha, hb});
        std::vector<std::uint32_t> expected(a.Elements());
        for (std::size_t i = 0; i < expected.size(); ++i) {
          expected[i] = ElementwiseReference(bf16, p, ha.bits[i],
                                             hb.bits[broadcast ? i % shape.back() : i]);
        }
        ExpectSameBits(expected, ReadTensor(*device, out), "elementwise output");
      }
    }
  }
}

TEST_P(ElementwiseTest, ActivationsMatchTheReference) {
  const Config config = LoadConfig(GetParam());
  std::mt19937_64 rng(TestSeed());
  const bool bf16 = config.dtype == DType::kBf16;
  for (ActFunc func : {ActFunc::kRelu, ActFunc::kRelu6, ActFunc::kClamp}) {
    ProgramBuilder builder(config);
    const DataType element = builder.ElementType();
    const Tensor a = builder.AddInput("a", element, {4, 9, 11});
    const Tensor out = builder.AddOutput("out", element, {4, 9, 11});
    const std::uint16_t lo = bf16 ? 0xBF80 : static_cast<std::uint16_t>(-3);
    const std::uint16_t hi = bf16 ? 0x3FC0 : 3;
    Activation(builder, a, out, func, lo, hi);
    const image::Program program = builder.Finish();
    const HostTensor ha{a, RandomBits(rng, element, a.Elements(), bf16 ? 8.0 : 127.0)};
    auto device = RunOnModel(config, program, {ha});
    ElementwiseParams p;
    p.op = VecOp::kMax;
    p.func = func;
    p.lo_bits = lo;
    p.hi_bits = hi;
    std::vector<std::uint32_t> expected(a.Elements());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      expected[i] = ElementwiseReference(bf16, p, ha.bits[i], ha.bits[i]);
    }
    ExpectSameBits(expected, ReadTensor(*device, out), "activation output");
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, ElementwiseTest, ::testing::ValuesIn(TestConfigs()),
                         ConfigTestName);

}  // namespace
}  // namespace systole::codegen::testing
