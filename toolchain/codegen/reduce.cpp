// Reductions along the last dimension on the VECTOR unit's REDUCE (docs/ISA.md): out[r] =
// scale · op(in[r, 0 … n−1]) for every row r of in[rows, n]. A row of n elements is k = n / W
// UB rows (W elements each); per block of rows, one LOAD brings them in, REDUCE over=rows folds
// each row's k UB rows into one row of W partial results, and one REDUCE over=elems folds those
// into element 0 (with the scale: a mean is a sum with scale 1/n), which one STORE writes out.
// Two slots let the next block load while one is reduced.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "toolchain/codegen/kernels.hpp"

namespace systole::codegen {
namespace {

using isa::Field;
using isa::MemSpace;

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("codegen: row reduce: " + what);
}

isa::Instruction ReduceInsn(isa::PoolOp op, isa::ReduceOver over, std::uint64_t src, std::uint64_t dst,
                            std::uint64_t rows, std::uint64_t elems, std::uint32_t scale_bits) {
  return isa::MakeInstruction(isa::Opcode::kReduce, {{Field::kOp, static_cast<std::uint64_t>(op)},
                                                     {Field::kOver, static_cast<std::uint64_t>(over)},
                                                     {Field::kSrc, src},
                                                     {Field::kDst, dst},
                                                     {Field::kRows, rows},
                                                     {Field::kElems, elems},
                                                     {Field::kScale, scale_bits}});
}

}  // namespace

void RowReduce(ProgramBuilder& builder, const Tensor& in, const Tensor& out, const RowReduceParams& params) {
  Require(builder.IsBf16(), "REDUCE's scale is fp32 on bf16 configurations only");
  Require(in.dtype == builder.ElementType() && out.dtype == builder.ElementType(),
          "in and out must have the configuration's element type");
  Require(!in.shape.empty() && in.Elements() > 0, "in must not be empty");
  const std::uint64_t n = in.shape.back(), rows = in.Elements() / n;
  Require(out.Elements() == rows, fmt::format("out must have {} elements, one per row", rows));
  const std::uint64_t width = builder.UbRowElems(), e = in.ElementBytes();
  Require(n % width == 0, fmt::format("rows of {} elements: a multiple of the UB row ({}) is needed", n, width));
  const std::uint64_t k = n / width;
  // Two input slots of block·k rows and two result slots of block rows.
  const std::uint64_t block = std::min<std::uint64_t>({builder.UbRows() / (2 * k + 2), 65535 / k, rows});
  Require(block > 0, fmt::format("a row of {} elements does not fit the unified buffer twice", n));
  const std::uint64_t result_base = 2 * block * k;
  builder.BeginKernel(fmt::format("reduce {} {}x{}", params.op == isa::PoolOp::kMax ? "max" : "sum", rows, n));
  std::uint64_t slot = 0;
  for (std::uint64_t r0 = 0; r0 < rows; r0 += block, ++slot) {
    const std::uint64_t count = std::min(block, rows - r0);
    const std::uint64_t src = (slot % 2) * block * k, res = result_base + (slot % 2) * block;
    builder.Emit(LoadInsn(MemSpace::kUb, in.address + r0 * n * e, width * e, src, 0, count * k, width),
                 {{Space::kUb, src, src + count * k, true}, ReadOf(in)});
    std::uint64_t partials = src;  // rows of W partial results, one per row of `in`
    if (k > 1) {
      for (std::uint64_t r = 0; r < count; ++r) {
        builder.Emit(ReduceInsn(params.op, isa::ReduceOver::kRows, src + r * k, res + r, k, width, 0),
                     {{Space::kUb, src + r * k, src + (r + 1) * k, false}, {Space::kUb, res + r, res + r + 1, true}});
      }
      partials = res;
    }
    builder.Emit(ReduceInsn(params.op, isa::ReduceOver::kElems, partials, res, count, width, params.scale_bits),
                 {{Space::kUb, partials, partials + count, false}, {Space::kUb, res, res + count, true}});
    builder.Emit(StoreInsn(MemSpace::kUb, out.address + r0 * e, e, res, 0, count, 1),
                 {{Space::kUb, res, res + count, false}, WriteOf(out)});
  }
}

}  // namespace systole::codegen
