// Naive references for the kernels, written from docs/NUMERICS.md with the accumulation order
// docs/CODEGEN.md documents: per output element, K tiles of R in increasing order, each tile's
// column sum over t = 0..R-1 from +0 (zeros beyond K), tiles added in order (the first one
// overwrites); then bias, scale, function, conversion. A raw (accumulator-type) output starts
// from the bias instead and has no epilogue.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "arch/config/config.hpp"
#include "sim/model/numerics.hpp"
#include "toolchain/codegen/kernels.hpp"

namespace systole::codegen::testing {

// One accumulator value under construction, in either element type.
class Accumulator {
 public:
  explicit Accumulator(bool bf16) : bf16_(bf16) {}
  void Start(std::uint32_t bits) { value_ = bits; started_ = true; }
  // Adds one column sum of products x[t]·w[t] over t = 0..R-1 (already zero-padded).
  void AddTile(const std::vector<std::uint32_t>& x, const std::vector<std::uint32_t>& w) {
    std::uint32_t psum = 0;
    for (std::size_t t = 0; t < x.size(); ++t) {
      if (bf16_) {
        psum = model::AddF32(psum, model::MulF32(x[t], w[t]));
      } else {
        psum += static_cast<std::uint32_t>(static_cast<std::int32_t>(x[t]) *
                                           static_cast<std::int32_t>(w[t]));
      }
    }
    if (!started_) {
      value_ = psum;
      started_ = true;
    } else {
      value_ = bf16_ ? model::AddF32(value_, psum) : value_ + psum;
    }
  }
  std::uint32_t Value() const { return value_; }

