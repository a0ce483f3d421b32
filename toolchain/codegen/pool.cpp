// Pooling: bands of output rows, each computed by one POOL over a padded band of input rows in
// the UB. Padding is written as fill rows (-inf / -128 for max, zero for average), so the POOL
// never needs to know about it; two band slots let the next band load while one is pooled.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/codegen/require.hpp"

namespace systole::codegen {

namespace {

using isa::Field;
using isa::MemSpace;

struct Fill {
  std::uint64_t row, rows;
};

}  // namespace

std::pair<std::uint32_t, std::uint8_t> EffectivePoolScale(const Config& config,
                                                          const PoolParams& params) {
  if (params.kind == PoolKind::kMax) return {0, 0};
  if (params.scale_bits != 0) return {params.scale_bits, params.shift};
  const double window = double(params.window_h) * double(params.window_w);
  if (config.dtype == DType::kBf16) {
    return {std::bit_cast<std::uint32_t>(static_cast<float>(1.0 / window)), 0};
  }
  return {static_cast<std::uint32_t>(std::lround(65536.0 / window)), 16};
}

void Pool2D(ProgramBuilder& builder, const Tensor& input, const Tensor& out,
            const PoolParams& params) {
  Require("pool2d", input.shape.size() == 4 && out.shape.size() == 4, "input and out must be NHWC");
  Require("pool2d", input.dtype == builder.ElementType() && out.dtype == builder.ElementType(),
          "input and out must have the configuration's element type");
  Require("pool2d", params.window_h > 0 && params.window_w > 0 && params.stride_h > 0 &&
              params.stride_w > 0 && params.window_h < 256 && params.window_w < 256 &&
              params.stride_h < 256 && params.stride_w < 256,
          "windows and strides must be 1..255");
  const std::uint64_t batch = input.Dim(0), h = input.Dim(1), w = input.Dim(2), ch = input.Dim(3);
  const std::uint64_t padded_h = h + params.pad_top + params.pad_bottom;
  const std::uint64_t padded_w = w + params.pad_left + params.pad_right;
  Require("pool2d", padded_h >= params.window_h && padded_w >= params.window_w,
          "the window is larger than the padded image");
  const std::uint64_t oh = (padded_h - params.window_h) / params.stride_h + 1;
  const std::uint64_t ow = (padded_w - params.window_w) / params.stride_w + 1;
  Require("pool2d", out.Dim(0) == batch && out.Dim(1) == oh && out.Dim(2) == ow && out.Dim(3) == ch,
          fmt::format("out must be {}x{}x{}x{}", batch, oh, ow, ch));

  // The most output rows per band such that two bands of input and output fit the UB.
  const auto band_input_rows = [&](std::uint64_t bands) {
    return ((bands - 1) * params.stride_h + params.window_h) * padded_w;
  };
  std::uint64_t band = std::min<std::uint64_t>(oh, 65535 / ow);
  while (band > 0 && 2 * (band_input_rows(band) + band * ow) > builder.UbRows()) --band;
  Require("pool2d", band > 0, "one band of the padded image does not fit the unified buffer");
  const std::uint64_t in_slot = band_input_rows(band), out_slot = band * ow;

  const bool bf16 = builder.IsBf16();
  const std::uint16_t pad_bits =
      params.kind == PoolKind::kAverage ? 0 : (bf16 ? 0xFF80 : 0x0080);  // -inf, -128
  const Tensor pad_row = builder.FillRow(pad_bits);
  const auto [scale, shift] = EffectivePoolScale(builder.config(), params);
  const std::uint64_t e = input.ElementBytes(), width = builder.UbRowElems();

  builder.BeginKernel(fmt::format("pool2d {}x{}x{}x{} {}x{} s{}", batch, h, w, ch,
                                  params.window_h, params.window_w, params.stride_h));
  // The left / right padding columns of a slot sit at the same UB rows in every band and no
  // data LOAD writes them, so they are filled once per slot (re-filled only when a band needs
  // more rows or columns of them than the slot holds): one fill LOAD per image row saved.
  std::array<std::uint64_t, 2> side_rows{}, side_elems{};
  std::uint64_t slot = 0;
  for (std::uint64_t img = 0; img < batch; ++img) {
    for (std::uint64_t c0 = 0; c0 < ch; c0 += width) {
      const std::uint64_t elems = std::min(width, ch - c0);
      for (std::uint64_t oy0 = 0; oy0 < oh; oy0 += band, ++slot) {
        const std::uint64_t rows_out = std::min(band, oh - oy0);
        const std::uint64_t rows_in = (rows_out - 1) * params.stride_h + params.window_h;
        const std::uint64_t in_base = (slot % 2) * in_slot;
        const std::uint64_t out_base = 2 * in_slot + (slot % 2) * out_slot;
        const bool sides = rows_in > side_rows[slot % 2] || elems > side_elems[slot % 2];
        if (sides) {
          side_rows[slot % 2] = rows_in;
          side_elems[slot % 2] = elems;
        }
        std::vector<Fill> fills;
        const auto fill = [&](std::uint64_t row, std::uint64_t rows) {
          if (rows == 0) return;
          if (!fills.empty() && fills.back().row + fills.back().rows == row) {
            fills.back().rows += rows;
          } else {
            fills.push_back({row, rows});
          }
        };
        for (std::uint64_t r = 0; r < rows_in; ++r) {
          const std::uint64_t row = in_base + r * padded_w;
          const std::int64_t iy = static_cast<std::int64_t>(oy0 * params.stride_h + r) -
                                  static_cast<std::int64_t>(params.pad_top);
          if (iy < 0 || iy >= static_cast<std::int64_t>(h)) {
            fill(row, padded_w);
            continue;
          }
          if (sides) fill(row, params.pad_left);
          const std::uint64_t first = row + params.pad_left;
          builder.Emit(LoadInsn(MemSpace::kUb,
                                input.address +
                                    ((img * h + static_cast<std::uint64_t>(iy)) * w * ch + c0) * e,
                                ch * e, first, 0, w, elems),
                       {{Space::kUb, first, first + w, true}, ReadOf(input)});
          if (sides) fill(first + w, params.pad_right);
        }
        for (const Fill& f : fills) {
          builder.Emit(LoadInsn(MemSpace::kUb, pad_row.address, 0, f.row, 0, f.rows, elems),
                       {{Space::kUb, f.row, f.row + f.rows, true}});
        }
        builder.Emit(
            isa::MakeInstruction(
                isa::Opcode::kPool,
                {{Field::kOp, params.kind == PoolKind::kMax ? 0u : 1u},
                 {Field::kSrc, in_base},
                 {Field::kDst, out_base},
                 {Field::kInW, padded_w},
                 {Field::kOutH, rows_out},
                 {Field::kOutW, ow},
                 {Field::kWinH, params.window_h},
                 {Field::kWinW, params.window_w},
                 {Field::kStrideH, params.stride_h},
                 {Field::kStrideW, params.stride_w},
                 {Field::kScale, scale},
                 {Field::kShift, shift}}),
            {{Space::kUb, in_base, in_base + rows_in * padded_w, false},
             {Space::kUb, out_base, out_base + rows_out * ow, true}});
        builder.Emit(StoreInsn(MemSpace::kUb, out.address + ((img * oh + oy0) * ow * ch + c0) * e,
                               ch * e, out_base, 0, rows_out * ow, elems),
                     {{Space::kUb, out_base, out_base + rows_out * ow, false}, WriteOf(out)});
      }
    }
  }
}

}  // namespace systole::codegen
