// The matrix unit: MATMUL streams unified-buffer rows through the stationary weight tile.
//
// The definition (docs/ISA.md, docs/NUMERICS.md) is, per input row and output column j,
//   psum = +0; for t in 0..R-1: psum = add(psum, mul(x[t], T[t][j]));  ACC = psum or ACC + psum
// The kernels below compute exactly that, but loop over t outside and over j inside: each step
// broadcasts x[t] and updates all C column sums at once from the contiguous tile row T[t][*].
// Every column still sees its products in the order t = 0, 1, ..., R-1, so the result is
// bit-identical to the scalar definition, while the inner loop is plain SIMD over columns.
#include <fmt/format.h>

#include <algorithm>

#include "sim/model/golden_model.hpp"
#include "sim/model/numerics.hpp"

namespace systole::model {

using isa::Field;
using regs::ErrorCode;

namespace {

// FlushF32 on a float, written without branches so that the column loop vectorises.
inline float FlushSubnormal(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t keep = (bits & kF32ExponentMask) != 0 ? 0xFFFFFFFFu : kF32SignBit;
  return std::bit_cast<float>(bits & keep);
}

// int8: products are exact in int32 and the sums wrap modulo 2^32, so the order does not matter
// and zero inputs can be skipped; uint32 arithmetic makes the wrap defined behaviour.
void MatmulRowsInt8(const std::uint8_t* ub, std::size_t ub_row_bytes, std::uint32_t* acc,
                    std::uint32_t cols, const std::int32_t* __restrict tile, std::uint32_t k,
                    std::uint64_t rows, bool accumulate) {
  for (std::uint64_t i = 0; i < rows; ++i) {
    const auto* x = reinterpret_cast<const std::int8_t*>(ub + i * ub_row_bytes);
    std::uint32_t* __restrict out = acc + i * cols;
    if (!accumulate) std::fill(out, out + cols, 0u);
    for (std::uint32_t t = 0; t < k; ++t) {
      const std::int32_t xt = x[t];
      if (xt == 0) continue;
      const std::int32_t* __restrict weights = tile + std::size_t{t} * cols;
      for (std::uint32_t j = 0; j < cols; ++j) out[j] += static_cast<std::uint32_t>(xt * weights[j]);
    }
  }
}

// bf16: every step rounds and flushes, and all R rows take part (x[t] = +0 for t >= K, whose
// products can still be NaN or turn a -0 sum into +0). NaNs propagate through add and mul, so
// making them canonical once at the end gives the same bits as doing it after every step.
void MatmulRowsBf16(const std::uint8_t* ub, std::size_t ub_row_bytes, std::uint32_t* acc,
                    std::uint32_t cols, const float* __restrict tile, std::uint32_t rows_r,
                    std::uint32_t k, std::uint64_t rows, bool accumulate, float* __restrict x,
                    float* __restrict psum) {
  for (std::uint64_t i = 0; i < rows; ++i) {
    const std::uint8_t* row = ub + i * ub_row_bytes;
    for (std::uint32_t t = 0; t < rows_r; ++t) {
      const auto bits = static_cast<std::uint16_t>(row[2 * t] | row[2 * t + 1] << 8);
      x[t] = t < k ? FloatFromBits(Bf16ToF32(bits)) : 0.0f;
    }
    std::fill(psum, psum + cols, 0.0f);
    for (std::uint32_t t = 0; t < rows_r; ++t) {
      const float xt = x[t];
      const float* __restrict weights = tile + std::size_t{t} * cols;
      for (std::uint32_t j = 0; j < cols; ++j) {
        psum[j] = FlushSubnormal(psum[j] + FlushSubnormal(xt * weights[j]));
      }
    }
    std::uint32_t* out = acc + i * cols;
    for (std::uint32_t j = 0; j < cols; ++j) {
      const std::uint32_t sum = FinishF32(psum[j]);
      out[j] = accumulate ? AddF32(out[j], sum) : sum;
    }
  }
}

}  // namespace

std::optional<GoldenModel::Fault> GoldenModel::CheckMatmul(const isa::Instruction& insn) const {
  const std::uint64_t ub = insn[Field::kUb], acc = insn[Field::kAcc];
  const std::uint64_t rows = insn[Field::kRows], k = insn[Field::kK];
  if (k > config_.rows) {
    return Fault{ErrorCode::kShape, fmt::format("matmul: k {} exceeds the {} array rows", k,
                                                config_.rows)};
  }
  if (ub + rows > ub_rows_) {
    return Fault{ErrorCode::kUbRange, fmt::format("matmul: input rows {}..{} are outside the {} "
                                                  "UB rows", ub, ub + rows, ub_rows_)};
  }
  if (acc + rows > acc_rows_) {
    return Fault{ErrorCode::kAccRange, fmt::format("matmul: output rows {}..{} are outside the {} "
                                                   "accumulator rows", acc, acc + rows, acc_rows_)};
  }
  return std::nullopt;
}

void GoldenModel::ExecuteMatmul(const isa::Instruction& insn) {
  if (insn[Field::kPop] != 0) {
    launch_.stationary = std::move(launch_.weight_fifo.front());
    launch_.weight_fifo.pop_front();
  }
  const WeightTile& tile = *launch_.stationary;
  const std::uint64_t ub = insn[Field::kUb], acc = insn[Field::kAcc];
  const std::uint64_t rows = insn[Field::kRows];
  const auto k = static_cast<std::uint32_t>(insn[Field::kK]);
  const bool accumulate = insn[Field::kAccumulate] != 0;
  if (matmul_kernel_) {
    matmul_kernel_(MatmulOperands{UbRowData(ub), ub_row_bytes_, rows, k, accumulate, tile, AccRowData(acc)});
  } else if (is_bf16_) {
    MatmulRowsBf16(UbRowData(ub), ub_row_bytes_, AccRowData(acc), config_.cols,
                   tile.bf16_values.data(), config_.rows, k, rows, accumulate,
                   scratch_f32_.data(), scratch_psum_.data());
  } else {
    MatmulRowsInt8(UbRowData(ub), ub_row_bytes_, AccRowData(acc), config_.cols,
                   tile.int8_values.data(), k, rows, accumulate);
  }
  Count(Perf::kMacs) += rows * k * config_.cols;
}

}  // namespace systole::model
