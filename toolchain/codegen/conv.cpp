// Convolution as an implicit GEMM (docs/CODEGEN.md, "Convolution").
//
// A chunk is a block of output pixels of one image: whole output rows, or a piece of one row
// when a row is longer than a chunk (conv_plan.cpp). Tap by tap, its k-steps are the kernel
// taps (ky, kx) in row-major order, and within a tap the input-channel tiles of R channels.
// For each k-step and output row, one strided LOAD gathers the input pixels the tap reads
// (stride = conv stride × Cin × element bytes); pixels that fall in the padding become zero
// rows (a LOAD of a zero row with stride 0). Every tap is computed for every output pixel,
// padding or not, so the accumulation order is the same for every pixel and does not depend on
// the chunking. It does depend on the scheme: an ungrouped convolution with few input channels
// and dilation_w = 1 packs taps into k-steps instead (conv_packed.cpp), when that is estimated
// faster (PickDenseScheme), and then sums in (ky, slice of the kx × channel
// window) order.
//
// Groups: a group whose channels fit the array is packed with its neighbours into a
// block-diagonal weight tile (built on the device by a prologue of LOAD/STORE pairs into a
// zero-initialised constant), so depthwise and grouped convolutions use R/Cin_g groups per
// MATMUL instead of one; larger groups run one after another as dense convolutions.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "toolchain/codegen/conv_internal.hpp"
#include "toolchain/codegen/require.hpp"

