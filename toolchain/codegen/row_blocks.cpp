// Rows of a [rows, n] tensor in the unified buffer (row_blocks.hpp).
#include "toolchain/codegen/row_blocks.hpp"

namespace systole::codegen {

using isa::Field;
using isa::MemSpace;

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

void TransferRows(ProgramBuilder& builder, bool load, const Tensor& t, const RowLayout& layout, std::uint64_t r0,
                  std::uint64_t count, std::uint64_t ub) {
  const std::uint64_t e = t.ElementBytes(), n = layout.n, width = layout.width, k = layout.k;
  const auto emit = [&](std::uint64_t address, std::uint64_t stride, std::uint64_t row, std::uint64_t rows,
                        std::uint64_t elems) {
    if (load) {
      builder.Emit(LoadInsn(MemSpace::kUb, address, stride, row, 0, rows, elems),
                   {{Space::kUb, row, row + rows, true}, ReadOf(t)});
    } else {
      builder.Emit(StoreInsn(MemSpace::kUb, address, stride, row, 0, rows, elems),
                   {{Space::kUb, row, row + rows, false}, WriteOf(t)});
    }
  };
  const std::uint64_t address = t.address + r0 * n * e;
  if (layout.tail == 0) {
    emit(address, width * e, ub, count * k, width);  // rows are W-aligned: one burst
  } else if (layout.full == 0) {
    emit(address, n * e, ub, count, n);  // one short row per row
  } else {
    for (std::uint64_t r = 0; r < count; ++r) {
      emit(address + r * n * e, width * e, ub + r * k, layout.full, width);
      emit(address + r * n * e + layout.full * width * e, layout.tail * e, ub + r * k + layout.full, 1, layout.tail);
    }
  }
}

void ReduceEachRow(ProgramBuilder& builder, isa::PoolOp op, const RowLayout& layout, std::uint64_t src,
                   std::uint64_t partials, std::uint64_t dst, std::uint64_t count, std::uint32_t scale_bits) {
  const std::uint64_t k = layout.k;
  std::uint64_t elems_src = src;
  if (k > 1) {
    for (std::uint64_t r = 0; r < count; ++r) {
      builder.Emit(ReduceInsn(op, isa::ReduceOver::kRows, src + r * k, partials + r, k, layout.width, 0),
                   {{Space::kUb, src + r * k, src + (r + 1) * k, false}, {Space::kUb, partials + r, partials + r + 1, true}});
    }
    elems_src = partials;
  }
  builder.Emit(ReduceInsn(op, isa::ReduceOver::kElems, elems_src, dst, count, layout.ElemsToReduce(), scale_bits),
               {{Space::kUb, elems_src, elems_src + count, false}, {Space::kUb, dst, dst + count, true}});
}

void FillTailRows(ProgramBuilder& builder, const RowLayout& layout, std::uint16_t bits, std::uint64_t ub,
                  std::uint64_t count) {
  const Tensor fill = builder.FillRow(bits);
  for (std::uint64_t r = 0; r < count; ++r) {
    const std::uint64_t row = ub + r * layout.k + layout.full;
    builder.Emit(LoadInsn(MemSpace::kUb, fill.address, 0, row, 0, 1, layout.width),
                 {{Space::kUb, row, row + 1, true}, ReadOf(fill)});
  }
}

}  // namespace systole::codegen
