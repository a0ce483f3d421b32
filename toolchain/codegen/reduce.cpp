// Reductions on the VECTOR unit's REDUCE (docs/ISA.md).
//
// RowReduce, along the last dimension: out[r] = scale · op(in[r, 0 … n−1]) for every row r of
// in[rows, n]. A row of n elements is k = ⌊n / W⌋ full UB rows (W elements each) and, when W does
// not divide n, one tail row of t = n mod W elements whose other elements hold op's identity
// (−inf for max, 0 for sum: a fill row LOADed once, the tail LOADed over it). REDUCE over=rows
// folds each row's UB rows into one row of W partial results, and one REDUCE over=elems folds
// those into element 0 (with the scale: a mean is a sum with scale 1/n), which one STORE writes
// out. Two slots let the next block load while one is reduced. A row shorter than W is one tail
// row and needs no fill: REDUCE over=elems reads its n elements only.
//
// ColumnReduce, along a middle dimension: out[o, c] = scale · op(in[o, 0 … m−1, c]) — a global
// average pool over an image's m = H·W pixels, NHWC. Per block of W channels, one strided LOAD
// gathers the block from all m pixels into m consecutive UB rows, one REDUCE over=rows folds
// them (with the scale) into one result row, and the results of a group of blocks leave in one
// STORE; two slots again. When the channels are whole UB rows and an image fits the UB, the
// image instead loads as one contiguous DMA (pixel-major: block b of pixel y in row y·blocks + b)
// and one POOL with a window of m pixels by 1 block folds it: POOL sums (or maxes) each window
// from +0 in window order and scales once, as REDUCE over=rows does, so the results are the
// same bits, and the DMA streams instead of gathering m rows that each open a DRAM row
// (ResNet-50's average pool, 49 × 2048: 32 161 -> ~14 k cycles).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/codegen/require.hpp"
#include "toolchain/codegen/row_blocks.hpp"

