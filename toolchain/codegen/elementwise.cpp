// Elementwise operations on the VECTOR unit. Tensors of the same shape are viewed as a flat
// array in rows of W = max(R, C) elements (full UB rows, the fewest instructions); a broadcast
// row operand needs its columns aligned with a's rows, so then a is tiled as [rows, columns]
// with column tiles of W. Two slots per operand let the next block load while one is computed.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/codegen/require.hpp"

namespace systole::codegen {

namespace {

using isa::Field;
using isa::MemSpace;

// One block: `rows` x `elems` elements at a/b/out + offset (bytes), rows `stride` bytes apart.
struct Block {
  std::uint64_t offset, stride, rows, elems;
};

void EmitBlocks(ProgramBuilder& builder, const Tensor& a, const Tensor* b, const Tensor& out,
                const ElementwiseParams& params, const std::vector<Block>& blocks,
                std::uint64_t slot_rows, bool broadcast_b) {
  const auto vector_insn = [&](std::uint64_t ra, std::uint64_t rb, std::uint64_t rows) {
    return isa::MakeInstruction(isa::Opcode::kVector,
                                {{Field::kOp, static_cast<std::uint64_t>(params.op)},
                                 {Field::kMath, static_cast<std::uint64_t>(params.math)},
                                 {Field::kFunc, static_cast<std::uint64_t>(params.func)},
                                 {Field::kBcast, broadcast_b ? 1u : 0u},
                                 {Field::kA, ra},
                                 {Field::kB, rb},
                                 {Field::kDst, ra},
                                 {Field::kRows, rows},
                                 {Field::kShift, params.shift},
                                 {Field::kLo, params.lo_bits},
                                 {Field::kHi, params.hi_bits}});
  };
  std::uint64_t slot = 0;
  for (const Block& block : blocks) {
    const std::uint64_t ra = (slot % 2) * slot_rows;
    const std::uint64_t rb = broadcast_b ? 4 * slot_rows + (slot % 2) : (2 + slot % 2) * slot_rows;
    ++slot;
    builder.Emit(LoadInsn(MemSpace::kUb, a.address + block.offset, block.stride, ra, 0, block.rows,
                          block.elems),
                 {{Space::kUb, ra, ra + block.rows, true}, ReadOf(a)});
    std::uint64_t b_rows = 0;
    if (b != nullptr) {
      b_rows = broadcast_b ? 1 : block.rows;
      // Broadcast: the row of b for this block's columns (offset modulo a row of a).
      const std::uint64_t b_offset = broadcast_b ? block.offset % block.stride : block.offset;
      builder.Emit(LoadInsn(MemSpace::kUb, b->address + b_offset, block.stride, rb, 0, b_rows,
                            block.elems),
                   {{Space::kUb, rb, rb + b_rows, true}, ReadOf(*b)});
    }
    const std::uint64_t rb_used = b != nullptr ? rb : ra;
    std::vector<Access> accesses = {{Space::kUb, ra, ra + block.rows, true}};
    if (b != nullptr) accesses.push_back({Space::kUb, rb, rb + b_rows, false});
    builder.Emit(vector_insn(ra, rb_used, block.rows), accesses);
    builder.Emit(StoreInsn(MemSpace::kUb, out.address + block.offset, block.stride, ra, 0,
                           block.rows, block.elems),
                 {{Space::kUb, ra, ra + block.rows, false}, WriteOf(out)});
  }
}

void CheckTypes(const ProgramBuilder& builder, const Tensor& a, const Tensor& out) {
  Require("elementwise", a.dtype == builder.ElementType() && out.dtype == builder.ElementType(),
          "operands must have the configuration's element type");
  Require("elementwise", a.shape == out.shape && a.Elements() > 0, "out must have a's (non-empty) shape");
}

// a viewed as a flat array in full UB rows, in blocks of at most `slot_rows` rows.
std::vector<Block> FlatBlocks(const ProgramBuilder& builder, const Tensor& a,
                              std::uint64_t slot_rows) {
  const std::uint64_t width = builder.UbRowElems(), e = a.ElementBytes();
  const std::uint64_t total = a.Elements(), full_rows = total / width;
  std::vector<Block> blocks;
  for (std::uint64_t r0 = 0; r0 < full_rows; r0 += slot_rows) {
    blocks.push_back({r0 * width * e, width * e, std::min(slot_rows, full_rows - r0), width});
  }
  if (total % width != 0) blocks.push_back({full_rows * width * e, width * e, 1, total % width});
  return blocks;
}

std::uint64_t SlotRows(const ProgramBuilder& builder) {
  return std::min<std::uint64_t>((builder.UbRows() - 2) / 4, 65535);
}

}  // namespace

void Elementwise(ProgramBuilder& builder, const Tensor& a, const Tensor& b, const Tensor& out,
                 const ElementwiseParams& params) {
  CheckTypes(builder, a, out);
  Require("elementwise", b.dtype == a.dtype, "b must have a's element type");
  const bool broadcast = b.shape != a.shape;
  const std::uint64_t slot_rows = SlotRows(builder);
  builder.BeginKernel(fmt::format("elementwise op{} {} elements{}", static_cast<int>(params.op),
                                  a.Elements(), broadcast ? " (broadcast)" : ""));
  if (!broadcast) {
    EmitBlocks(builder, a, &b, out, params, FlatBlocks(builder, a, slot_rows), slot_rows, false);
    return;
  }
  const std::uint64_t cols = a.shape.back(), rows = a.Elements() / cols;
  Require("elementwise", b.shape.size() == 1 && b.Dim(0) == cols,
          fmt::format("b must have a's shape or be one row of {} elements", cols));
  const std::uint64_t width = builder.UbRowElems(), e = a.ElementBytes();
  std::vector<Block> blocks;
  for (std::uint64_t c0 = 0; c0 < cols; c0 += width) {
    for (std::uint64_t r0 = 0; r0 < rows; r0 += slot_rows) {
      blocks.push_back({(r0 * cols + c0) * e, cols * e, std::min(slot_rows, rows - r0),
                        std::min(width, cols - c0)});
    }
  }
  EmitBlocks(builder, a, &b, out, params, blocks, slot_rows, true);
}

void Unary(ProgramBuilder& builder, const Tensor& a, const Tensor& out, isa::VecMath math, isa::ActFunc func,
           std::uint16_t lo_bits, std::uint16_t hi_bits) {
  CheckTypes(builder, a, out);
  Require("elementwise", builder.IsBf16() || math == isa::VecMath::kNone, "transcendental functions need a bf16 configuration");
  ElementwiseParams params;
  params.op = isa::VecOp::kPass;
  params.math = math;
  params.func = func;
  params.lo_bits = lo_bits;
  params.hi_bits = hi_bits;
  const std::uint64_t slot_rows = SlotRows(builder);
  builder.BeginKernel(fmt::format("unary math{} {} elements", static_cast<int>(math), a.Elements()));
  EmitBlocks(builder, a, nullptr, out, params, FlatBlocks(builder, a, slot_rows), slot_rows, false);
}

void Activation(ProgramBuilder& builder, const Tensor& a, const Tensor& out, isa::ActFunc func,
                std::uint16_t lo_bits, std::uint16_t hi_bits) {
  CheckTypes(builder, a, out);
  ElementwiseParams params;
  params.op = isa::VecOp::kMax;  // max(x, x) = x; the function does the work
  params.func = func;
  params.lo_bits = lo_bits;
  params.hi_bits = hi_bits;
  const std::uint64_t slot_rows = SlotRows(builder);
  builder.BeginKernel(fmt::format("activation func{} {} elements", static_cast<int>(func),
                                  a.Elements()));
  EmitBlocks(builder, a, nullptr, out, params, FlatBlocks(builder, a, slot_rows), slot_rows,
             false);
}

}  // namespace systole::codegen
