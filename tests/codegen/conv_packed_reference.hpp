// The convolution reference in the packed-taps order (toolchain/codegen/conv_packed.cpp,
// docs/CODEGEN.md "Numerics"): per ky, the KW·Cin elements of the kx × channel window in
// slices of R, each slice's column sum over t = 0..R-1 from +0 (zeros beyond the window and
// for pixels in the padding), slices added in order. Written from the documented order, not
// from the code generator: a different order gives different fp32 bits.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tests/codegen/reference.hpp"

namespace systole::codegen::testing {

inline std::vector<std::uint32_t> PackedConvReference(
    const Config& config, const ConvShape& s, const std::vector<std::uint32_t>& in,
    const std::vector<std::uint32_t>& wt, const std::optional<std::vector<std::uint32_t>>& bias,
    const OutputTransform& transform, bool raw) {
  const bool bf16 = config.dtype == DType::kBf16;
  const ConvParams& p = s.params;
  const std::uint64_t r = config.rows, oh = s.OutH(), ow = s.OutW(), window = s.kw * s.cin;
  std::vector<std::uint32_t> out(s.batch * oh * ow * s.cout);
  std::vector<std::uint32_t> x(r), w(r);
  for (std::uint64_t img = 0; img < s.batch; ++img) {
    for (std::uint64_t oy = 0; oy < oh; ++oy) {
      for (std::uint64_t ox = 0; ox < ow; ++ox) {
        for (std::uint64_t co = 0; co < s.cout; ++co) {
          Accumulator acc(bf16);
          if (raw && bias) acc.Start((*bias)[co]);
          for (std::uint64_t ky = 0; ky < s.kh; ++ky) {
            const std::int64_t iy =
                static_cast<std::int64_t>(oy * p.stride_h + ky * p.dilation_h) - p.pad_top;
            for (std::uint64_t f0 = 0; f0 < window; f0 += r) {
              for (std::uint64_t t = 0; t < r; ++t) {
                const std::uint64_t f = f0 + t, kx = f / s.cin, ci = f % s.cin;
                if (f >= window) {
                  x[t] = w[t] = 0;
                  continue;
                }
                const std::int64_t ix = static_cast<std::int64_t>(ox * p.stride_w + kx) - p.pad_left;
                const bool valid = iy >= 0 && iy < static_cast<std::int64_t>(s.h) && ix >= 0 &&
                                   ix < static_cast<std::int64_t>(s.w);
                x[t] = valid ? MxuOperand(bf16, in[((img * s.h + static_cast<std::uint64_t>(iy)) * s.w +
                                                    static_cast<std::uint64_t>(ix)) * s.cin + ci])
                             : 0;
                w[t] = MxuOperand(bf16, wt[((ky * s.kw + kx) * s.cin + ci) * s.cout + co]);
              }
              acc.AddTile(x, w);
            }
          }
          out[((img * oh + oy) * ow + ox) * s.cout + co] =
              raw ? acc.Value()
                  : ActivateReference(bf16, acc.Value(),
                                      bias ? std::optional<std::uint32_t>((*bias)[co]) : std::nullopt,
                                      transform);
        }
      }
    }
  }
  return out;
}

}  // namespace systole::codegen::testing
