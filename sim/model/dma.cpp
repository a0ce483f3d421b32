// The DMA units: LOAD (device memory -> UB/ACC), STORE (UB/ACC -> device memory) and
// LOAD_WEIGHTS (device memory -> weight FIFO). Data moves as raw bits; conversion happens only
// where arithmetic does.
#include <fmt/format.h>

#include "sim/model/golden_model.hpp"
#include "sim/model/numerics.hpp"

namespace systole::model {

using isa::Field;
using regs::ErrorCode;

namespace {

// The operands of LOAD and STORE, named as in docs/ISA.md.
struct DmaOperands {
  bool to_acc;             // mem=acc
  std::uint64_t dram;      // A
  std::uint64_t stride;    // S
  std::uint64_t row;       // r
  std::uint64_t col;       // c
  std::uint64_t rows;      // n
  std::uint64_t elems;     // e
  std::uint64_t elem_size; // s: E for the UB and a widening LOAD, 4 for the accumulators
  bool widen;              // LOAD mem=acc widen: E-byte elements into 4-byte accumulators

  explicit DmaOperands(const isa::Instruction& insn, unsigned ub_element_bytes)
      : to_acc(insn[Field::kMem] == static_cast<unsigned>(isa::MemSpace::kAcc)),
        dram(insn[Field::kDram]),
        stride(insn[Field::kStride]),
        row(insn[Field::kRow]),
        col(insn[Field::kCol]),
        rows(insn[Field::kRows]),
        elems(insn[Field::kElems]),
        elem_size(isa::DmaElementBytes(insn, ub_element_bytes)),
        widen(to_acc && elem_size != kAccumulatorElementBytes) {}

