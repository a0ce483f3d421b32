// Rows of a [rows, n] tensor in the unified buffer, for the kernels that work row by row
// (RowReduce, Softmax, LayerNorm): a row of n elements is k = ⌈n / W⌉ UB rows, the last a tail
// of n mod W elements when W does not divide n. Internal to toolchain/codegen.
#pragma once

#include <cstdint>

#include "toolchain/codegen/program_builder.hpp"

namespace systole::codegen {

struct RowLayout {
  RowLayout(std::uint64_t n_elements, std::uint64_t ub_row_elems)
      : n(n_elements), width(ub_row_elems), full(n / width), tail(n % width), k(full + (tail != 0 ? 1 : 0)) {}
  std::uint64_t n, width, full, tail, k;
  // A tail row that REDUCE over=rows reads whole, so its other elements need the op's identity.
  bool PaddedTail() const { return tail != 0 && full > 0; }
  // REDUCE over=elems of a row's partials (or, when the row is one short UB row, of the row).
  std::uint64_t ElemsToReduce() const { return full == 0 ? n : width; }
};

isa::Instruction ReduceInsn(isa::PoolOp op, isa::ReduceOver over, std::uint64_t src, std::uint64_t dst,
                            std::uint64_t rows, std::uint64_t elems, std::uint32_t scale_bits);

// LOAD rows r0 … r0+count−1 of `t` ([rows, n] in device memory) into k UB rows each from `ub`,
// or STORE them back (`load` false): one burst when W divides n, one strided transfer when a row
// is shorter than W, else per row its full UB rows and its tail (which leaves the tail row's
// other elements as they were).
void TransferRows(ProgramBuilder& builder, bool load, const Tensor& t, const RowLayout& layout, std::uint64_t r0,
                  std::uint64_t count, std::uint64_t ub);

// REDUCE `op` of each of `count` rows at `src` (k UB rows each) into element 0 of one UB row per
// row at `dst`: over=rows into W partials at `partials` (one UB row per row) when k > 1, then
// over=elems with `scale_bits` (fp32; 0 means 1).
void ReduceEachRow(ProgramBuilder& builder, isa::PoolOp op, const RowLayout& layout, std::uint64_t src,
                   std::uint64_t partials, std::uint64_t dst, std::uint64_t count, std::uint32_t scale_bits);

// LOADs the fill row of `bits` over the tail row of each of `count` rows at `ub` (k UB rows each).
void FillTailRows(ProgramBuilder& builder, const RowLayout& layout, std::uint16_t bits, std::uint64_t ub,
                  std::uint64_t count);

}  // namespace systole::codegen