 private:
  bool bf16_;
  bool started_ = false;
  std::uint32_t value_ = 0;
};

// ACTIVATE of one accumulator value (bias bits or nullopt) -> element bits.
inline std::uint32_t ActivateReference(bool bf16, std::uint32_t v, std::optional<std::uint32_t> bias,
                                       const OutputTransform& t) {
  const std::uint32_t scale = model::EffectiveScale(t.scale_bits, bf16);
  if (bf16) {
    if (bias) v = model::AddF32(v, *bias);
    v = model::MulF32(v, scale);
    v = model::ApplyFunctionF32(t.func, v, numerics::Bf16ToF32(t.lo_bits),
                                numerics::Bf16ToF32(t.hi_bits));
    return numerics::F32ToBf16(v);
  }
  auto s = static_cast<std::int32_t>(v);
  if (bias) s = model::WrapAddInt32(s, static_cast<std::int32_t>(*bias));
  std::int64_t r = model::Requantize(s, static_cast<std::int32_t>(scale), t.shift);
  r = model::ApplyFunctionInt(t.func, r, static_cast<std::int16_t>(t.lo_bits),
                              static_cast<std::int16_t>(t.hi_bits));
  return static_cast<std::uint8_t>(model::SaturateInt8(r + t.zero_point));
}

// Element bits as the MXU sees them: bf16 widened to fp32, int8 sign-extended.
inline std::uint32_t MxuOperand(bool bf16, std::uint32_t bits) {
  return bf16 ? numerics::Bf16ToF32(static_cast<std::uint16_t>(bits))
              : static_cast<std::uint32_t>(static_cast<std::int8_t>(bits & 0xFF));
}

inline std::vector<std::uint32_t> GemmReference(const Config& config,
                                                const std::vector<std::uint32_t>& a,
                                                const std::vector<std::uint32_t>& b,
                                                const std::optional<std::vector<std::uint32_t>>& bias,
                                                std::uint64_t m, std::uint64_t k, std::uint64_t n,
                                                const OutputTransform& transform, bool raw) {
  const bool bf16 = config.dtype == DType::kBf16;
  const std::uint64_t r = config.rows;
  std::vector<std::uint32_t> out(m * n);
  std::vector<std::uint32_t> x(r), w(r);
  for (std::uint64_t i = 0; i < m; ++i) {
    for (std::uint64_t j = 0; j < n; ++j) {
      Accumulator acc(bf16);
      if (raw && bias) acc.Start((*bias)[j]);
      for (std::uint64_t k0 = 0; k0 < k; k0 += r) {
        for (std::uint64_t t = 0; t < r; ++t) {
          const bool inside = k0 + t < k;
          x[t] = inside ? MxuOperand(bf16, a[i * k + k0 + t]) : 0;
          w[t] = inside ? MxuOperand(bf16, b[(k0 + t) * n + j]) : 0;
        }
        acc.AddTile(x, w);
      }
      out[i * n + j] =
          raw ? acc.Value()
              : ActivateReference(bf16, acc.Value(),
                                  bias ? std::optional<std::uint32_t>((*bias)[j]) : std::nullopt,
                                  transform);
    }
  }
  return out;
}

struct ConvShape {
  std::uint64_t batch, h, w, cin, kh, kw, cout;
  ConvParams params;
  std::uint64_t OutH() const {
    return (h + params.pad_top + params.pad_bottom - ((kh - 1) * params.dilation_h + 1)) /
               params.stride_h + 1;
  }
  std::uint64_t OutW() const {
    return (w + params.pad_left + params.pad_right - ((kw - 1) * params.dilation_w + 1)) /
               params.stride_w + 1;
  }
};

// Every tap (ky, kx) in row-major order, then input-channel tiles of R within the group;
// pixels in the padding contribute zeros (they are zero rows on the device).
inline std::vector<std::uint32_t> ConvReference(const Config& config, const ConvShape& s,
                                                const std::vector<std::uint32_t>& in,
                                                const std::vector<std::uint32_t>& wt,
                                                const std::optional<std::vector<std::uint32_t>>& bias,
                                                const OutputTransform& transform, bool raw,
                                                const std::optional<std::vector<std::uint32_t>>& start = std::nullopt) {
  const bool bf16 = config.dtype == DType::kBf16;
  const std::uint64_t r = config.rows, oh = s.OutH(), ow = s.OutW();
  const std::uint64_t groups = s.params.groups, cin_g = s.cin / groups, cout_g = s.cout / groups;
  std::vector<std::uint32_t> out(s.batch * oh * ow * s.cout);
  std::vector<std::uint32_t> x(r), w(r);
  for (std::uint64_t img = 0; img < s.batch; ++img) {
    for (std::uint64_t oy = 0; oy < oh; ++oy) {
      for (std::uint64_t ox = 0; ox < ow; ++ox) {
        for (std::uint64_t co = 0; co < s.cout; ++co) {
          const std::uint64_t group = co / cout_g;
          Accumulator acc(bf16);
          if (raw && bias) acc.Start((*bias)[co]);
          if (start) acc.Start((*start)[((img * oh + oy) * ow + ox) * s.cout + co]);  // NHWC, like out
          for (std::uint64_t ky = 0; ky < s.kh; ++ky) {
            for (std::uint64_t kx = 0; kx < s.kw; ++kx) {
              const std::int64_t iy = static_cast<std::int64_t>(oy * s.params.stride_h +
                                                                ky * s.params.dilation_h) -
                                      s.params.pad_top;
              const std::int64_t ix = static_cast<std::int64_t>(ox * s.params.stride_w +
                                                                kx * s.params.dilation_w) -
                                      s.params.pad_left;
              const bool valid = iy >= 0 && iy < static_cast<std::int64_t>(s.h) && ix >= 0 &&
                                 ix < static_cast<std::int64_t>(s.w);
              for (std::uint64_t c0 = 0; c0 < cin_g; c0 += r) {
                for (std::uint64_t t = 0; t < r; ++t) {
                  const std::uint64_t ci = c0 + t;
                  if (ci >= cin_g) {
                    x[t] = w[t] = 0;
                    continue;
                  }
                  x[t] = valid ? MxuOperand(bf16, in[((img * s.h + static_cast<std::uint64_t>(iy)) *
                                                          s.w + static_cast<std::uint64_t>(ix)) *
                                                             s.cin +
                                                         group * cin_g + ci])
                               : 0;
                  w[t] = MxuOperand(bf16, wt[((ky * s.kw + kx) * cin_g + ci) * s.cout + co]);
                }
                acc.AddTile(x, w);
              }
            }
          }
          out[((img * oh + oy) * ow + ox) * s.cout + co] =
              raw ? acc.Value()
                  : ActivateReference(bf16, acc.Value(),
                                      bias ? std::optional<std::uint32_t>((*bias)[co])
                                           : std::nullopt,
                                      transform);
        }
      }
    }
  }
  return out;
}

}  // namespace systole::codegen::testing