  std::uint64_t RowBytes() const { return elems * elem_size; }
  // Bytes from the first to one past the last byte touched. Field widths bound every term
  // ((2^16 - 1) * (2^32 - 1) + 2^18), so this cannot overflow.
  std::uint64_t Span() const { return (rows - 1) * stride + RowBytes(); }
};

}  // namespace

std::optional<GoldenModel::Fault> GoldenModel::CheckDma(const isa::Instruction& insn) const {
  const DmaOperands op(insn, element_bytes_);
  const char* name = insn.opcode == isa::Opcode::kLoad ? "load" : "store";
  if (op.dram % op.elem_size != 0 || op.stride % op.elem_size != 0) {
    return Fault{ErrorCode::kMisaligned,
                 fmt::format("{}: dram 0x{:x} and stride {} must be multiples of {}", name,
                             op.dram, op.stride, op.elem_size)};
  }
  const std::uint64_t width = op.to_acc ? config_.cols : ub_row_elems_;
  if (op.col + op.elems > width) {
    return Fault{ErrorCode::kShape, fmt::format("{}: col {} + elems {} exceeds the row width {}",
                                                name, op.col, op.elems, width)};
  }
  const std::uint64_t buffer_rows = op.to_acc ? acc_rows_ : ub_rows_;
  if (op.row + op.rows > buffer_rows) {
    return Fault{op.to_acc ? ErrorCode::kAccRange : ErrorCode::kUbRange,
                 fmt::format("{}: rows {}..{} are outside the {} rows of the {}", name, op.row,
                             op.row + op.rows, buffer_rows, op.to_acc ? "accumulators" : "UB")};
  }
  if (!memory_.Contains(op.dram, op.Span())) {
    return Fault{ErrorCode::kDramRange,
                 fmt::format("{}: bytes 0x{:x}..0x{:x} are outside device memory", name, op.dram,
                             op.dram + op.Span())};
  }
  return std::nullopt;
}

void GoldenModel::ExecuteLoad(const isa::Instruction& insn) {
  const DmaOperands op(insn, element_bytes_);
  if (op.widen) {
    // Each element exactly as an accumulator element: bf16 bits are the upper half of the
    // fp32 of the same value, an int8 is sign-extended to int32.
    std::vector<std::uint8_t> row(op.RowBytes());
    for (std::uint64_t i = 0; i < op.rows; ++i) {
      memory_.Read(op.dram + i * op.stride, row);
      std::uint32_t* destination = AccRowData(op.row + i) + op.col;
      for (std::uint64_t j = 0; j < op.elems; ++j) {
        destination[j] = element_bytes_ == 2
                             ? std::uint32_t{row[2 * j]} << 16 | std::uint32_t{row[2 * j + 1]} << 24
                             : static_cast<std::uint32_t>(std::int32_t{static_cast<std::int8_t>(row[j])});
      }
    }
    Count(Perf::kBytesDramToAcc) += op.rows * op.RowBytes();
    return;
  }
  for (std::uint64_t i = 0; i < op.rows; ++i) {
    std::uint8_t* destination =
        op.to_acc ? reinterpret_cast<std::uint8_t*>(AccRowData(op.row + i) + op.col)
                  : UbRowData(op.row + i) + op.col * element_bytes_;
    memory_.Read(op.dram + i * op.stride, {destination, op.RowBytes()});
  }
  Count(op.to_acc ? Perf::kBytesDramToAcc : Perf::kBytesDramToUb) += op.rows * op.RowBytes();
}

void GoldenModel::ExecuteStore(const isa::Instruction& insn) {
  const DmaOperands op(insn, element_bytes_);
  for (std::uint64_t i = 0; i < op.rows; ++i) {
    const std::uint8_t* source =
        op.to_acc ? reinterpret_cast<const std::uint8_t*>(AccRowData(op.row + i) + op.col)
                  : UbRowData(op.row + i) + op.col * element_bytes_;
    // Rows are written in order, so with a stride shorter than a row the later row wins.
    memory_.Write(op.dram + i * op.stride, {source, op.RowBytes()});
  }
  Count(op.to_acc ? Perf::kBytesAccToDram : Perf::kBytesUbToDram) += op.rows * op.RowBytes();
}

std::optional<GoldenModel::Fault> GoldenModel::CheckLoadWeights(
    const isa::Instruction& insn) const {
  const std::uint64_t dram = insn[Field::kDram], stride = insn[Field::kStride];
  const std::uint64_t rows = insn[Field::kRows], cols = insn[Field::kCols];
  if (dram % element_bytes_ != 0 || stride % element_bytes_ != 0) {
    return Fault{ErrorCode::kMisaligned,
                 fmt::format("load_weights: dram 0x{:x} and stride {} must be multiples of {}",
                             dram, stride, element_bytes_)};
  }
  if (rows > config_.rows || cols > config_.cols) {
    return Fault{ErrorCode::kShape, fmt::format("load_weights: a {}x{} tile exceeds the {}x{} array",
                                                rows, cols, config_.rows, config_.cols)};
  }
  const std::uint64_t span = (rows - 1) * stride + cols * element_bytes_;
  if (!memory_.Contains(dram, span)) {
    return Fault{ErrorCode::kDramRange,
                 fmt::format("load_weights: bytes 0x{:x}..0x{:x} are outside device memory", dram,
                             dram + span)};
  }
  return std::nullopt;
}

void GoldenModel::ExecuteLoadWeights(const isa::Instruction& insn) {
  const std::uint64_t dram = insn[Field::kDram], stride = insn[Field::kStride];
  const auto rows = static_cast<std::uint32_t>(insn[Field::kRows]);
  const auto cols = static_cast<std::uint32_t>(insn[Field::kCols]);
  const std::uint32_t tile_cols = config_.cols;
  WeightTile tile{config_.rows, tile_cols, {}, {}};
  // Elements outside the k x n corner stay zero.
  if (is_bf16_) {
    tile.bf16_values.assign(std::size_t{config_.rows} * tile_cols, 0.0f);
  } else {
    tile.int8_values.assign(std::size_t{config_.rows} * tile_cols, 0);
  }
  const std::span<std::uint8_t> row_bytes(scratch_bytes_.data(), cols * element_bytes_);
  for (std::uint32_t t = 0; t < rows; ++t) {
    memory_.Read(dram + t * stride, row_bytes);
    for (std::uint32_t j = 0; j < cols; ++j) {
      if (is_bf16_) {
        const auto bits = static_cast<std::uint16_t>(row_bytes[2 * j] | row_bytes[2 * j + 1] << 8);
        tile.bf16_values[t * tile_cols + j] = FloatFromBits(Bf16ToF32(bits));
      } else {
        tile.int8_values[t * tile_cols + j] = static_cast<std::int8_t>(row_bytes[j]);
      }
    }
  }
  launch_.weight_fifo.push_back(std::move(tile));
  Count(Perf::kBytesWeights) += std::uint64_t{rows} * cols * element_bytes_;
}

}  // namespace systole::model