namespace systole::codegen {

namespace {

using conv::AddSegment;
using conv::ChunkSpan;
using conv::Geometry;
using isa::MemSpace;

// Output columns ox whose input column ox·sw + kx·dw − pad_left lies inside the image:
// [first, last) (empty when first >= last).
std::pair<std::int64_t, std::int64_t> ValidColumns(const Geometry& g, std::uint64_t kx) {
  const std::int64_t offset = static_cast<std::int64_t>(kx * g.p.dilation_w) -
                              static_cast<std::int64_t>(g.p.pad_left);
  const auto sw = static_cast<std::int64_t>(g.p.stride_w);
  const std::int64_t first = offset >= 0 ? 0 : (-offset + sw - 1) / sw;
  const std::int64_t room = static_cast<std::int64_t>(g.w) - 1 - offset;
  const std::int64_t last = room < 0 ? 0 : room / sw + 1;
  return {first, std::min<std::int64_t>(last, static_cast<std::int64_t>(g.ow))};
}

// One dense convolution over input channels [cin_base, cin_base + k_channels) producing output
// channels [cout_base, cout_base + n): the groups handled by one EmitImplicitGemm call.
// `weight(tap, channel_tile)` gives the weight rows of one k-step as (address, row stride);
// `plan` is the buffer plan when the caller has chosen it.
void EmitDenseSlice(ProgramBuilder& builder, const Geometry& g, const Tensor& input,
                    const Tensor& weights, const std::optional<Tensor>& bias, const Tensor& out,
                    const OutputTransform& transform, std::uint64_t cin_base,
                    std::uint64_t k_channels, std::uint64_t cout_base, std::uint64_t n,
                    const std::function<std::pair<std::uint64_t, std::uint64_t>(
                        std::uint64_t, std::uint64_t)>& weight,
                    std::uint64_t weight_block_bytes = 0, bool out_blocked = false,
                    const std::optional<GemmBuffers>& plan = std::nullopt) {
  const std::uint32_t r = builder.R();
  const std::uint64_t e = input.ElementBytes(), out_e = out.ElementBytes();
  const std::uint64_t taps = g.kh * g.kw, channel_tiles = (k_channels + r - 1) / r;
  const bool raw = out.dtype == builder.AccumulatorType();
  const GemmBuffers buffers =
      plan ? *plan
           : conv::RankConvBuffers(builder.config(), g, static_cast<std::uint32_t>(taps * channel_tiles), n, raw)
                 .front()
                 .buffers;

  ImplicitGemm problem;
  problem.n = static_cast<std::uint32_t>(n);
  problem.a = input;
  problem.weights = weights;
  problem.out = out;
  problem.bias = bias;
  problem.bias_dram = bias ? bias->address + cout_base * 4 : 0;
  if (bias && bias->shape.size() == 3) problem.bias_block_bytes = bias->Dim(1) * builder.C() * 4;
  problem.transform = transform;
  problem.raw_output = raw;
  problem.weight_block_bytes = weight_block_bytes;
  // Column-blocked out: [Cout/C][N][OH][OW][C], rows of C elements, one block per N tile.
  const std::uint64_t out_pitch = out_blocked ? builder.C() : g.cout;
  problem.out_block_bytes = out_blocked ? g.batch * g.oh * g.ow * builder.C() * out_e : 0;
  conv::EmitChunks(builder, g, problem, buffers, out_pitch, cout_base, [&](const ChunkSpan& span) {
    const std::uint64_t ox0 = span.ox0, width = span.width;
    std::vector<KStep> steps;
    for (std::uint64_t tap = 0; tap < taps; ++tap) {
      const std::uint64_t ky = tap / g.kw, kx = tap % g.kw;
      const auto [valid_first, valid_last] = ValidColumns(g, kx);
      for (std::uint64_t ct = 0; ct < channel_tiles; ++ct) {
        KStep step;
        step.k = static_cast<std::uint32_t>(std::min<std::uint64_t>(r, k_channels - ct * r));
        std::tie(step.weight_dram, step.weight_stride) = weight(tap, ct);
        for (std::uint64_t dy = 0; dy < span.oy_count; ++dy) {
          const auto base = static_cast<std::uint32_t>(dy * width);
          const std::int64_t iy = static_cast<std::int64_t>((span.oy0 + dy) * g.p.stride_h +
                                                            ky * g.p.dilation_h) -
                                  static_cast<std::int64_t>(g.p.pad_top);
          const auto lo = static_cast<std::uint64_t>(
              std::clamp<std::int64_t>(valid_first, static_cast<std::int64_t>(ox0),
                                       static_cast<std::int64_t>(ox0 + width)));
          const auto hi = static_cast<std::uint64_t>(
              std::clamp<std::int64_t>(valid_last, static_cast<std::int64_t>(lo),
                                       static_cast<std::int64_t>(ox0 + width)));
          if (iy < 0 || iy >= static_cast<std::int64_t>(g.h) || lo >= hi) {
            AddSegment(step.segments, {base, static_cast<std::uint32_t>(width), true});
            continue;
          }
          const std::uint64_t ix = lo * g.p.stride_w + kx * g.p.dilation_w - g.p.pad_left;
          const std::uint64_t pixel = (span.img * g.h + static_cast<std::uint64_t>(iy)) * g.w + ix;
          AddSegment(step.segments, {base, static_cast<std::uint32_t>(lo - ox0), true});
          AddSegment(step.segments,
                     {static_cast<std::uint32_t>(base + lo - ox0),
                      static_cast<std::uint32_t>(hi - lo), false,
                      input.address + (pixel * g.cin + cin_base + ct * r) * e,
                      g.p.stride_w * g.cin * e});
          AddSegment(step.segments, {static_cast<std::uint32_t>(base + hi - ox0),
                                     static_cast<std::uint32_t>(ox0 + width - hi), true});
        }
        steps.push_back(std::move(step));
      }
    }
    return steps;
  });
}

// Builds block-diagonal tiles for `per_tile` groups at a time: tile (block, tap) holds, for
// group g' of the block, w[tap][i][(block·per_tile + g')·Cout_g + o] at row g'·Cin_g + i,
// column g'·Cout_g + o. For each i, one LOAD brings the block's weights of input channel i
// into consecutive UB rows (one per group) and one STORE writes them along the tile's
// diagonal (stride Cin_g·C + Cout_g elements).
Tensor PackGroups(ProgramBuilder& builder, const Geometry& g, const Tensor& weights,
                  std::uint64_t per_tile, std::uint64_t blocks) {
  const std::uint64_t r = builder.R(), c = builder.C(), e = weights.ElementBytes();
  const std::uint64_t taps = g.kh * g.kw, cout_g = g.cout / g.groups;
  const Tensor packed = builder.AddConstant(
      fmt::format("conv_packed_weights_{}", builder.InstructionCount()),
                                            weights.dtype, {blocks, taps, r, c});
  constexpr std::uint64_t kStagingSlots = 4;
  std::uint64_t slot = 0;
  for (std::uint64_t block = 0; block < blocks; ++block) {
    const std::uint64_t groups_here = std::min(per_tile, g.groups - block * per_tile);
    for (std::uint64_t tap = 0; tap < taps; ++tap) {
      const std::uint64_t tile = packed.address + (block * taps + tap) * r * c * e;
      for (std::uint64_t i = 0; i < g.cin_g; ++i, ++slot) {
        const std::uint64_t row = (slot % kStagingSlots) * per_tile;
        const Access ub{Space::kUb, row, row + groups_here, true};
        builder.Emit(LoadInsn(MemSpace::kUb,
                              weights.address +
                                  ((tap * g.cin_g + i) * g.cout + block * per_tile * cout_g) * e,
                              cout_g * e, row, 0, groups_here, cout_g),
                     {ub, ReadOf(weights)});
        builder.Emit(StoreInsn(MemSpace::kUb, tile + i * c * e, (g.cin_g * c + cout_g) * e, row, 0,
                               groups_here, cout_g),
                     {{Space::kUb, row, row + groups_here, false}, WriteOf(packed)});
      }
    }
  }
  return packed;
}

}  // namespace

namespace conv {

// An ungrouped convolution with the given scheme. Weights and out may be column-blocked.
void EmitDense(ProgramBuilder& builder, const Geometry& g, const Tensor& input,
               const Tensor& weights, const std::optional<Tensor>& bias, const Tensor& out,
               const OutputTransform& transform, const conv::DenseScheme& scheme) {
  const bool blocked = weights.shape.size() == 5, out_blocked = out.shape.size() == 5;
  if (scheme.packed) {
    conv::EmitPackedConv(builder, g, input, weights, bias, out, transform, scheme.buffers, blocked,
                         out_blocked);
    return;
  }
  const std::uint64_t r = builder.R(), c = builder.C(), e = weights.ElementBytes();
  // Column-blocked weights: tile rows C apart within a block; row-major: Cout apart.
  const std::uint64_t pitch = blocked ? c : g.cout;
  EmitDenseSlice(builder, g, input, weights, bias, out, transform, 0, g.cin, 0, g.cout,
                 [&](std::uint64_t tap, std::uint64_t ct) {
                   return std::pair{weights.address + (tap * g.cin + ct * r) * pitch * e, pitch * e};
                 },
                 blocked ? g.kh * g.kw * g.cin * c * e : 0, out_blocked, scheme.buffers);
}

// The cycles the golden model's timing model gives `scheme` for this convolution alone (as a
// device step runs it): the same tensors in a scratch program.
std::uint64_t TrialCycles(const Config& config, const Geometry& g, const Tensor& input,
                          const Tensor& weights, const std::optional<Tensor>& bias,
                          const Tensor& out, const OutputTransform& transform,
                          const conv::DenseScheme& scheme) {
  ProgramBuilder trial(config);
  const Tensor in = trial.AddInput("in", input.dtype, input.shape);
  const Tensor w = trial.AddInput("w", weights.dtype, weights.shape);
  std::optional<Tensor> b;
  if (bias) b = trial.AddInput("bias", bias->dtype, bias->shape);
  const Tensor o = trial.AddOutput("out", out.dtype, out.shape);
  Geometry trial_g = g;
  if (g.p.start) trial_g.p.start = trial.AddInput("start", g.p.start->dtype, g.p.start->shape);
  EmitDense(trial, trial_g, in, w, b, o, transform, scheme);
  trial.Finish();
  return trial.Estimates().back().cycles;
}

}  // namespace conv

void Conv2D(ProgramBuilder& builder, const Tensor& input, const Tensor& weights,
            const std::optional<Tensor>& bias, const Tensor& out, const ConvParams& params,
            const OutputTransform& transform) {
  Require("conv2d", input.shape.size() == 4 && (weights.shape.size() == 4 || weights.shape.size() == 5) &&
              (out.shape.size() == 4 || out.shape.size() == 5),
          "input must be NHWC, weights HWIO or column-blocked [Cout/C, KH, KW, Cin, C], out NHWC or "
          "column-blocked [Cout/C, N, OH, OW, C]");
  Require("conv2d", params.stride_h > 0 && params.stride_w > 0 && params.dilation_h > 0 &&
              params.dilation_w > 0 && params.groups > 0,
          "strides, dilations and groups must be positive");
  // Column-blocked weights: each tile of C output channels is one contiguous block.
  const bool blocked = weights.shape.size() == 5, out_blocked = out.shape.size() == 5;
  const std::size_t wd = blocked ? 1 : 0;
  const std::uint64_t cout = params.out_channels != 0 ? params.out_channels
                             : !blocked              ? weights.Dim(3)
                             : !out_blocked          ? out.Dim(3)
                                                     : 0;
  Require("conv2d", cout != 0, "out_channels must be given when weights and out are both column-blocked");
  Geometry g{input.Dim(0), input.Dim(1), input.Dim(2), input.Dim(3), weights.Dim(wd),
             weights.Dim(wd + 1), weights.Dim(wd + 2), cout, 0, 0, params.groups, params};
  Require("conv2d", !blocked || weights.Dim(0) != 0, "empty weights");
  Require("conv2d", !blocked || (params.groups == 1 && weights.Dim(0) == (g.cout + builder.C() - 1) / builder.C() &&
                       weights.Dim(4) == builder.C()),
          fmt::format("column-blocked weights must be [{}, KH, KW, Cin, {}] of an ungrouped convolution",
                      (g.cout + builder.C() - 1) / builder.C(), builder.C()));
  Require("conv2d", g.cin % g.groups == 0 && g.cout % g.groups == 0 && g.cin_g * g.groups == g.cin,
          "channels must divide into groups (weights are [KH, KW, Cin/groups, Cout])");
  const std::uint64_t span_h = (g.kh - 1) * params.dilation_h + 1;
  const std::uint64_t span_w = (g.kw - 1) * params.dilation_w + 1;
  Require("conv2d", g.h + params.pad_top + params.pad_bottom >= span_h &&
              g.w + params.pad_left + params.pad_right >= span_w,
          "the kernel is larger than the padded image");
  g.oh = (g.h + params.pad_top + params.pad_bottom - span_h) / params.stride_h + 1;
  g.ow = (g.w + params.pad_left + params.pad_right - span_w) / params.stride_w + 1;
  const std::uint64_t out_blocks = (g.cout + builder.C() - 1) / builder.C();
  Require("conv2d", out_blocked ? (params.groups == 1 && out.Dim(0) == out_blocks && out.Dim(1) == g.batch &&
                         out.Dim(2) == g.oh && out.Dim(3) == g.ow && out.Dim(4) == builder.C())
                      : (out.Dim(0) == g.batch && out.Dim(1) == g.oh && out.Dim(2) == g.ow &&
                         out.Dim(3) == g.cout),
          out_blocked ? fmt::format("column-blocked out must be {}x{}x{}x{}x{} (groups = 1)", out_blocks, g.batch,
                                    g.oh, g.ow, builder.C())
                      : fmt::format("out must be {}x{}x{}x{}", g.batch, g.oh, g.ow, g.cout));
  Require("conv2d", input.dtype == builder.ElementType() && weights.dtype == builder.ElementType(),
          "input and weights must have the configuration's element type");
  const bool raw = out.dtype == builder.AccumulatorType();
  Require("conv2d", raw || out.dtype == builder.ElementType(), "out must be the element or accumulator type");
  Require("conv2d", !raw || transform.func == isa::ActFunc::kNone, "a raw output takes no activation");
  Require("conv2d", !params.start || (!raw &&
                            (params.start->dtype == builder.AccumulatorType() ||
                             params.start->dtype == builder.ElementType()) &&
                            params.start->shape == out.shape),
          "a starting tensor must have out's shape in the accumulator type or the element type (a LOAD widens it), "
          "and out must not be raw");
  if (bias) {  // a vector, or replicated [Cout/C, min(OH·OW, accumulator rows), C] (groups = 1)
    const bool replicated = bias->shape.size() == 3;
    Require("conv2d", bias->dtype == builder.AccumulatorType() &&
                (replicated ? params.groups == 1 && bias->Dim(0) == out_blocks && bias->Dim(2) == builder.C() &&
                                  bias->Dim(1) >= std::min<std::uint64_t>(g.oh * g.ow, builder.config().AccRows())
                            : bias->Elements() == g.cout),
            "bias must be Cout accumulator-type elements or replicated [Cout/C, min(OH*OW, accumulator rows), C]");
  }

  builder.BeginKernel(fmt::format("conv2d {}x{}x{}x{} k{}x{} s{} g{} -> {}x{}", g.batch, g.h, g.w,
                                  g.cin, g.kh, g.kw, params.stride_h, g.groups, g.oh, g.ow));
  const std::uint64_t r = builder.R(), c = builder.C(), e = weights.ElementBytes();
  const std::uint64_t cout_g = g.cout / g.groups;
  const std::uint64_t per_tile =
      g.groups > 1 && g.cin_g <= r && cout_g <= c ? std::min({g.groups, r / g.cin_g, c / cout_g})
                                                  : 1;
  if (per_tile > 1) {
    const std::uint64_t blocks = (g.groups + per_tile - 1) / per_tile;
    const Tensor packed = PackGroups(builder, g, weights, per_tile, blocks);
    for (std::uint64_t block = 0; block < blocks; ++block) {
      const std::uint64_t groups_here = std::min(per_tile, g.groups - block * per_tile);
      const std::uint64_t taps = g.kh * g.kw;
      EmitDenseSlice(builder, g, input, packed, bias, out, transform,
                     block * per_tile * g.cin_g, groups_here * g.cin_g,
                     block * per_tile * cout_g, groups_here * cout_g,
                     [&](std::uint64_t tap, std::uint64_t) {
                       return std::pair{packed.address + (block * taps + tap) * r * c * e, c * e};
                     });
    }
    return;
  }
  if (g.groups == 1) {
    const conv::DenseScheme pick = conv::PickDenseScheme(builder.config(), g, input, weights, bias, out, transform);
    conv::EmitDense(builder, g, input, weights, bias, out, transform, pick);
    return;
  }
  for (std::uint64_t group = 0; group < g.groups; ++group) {
    EmitDenseSlice(builder, g, input, weights, bias, out, transform, group * g.cin_g, g.cin_g,
                   group * cout_g, cout_g, [&](std::uint64_t tap, std::uint64_t ct) {
                     return std::pair{
                         weights.address + ((tap * g.cin_g + ct * r) * g.cout + group * cout_g) * e,
                         g.cout * e};
                   });
  }
}

}  // namespace systole::codegen
