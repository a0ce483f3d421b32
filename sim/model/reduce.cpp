// REDUCE: max or sum along each unified-buffer row (one result per row, in element 0 of its
// destination row) or across rows (one result row), in the fixed order of docs/ISA.md.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "sim/model/golden_model.hpp"
#include "sim/model/numerics.hpp"
#include "sim/model/ub_elements.hpp"

namespace systole::model {

using isa::Field;
using regs::ErrorCode;

std::optional<GoldenModel::Fault> GoldenModel::CheckReduce(const isa::Instruction& insn) const {
  const std::uint64_t rows = insn[Field::kRows], elems = insn[Field::kElems];
  if (elems > ub_row_elems_) {
    return Fault{ErrorCode::kShape, fmt::format("reduce: elems = {} exceeds the row width {}",
                                                elems, ub_row_elems_)};
  }
  const bool over_rows = static_cast<isa::ReduceOver>(insn[Field::kOver]) == isa::ReduceOver::kRows;
  if (auto why = RowsOutside("reduce: source", insn[Field::kSrc], rows, ub_rows_)) {
    return Fault{ErrorCode::kUbRange, *why};
  }
  if (auto why = RowsOutside("reduce: destination", insn[Field::kDst], over_rows ? 1 : rows,
                             ub_rows_)) {
    return Fault{ErrorCode::kUbRange, *why};
  }
  return std::nullopt;
}

namespace {

// One running max or sum: fp32 bits (bf16 configurations) or an integer (int8). The first
// element starts a max; a sum starts from +0 / 0 and adds every element, as POOL does.
class Reduction {
 public:
  Reduction(bool is_bf16, bool is_max, std::uint32_t scale, unsigned shift)
      : is_bf16_(is_bf16), is_max_(is_max), scale_(scale), shift_(shift) {}

  void Start() {
    value_ = 0;
    first_ = true;
  }
  void Add(const std::uint8_t* row, std::uint64_t element) {
    if (is_bf16_) {
      const std::uint32_t x = Bf16ToF32(LoadBf16(row, element));
      const auto current = static_cast<std::uint32_t>(value_);
      value_ = is_max_ ? (first_ ? x : MaxF32(current, x)) : AddF32(current, x);
    } else {
      const std::int32_t x = LoadInt8(row, element);
      value_ = is_max_ ? (first_ ? x : std::max<std::int64_t>(value_, x)) : value_ + x;
    }
    first_ = false;
  }
  // The result, scaled (sum only) and converted: bf16 rounding or requantization + saturation.
  void Store(std::uint8_t* row, std::uint64_t element) const {
    if (is_bf16_) {
      auto v = static_cast<std::uint32_t>(value_);
      if (!is_max_) v = MulF32(v, scale_);
      StoreBf16(row, element, F32ToBf16(v));
    } else {
      std::int64_t v = value_;
      if (!is_max_) v = Requantize(v, static_cast<std::int32_t>(scale_), shift_);
      StoreInt8(row, element, SaturateInt8(v));
    }
  }

 private:
  bool is_bf16_, is_max_;
  std::uint32_t scale_;
  unsigned shift_;
  std::int64_t value_ = 0;  // int8 sums stay below 65535 * 128 * W
  bool first_ = true;
};

}  // namespace

void GoldenModel::ExecuteReduce(const isa::Instruction& insn) {
  const std::uint64_t src = insn[Field::kSrc], dst = insn[Field::kDst];
  const std::uint64_t rows = insn[Field::kRows], elems = insn[Field::kElems];
  const bool is_max = static_cast<isa::PoolOp>(insn[Field::kOp]) == isa::PoolOp::kMax;
  const std::uint32_t scale =
      EffectiveScale(static_cast<std::uint32_t>(insn[Field::kScale]), is_bf16_);
  Reduction reduction(is_bf16_, is_max, scale, static_cast<unsigned>(insn[Field::kShift]));
  std::uint8_t* result = scratch_bytes_.data();
  if (static_cast<isa::ReduceOver>(insn[Field::kOver]) == isa::ReduceOver::kElems) {
    // Row i: elements 0, 1, ..., elems-1 in order -> element 0 of row dst+i; the rest zero.
    for (std::uint64_t i = 0; i < rows; ++i) {
      const std::uint8_t* row = UbRowData(src + i);
      reduction.Start();
      for (std::uint64_t j = 0; j < elems; ++j) reduction.Add(row, j);
      std::fill(result, result + ub_row_bytes_, 0);
      reduction.Store(result, 0);
      std::memcpy(UbRowData(dst + i), result, ub_row_bytes_);
    }
    return;
  }
  // Across rows: element j of rows src, src+1, ..., src+rows-1 in order -> element j of row
  // dst, for j < elems; elements elems..W-1 of row dst are zero.
  std::fill(result, result + ub_row_bytes_, 0);
  for (std::uint64_t j = 0; j < elems; ++j) {
    reduction.Start();
    for (std::uint64_t i = 0; i < rows; ++i) reduction.Add(UbRowData(src + i), j);
    reduction.Store(result, j);
  }
  std::memcpy(UbRowData(dst), result, ub_row_bytes_);
}

}  // namespace systole::model
