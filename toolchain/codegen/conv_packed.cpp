// Convolutions with taps packed into k-steps (conv_internal.hpp; docs/CODEGEN.md,
// "Convolution"). ResNet's 7×7/2 stem reads Cin = 3 channels: tap by tap a k-step fills 3 of
// the 16 array rows (49 k-steps); packed, a k-step is (ky, 16 or 5 of the 21 elements of the
// kx × channel window), 14 k-steps.
//
// A window that straddles the image's left or right edge is partly padding, which one LOAD of
// contiguous elements cannot express, so when the convolution pads columns a prologue first
// copies the input into a buffer with zero columns on both sides ([N, H, PL + W + PR, Cin]).
// Rows above and below the image stay zero rows in the UB, as in the tap-by-tap scheme.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "toolchain/codegen/conv_internal.hpp"

namespace systole::codegen::conv {

namespace {

using isa::MemSpace;

// Elements per UB row of the copy: the largest divisor of W·Cin that fits a UB row, so that
// every input row is a whole number of UB rows and one LOAD can bring several input rows.
std::uint64_t CopyRowElems(const Geometry& g, std::uint32_t ub_row_elems) {
  const std::uint64_t row = g.w * g.cin;
  for (std::uint64_t q = std::min<std::uint64_t>(ub_row_elems, row); q > 1; --q) {
    if (row % q == 0) return q;
  }
  return 1;
}

bool PadsColumns(const Geometry& g) { return g.p.pad_left != 0 || g.p.pad_right != 0; }

// Stores zeros into columns [first, first + count) (in elements of a padded row) of every row
// of `padded`, from `zero_rows` zero UB rows starting at UB row 0.
void StoreZeroColumns(ProgramBuilder& builder, const Tensor& padded, std::uint64_t wp_elems,
                      std::uint64_t first, std::uint64_t count, std::uint64_t zero_rows) {
  const std::uint64_t e = padded.ElementBytes(), width = builder.UbRowElems();
  const std::uint64_t rows = padded.Dim(0) * padded.Dim(1);
  for (std::uint64_t row0 = 0; row0 < rows; row0 += zero_rows) {
    const std::uint64_t n = std::min(zero_rows, rows - row0);
    for (std::uint64_t c0 = 0; c0 < count; c0 += width) {
      builder.Emit(StoreInsn(MemSpace::kUb, padded.address + (row0 * wp_elems + first + c0) * e,
                             wp_elems * e, 0, 0, n, std::min(width, count - c0)),
                   {{Space::kUb, 0, n, false}, WriteOf(padded)});
    }
  }
}

// The prologue: padded[n][y][PL + x][c] = input[n][y][x][c], the PL and PR columns zero. The
// input rows go through two UB staging slots (LOADs of several input rows, one STORE per input
// row: the padding breaks the destination's stride); the zero columns are STOREs of zero UB
// rows, one per column range for a block of rows.
Tensor PadColumns(ProgramBuilder& builder, const Geometry& g, const Tensor& input) {
  const std::uint64_t e = input.ElementBytes();
  const std::uint64_t wp = g.p.pad_left + g.w + g.p.pad_right, wp_elems = wp * g.cin;
  const Tensor padded = builder.AddScratch(input.dtype, {g.batch, g.h, wp, g.cin});
  const std::uint64_t image_rows = g.batch * g.h;

  // UB rows [0, zero_rows): zeros; then two staging slots of slot_rows rows.
  const std::uint64_t zero_rows = std::min<std::uint64_t>({512, image_rows, builder.UbRows() / 4});
  const std::uint64_t slot_rows = std::min<std::uint64_t>(4096, (builder.UbRows() - zero_rows) / 2);
  builder.Emit(LoadInsn(MemSpace::kUb, builder.FillRow(0).address, 0, 0, 0, zero_rows,
                        builder.UbRowElems()),
               {{Space::kUb, 0, zero_rows, true}});
  StoreZeroColumns(builder, padded, wp_elems, 0, g.p.pad_left * g.cin, zero_rows);
  StoreZeroColumns(builder, padded, wp_elems, (g.p.pad_left + g.w) * g.cin,
                   g.p.pad_right * g.cin, zero_rows);

  const std::uint64_t q = CopyRowElems(g, builder.UbRowElems());
  const std::uint64_t ub_per_row = g.w * g.cin / q;
  if (ub_per_row > slot_rows) {
    throw std::invalid_argument(fmt::format(
        "codegen: conv2d: an input row of {} elements does not fit the padded copy's staging",
        g.w * g.cin));
  }
  const std::uint64_t per_load = std::max<std::uint64_t>(1, slot_rows / ub_per_row);
  std::uint64_t slot = 0;
  for (std::uint64_t row0 = 0; row0 < image_rows; row0 += per_load, ++slot) {
    const std::uint64_t rows = std::min(per_load, image_rows - row0);
    const std::uint64_t ub = zero_rows + (slot % 2) * slot_rows;
    builder.Emit(LoadInsn(MemSpace::kUb, input.address + row0 * g.w * g.cin * e, q * e, ub, 0,
                          rows * ub_per_row, q),
                 {{Space::kUb, ub, ub + rows * ub_per_row, true}, ReadOf(input)});
    for (std::uint64_t i = 0; i < rows; ++i) {
      const std::uint64_t first = ub + i * ub_per_row;
      builder.Emit(StoreInsn(MemSpace::kUb,
                             padded.address + ((row0 + i) * wp_elems + g.p.pad_left * g.cin) * e,
                             q * e, first, 0, ub_per_row, q),
                   {{Space::kUb, first, first + ub_per_row, false}, WriteOf(padded)});
    }
  }
  return padded;
}

}  // namespace

std::uint64_t PackedSteps(const Geometry& g, std::uint32_t r) {
  if (g.groups != 1 || g.p.dilation_w != 1 || g.kw < 2) return 0;
  const std::uint64_t packed = g.kh * ((g.kw * g.cin + r - 1) / r);
  const std::uint64_t tap_by_tap = g.kh * g.kw * ((g.cin + r - 1) / r);
  return packed < tap_by_tap ? packed : 0;
}

// One STORE per input row (its rows and about a DMA latency); the LOADs and the zero columns
// overlap them on other units or are a few per cent more.
double PaddedCopyCycles(const Geometry& g, std::uint32_t ub_row_elems) {
  if (!PadsColumns(g)) return 0;
  constexpr double kDmaLatency = 40;
  const double ub_per_row = static_cast<double>(g.w * g.cin / CopyRowElems(g, ub_row_elems));
  return static_cast<double>(g.batch * g.h) * (kDmaLatency + ub_per_row);
}

void EmitPackedConv(ProgramBuilder& builder, const Geometry& g, const Tensor& input,
                    const Tensor& weights, const std::optional<Tensor>& bias, const Tensor& out,
                    const OutputTransform& transform, const GemmBuffers& buffers, bool blocked,
                    bool out_blocked) {
  const std::uint64_t r = builder.R(), c = builder.C(), e = input.ElementBytes();
  const Tensor source = PadsColumns(g) ? PadColumns(builder, g, input) : input;
  const std::uint64_t wp = PadsColumns(g) ? g.p.pad_left + g.w + g.p.pad_right : g.w;
  const std::uint64_t window = g.kw * g.cin, slices = (window + r - 1) / r;

  ImplicitGemm problem;
  problem.n = static_cast<std::uint32_t>(g.cout);
  problem.a = source;
  problem.weights = weights;
  problem.out = out;
  problem.bias = bias;
  problem.bias_dram = bias ? bias->address : 0;
  if (bias && bias->shape.size() == 3) problem.bias_block_bytes = bias->Dim(1) * c * 4;
  problem.transform = transform;
  problem.raw_output = out.dtype == builder.AccumulatorType();
  // Weight rows in HWIO order: k-step (ky, slice) starts at row ky·KW·Cin + slice·R.
  const std::uint64_t weight_pitch = blocked ? c : g.cout;
  problem.weight_block_bytes = blocked ? g.kh * window * c * e : 0;
  const std::uint64_t out_e = out.ElementBytes();
  problem.out_block_bytes = out_blocked ? g.batch * g.oh * g.ow * c * out_e : 0;

  EmitChunks(builder, g, problem, buffers, out_blocked ? c : g.cout, 0, [&](const ChunkSpan& span) {
    std::vector<KStep> steps;
    for (std::uint64_t ky = 0; ky < g.kh; ++ky) {
      for (std::uint64_t slice = 0; slice < slices; ++slice) {
        KStep step;
        step.k = static_cast<std::uint32_t>(std::min(r, window - slice * r));
        step.weight_dram = weights.address + (ky * window + slice * r) * weight_pitch * e;
        step.weight_stride = weight_pitch * e;
        for (std::uint64_t dy = 0; dy < span.oy_count; ++dy) {
          const auto base = static_cast<std::uint32_t>(dy * span.width);
          const std::int64_t iy = static_cast<std::int64_t>((span.oy0 + dy) * g.p.stride_h +
                                                            ky * g.p.dilation_h) -
                                  static_cast<std::int64_t>(g.p.pad_top);
          if (iy < 0 || iy >= static_cast<std::int64_t>(g.h)) {
            AddSegment(step.segments, {base, static_cast<std::uint32_t>(span.width), true});
            continue;
          }
          // Padded column of the window's first element: ox·SW (the copy shifted x by PL).
          const std::uint64_t pixel = (span.img * g.h + static_cast<std::uint64_t>(iy)) * wp +
                                      span.ox0 * g.p.stride_w;
          AddSegment(step.segments, {base, static_cast<std::uint32_t>(span.width), false,
                                     source.address + (pixel * g.cin + slice * r) * e,
                                     g.p.stride_w * g.cin * e});
        }
        steps.push_back(std::move(step));
      }
    }
    return steps;
  });
}

}  // namespace systole::codegen::conv