namespace systole::codegen {
namespace {

using isa::Field;
using isa::MemSpace;

// ColumnReduce as one contiguous LOAD and one POOL per image (the header comment); false, and
// nothing emitted, when the channels are not whole UB rows, the window is too tall for POOL or
// an image does not fit the UB.
bool ColumnReduceAsPool(ProgramBuilder& builder, const Tensor& in, const Tensor& out, const RowReduceParams& params) {
  const std::uint64_t outer = in.shape[0], m = in.shape[1], n = in.shape[2];
  const std::uint64_t width = builder.UbRowElems(), e = in.ElementBytes(), blocks = n / width;
  const std::uint64_t slot_rows = (m + 1) * blocks;
  if (n % width != 0 || m > 255 || m * blocks > 65535 || slot_rows > builder.UbRows()) return false;
  const std::uint64_t slots = 2 * slot_rows <= builder.UbRows() ? 2 : 1;
  for (std::uint64_t o = 0; o < outer; ++o) {
    const std::uint64_t src = (o % slots) * slot_rows, res = src + m * blocks;
    builder.Emit(LoadInsn(MemSpace::kUb, in.address + o * m * n * e, width * e, src, 0, m * blocks, width),
                 {{Space::kUb, src, res, true}, ReadOf(in)});
    builder.Emit(isa::MakeInstruction(isa::Opcode::kPool, {{Field::kOp, static_cast<std::uint64_t>(params.op)},
                                                           {Field::kSrc, src},
                                                           {Field::kDst, res},
                                                           {Field::kInW, blocks},
                                                           {Field::kOutH, 1},
                                                           {Field::kOutW, blocks},
                                                           {Field::kWinH, m},
                                                           {Field::kWinW, 1},
                                                           {Field::kStrideH, 1},
                                                           {Field::kStrideW, 1},
                                                           {Field::kScale, params.scale_bits},
                                                           {Field::kShift, 0}}),
                 {{Space::kUb, src, res, false}, {Space::kUb, res, res + blocks, true}});
    builder.Emit(StoreInsn(MemSpace::kUb, out.address + o * n * e, width * e, res, 0, blocks, width),
                 {{Space::kUb, res, res + blocks, false}, WriteOf(out)});
  }
  return true;
}

}  // namespace

void RowReduce(ProgramBuilder& builder, const Tensor& in, const Tensor& out, const RowReduceParams& params) {
  Require("row reduce", builder.IsBf16(), "REDUCE's scale is fp32 on bf16 configurations only");
  Require("row reduce", in.dtype == builder.ElementType() && out.dtype == builder.ElementType(),
          "in and out must have the configuration's element type");
  Require("row reduce", !in.shape.empty() && in.Elements() > 0, "in must not be empty");
  const std::uint64_t n = in.shape.back(), rows = in.Elements() / n;
  Require("row reduce", out.Elements() == rows, fmt::format("out must have {} elements, one per row", rows));
  const RowLayout layout(n, builder.UbRowElems());
  const std::uint64_t e = in.ElementBytes(), k = layout.k;
  // Two input slots of block·k rows and two result slots of block rows.
  const std::uint64_t block = std::min<std::uint64_t>({builder.UbRows() / (2 * k + 2), 65535 / k, rows});
  Require("row reduce", block > 0, fmt::format("a row of {} elements does not fit the unified buffer twice", n));
  const std::uint64_t result_base = 2 * block * k;
  builder.BeginKernel(fmt::format("reduce {} {}x{}", params.op == isa::PoolOp::kMax ? "max" : "sum", rows, n));
  if (layout.PaddedTail()) {  // op's identity in every tail row of both slots, LOADed once
    FillTailRows(builder, layout, params.op == isa::PoolOp::kMax ? 0xFF80 : 0x0000, 0, 2 * block);
  }
  std::uint64_t slot = 0;
  for (std::uint64_t r0 = 0; r0 < rows; r0 += block, ++slot) {
    const std::uint64_t count = std::min(block, rows - r0);
    const std::uint64_t src = (slot % 2) * block * k, res = result_base + (slot % 2) * block;
    TransferRows(builder, true, in, layout, r0, count, src);
    ReduceEachRow(builder, params.op, layout, src, res, res, count, params.scale_bits);
    builder.Emit(StoreInsn(MemSpace::kUb, out.address + r0 * e, e, res, 0, count, 1),
                 {{Space::kUb, res, res + count, false}, WriteOf(out)});
  }
}

void ColumnReduce(ProgramBuilder& builder, const Tensor& in, const Tensor& out, const RowReduceParams& params) {
  Require("row reduce", builder.IsBf16(), "REDUCE's scale is fp32 on bf16 configurations only");
  Require("row reduce", in.dtype == builder.ElementType() && out.dtype == builder.ElementType(),
          "in and out must have the configuration's element type");
  Require("row reduce", in.shape.size() == 3 && in.Elements() > 0, "in must be [outer, m, n], not empty");
  const std::uint64_t outer = in.shape[0], m = in.shape[1], n = in.shape[2];
  Require("row reduce", out.Elements() == outer * n, fmt::format("out must have {} elements", outer * n));
  const std::uint64_t width = builder.UbRowElems(), e = in.ElementBytes();
  const std::uint64_t blocks = (n + width - 1) / width, tail = n % width;
  // A slot holds a group of blocks: m rows each, and one result row each.
  const std::uint64_t group = std::min<std::uint64_t>(builder.UbRows() / (2 * (m + 1)), blocks);
  Require("row reduce", group > 0 && m <= 65535,
          fmt::format("{} rows to reduce do not fit the unified buffer twice", m));
  builder.BeginKernel(fmt::format("reduce {} {}x{}x{} over rows", params.op == isa::PoolOp::kMax ? "max" : "sum",
                                  outer, m, n));
  if (ColumnReduceAsPool(builder, in, out, params)) return;
  std::uint64_t slot = 0;
  for (std::uint64_t o = 0; o < outer; ++o) {
    for (std::uint64_t b0 = 0; b0 < blocks; b0 += group, ++slot) {
      const std::uint64_t count = std::min(group, blocks - b0);
      const std::uint64_t src = (slot % 2) * group * (m + 1), res = src + group * m;
      for (std::uint64_t b = 0; b < count; ++b) {
        const std::uint64_t c = (b0 + b) * width, elems = std::min(width, n - c), row = src + b * m;
        builder.Emit(LoadInsn(MemSpace::kUb, in.address + (o * m * n + c) * e, n * e, row, 0, m, elems),
                     {{Space::kUb, row, row + m, true}, ReadOf(in)});
        builder.Emit(ReduceInsn(params.op, isa::ReduceOver::kRows, row, res + b, m, elems, params.scale_bits),
                     {{Space::kUb, row, row + m, false}, {Space::kUb, res + b, res + b + 1, true}});
      }
      // Whole blocks leave in one STORE; a last block narrower than W in its own.
      const bool narrow_last = tail != 0 && b0 + count == blocks;
      const std::uint64_t whole = count - (narrow_last ? 1 : 0), address = out.address + (o * n + b0 * width) * e;
      if (whole > 0) {
        builder.Emit(StoreInsn(MemSpace::kUb, address, width * e, res, 0, whole, width),
                     {{Space::kUb, res, res + whole, false}, WriteOf(out)});
      }
      if (narrow_last) {
        builder.Emit(StoreInsn(MemSpace::kUb, address + whole * width * e, tail * e, res + whole, 0, 1, tail),
                     {{Space::kUb, res + whole, res + whole + 1, false}, WriteOf(out)});
      }
    }
  }
}

}  // namespace systole::codegen
