// The vector unit: ACTIVATE (accumulators -> UB), VECTOR (elementwise on UB rows) and POOL
// (windows of UB rows). Each element goes through the scalar functions of numerics.hpp in the
// order docs/ISA.md gives; these instructions are a small part of a network's work, so
// clarity wins over speed here.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "sim/model/golden_model.hpp"
#include "sim/model/numerics.hpp"
#include "sim/model/transcendental.hpp"
#include "sim/model/ub_elements.hpp"

namespace systole::model {

using isa::ActFunc;
using isa::Field;
using regs::ErrorCode;

namespace {

// The clamp bounds of an instruction, in both interpretations.
struct ClampBounds {
  std::uint32_t lo_f32, hi_f32;  // bf16 bits widened to fp32
  std::int16_t lo_int, hi_int;   // int16
  explicit ClampBounds(const isa::Instruction& insn)
      : lo_f32(Bf16ToF32(static_cast<std::uint16_t>(insn[Field::kLo]))),
        hi_f32(Bf16ToF32(static_cast<std::uint16_t>(insn[Field::kHi]))),
        lo_int(static_cast<std::int16_t>(insn[Field::kLo])),
        hi_int(static_cast<std::int16_t>(insn[Field::kHi])) {}
};

std::string_view MathName(std::uint64_t value) {
  const isa::OpcodeSpec& vector = *isa::FindOpcode(static_cast<std::uint8_t>(isa::Opcode::kVector));
  return isa::FindField(vector, Field::kMath)->names[value];
}

}  // namespace

// ---- ACTIVATE ---------------------------------------------------------------------------------

std::optional<GoldenModel::Fault> GoldenModel::CheckActivate(const isa::Instruction& insn) const {
  const std::uint64_t rows = insn[Field::kRows];
  if (auto why = RowsOutside("activate: input", insn[Field::kAcc], rows, acc_rows_)) {
    return Fault{ErrorCode::kAccRange, *why};
  }
  if (insn[Field::kBias] != 0) {
    if (auto why = RowsOutside("activate: bias", insn[Field::kBiasRow], 1, acc_rows_)) {
      return Fault{ErrorCode::kAccRange, *why};
    }
  }
  if (auto why = RowsOutside("activate: output", insn[Field::kUb], rows, ub_rows_)) {
    return Fault{ErrorCode::kUbRange, *why};
  }
  return std::nullopt;
}

void GoldenModel::ExecuteActivate(const isa::Instruction& insn) {
  const std::uint64_t acc = insn[Field::kAcc], ub = insn[Field::kUb], rows = insn[Field::kRows];
  const bool bias = insn[Field::kBias] != 0;
  const std::uint32_t* bias_row = bias ? AccRowData(insn[Field::kBiasRow]) : nullptr;
  const auto func = static_cast<ActFunc>(insn[Field::kFunc]);
  const std::uint32_t scale = EffectiveScale(static_cast<std::uint32_t>(insn[Field::kScale]), is_bf16_);
  const auto shift = static_cast<unsigned>(insn[Field::kShift]);
  const std::int64_t zero_point = insn.Signed(Field::kZeroPoint);
  const ClampBounds bounds(insn);
  for (std::uint64_t i = 0; i < rows; ++i) {
    const std::uint32_t* in = AccRowData(acc + i);
    std::uint8_t* out = UbRowData(ub + i);
    for (std::uint32_t j = 0; j < config_.cols; ++j) {
      if (is_bf16_) {
        std::uint32_t v = in[j];
        if (bias) v = AddF32(v, bias_row[j]);
        v = MulF32(v, scale);
        v = ApplyFunctionF32(func, v, bounds.lo_f32, bounds.hi_f32);
        StoreBf16(out, j, F32ToBf16(v));
      } else {
        std::int32_t v = static_cast<std::int32_t>(in[j]);
        if (bias) v = WrapAddInt32(v, static_cast<std::int32_t>(bias_row[j]));
        std::int64_t r = Requantize(v, static_cast<std::int32_t>(scale), shift);
        r = ApplyFunctionInt(func, r, bounds.lo_int, bounds.hi_int);
        StoreInt8(out, j, SaturateInt8(r + zero_point));
      }
    }
    // Elements C <= j < W of the row are zeroed (only non-square arrays have them).
    std::fill(out + std::size_t{config_.cols} * element_bytes_, out + ub_row_bytes_, 0);
  }
}

// ---- VECTOR -----------------------------------------------------------------------------------

std::optional<GoldenModel::Fault> GoldenModel::CheckVector(const isa::Instruction& insn) const {
  const auto math = static_cast<isa::VecMath>(insn[Field::kMath]);
  if (math != isa::VecMath::kNone && !is_bf16_) {
    return Fault{ErrorCode::kIllegalField,
                 fmt::format("vector: math={} needs a bf16 configuration; {} is int8",
                             MathName(insn[Field::kMath]), config_.name)};
  }
  const std::uint64_t rows = insn[Field::kRows];
  const bool reads_b = static_cast<isa::VecOp>(insn[Field::kOp]) != isa::VecOp::kPass;
  const std::uint64_t b_rows = !reads_b ? 0 : (insn[Field::kBcast] != 0 ? 1 : rows);
  for (const auto& [what, first, count] :
       {std::tuple{"vector: operand a", insn[Field::kA], rows},
        std::tuple{"vector: operand b", insn[Field::kB], b_rows},
        std::tuple{"vector: destination", insn[Field::kDst], rows}}) {
    if (count == 0) continue;
    if (auto why = RowsOutside(what, first, count, ub_rows_)) {
      return Fault{ErrorCode::kUbRange, *why};
    }
  }
  return std::nullopt;
}

void GoldenModel::ExecuteVector(const isa::Instruction& insn) {
  const std::uint64_t a = insn[Field::kA], b = insn[Field::kB], dst = insn[Field::kDst];
  const std::uint64_t rows = insn[Field::kRows];
  const bool bcast = insn[Field::kBcast] != 0, bcol = insn[Field::kBcol] != 0;
  const auto op = static_cast<isa::VecOp>(insn[Field::kOp]);
  const auto func = static_cast<ActFunc>(insn[Field::kFunc]);
  const auto math = static_cast<isa::VecMath>(insn[Field::kMath]);
  const auto shift = static_cast<unsigned>(insn[Field::kShift]);
  const ClampBounds bounds(insn);
  std::uint8_t* result = scratch_bytes_.data();
  for (std::uint64_t i = 0; i < rows; ++i) {
    // The whole row is read (into `result`) before it is written, so dst may equal a or b.
    // op=pass reads no b: its row pointer is a's, never dereferenced for b.
    const std::uint8_t* x_row = UbRowData(a + i);
    const std::uint8_t* y_row = op == isa::VecOp::kPass ? x_row : UbRowData(b + (bcast ? 0 : i));
    for (std::uint32_t j = 0; j < ub_row_elems_; ++j) {
      const std::uint32_t y_elem = bcol ? 0 : j;  // bcol: element 0 for every element
      if (is_bf16_) {
        const std::uint32_t x = Bf16ToF32(LoadBf16(x_row, j));
        const std::uint32_t y = Bf16ToF32(LoadBf16(y_row, y_elem));
        std::uint32_t v = 0;
        switch (op) {
          case isa::VecOp::kAdd: v = AddF32(x, y); break;
          case isa::VecOp::kSub: v = SubF32(x, y); break;
          case isa::VecOp::kMul: v = MulF32(x, y); break;
          case isa::VecOp::kMax: v = MaxF32(x, y); break;
          case isa::VecOp::kMin: v = MinF32(x, y); break;
          case isa::VecOp::kPass: v = x; break;
        }
        v = ApplyMathF32(math, v);
        StoreBf16(result, j, F32ToBf16(ApplyFunctionF32(func, v, bounds.lo_f32, bounds.hi_f32)));
      } else {
        const std::int32_t x = LoadInt8(x_row, j), y = LoadInt8(y_row, y_elem);
        std::int64_t v = 0;
        switch (op) {
          case isa::VecOp::kAdd: v = x + y; break;
          case isa::VecOp::kSub: v = x - y; break;
          case isa::VecOp::kMul: v = Requantize(x, y, shift); break;  // (x*y + 2^(s-1)) >> s
          case isa::VecOp::kMax: v = std::max(x, y); break;
          case isa::VecOp::kMin: v = std::min(x, y); break;
          case isa::VecOp::kPass: v = x; break;
        }
        StoreInt8(result, j, SaturateInt8(ApplyFunctionInt(func, v, bounds.lo_int, bounds.hi_int)));
      }
    }
    std::memcpy(UbRowData(dst + i), result, ub_row_bytes_);
  }
}

// ---- POOL -------------------------------------------------------------------------------------

namespace {
struct PoolShape {
  std::uint64_t src, dst, in_w, out_h, out_w, win_h, win_w, stride_h, stride_w;
  explicit PoolShape(const isa::Instruction& insn)
      : src(insn[Field::kSrc]), dst(insn[Field::kDst]), in_w(insn[Field::kInW]),
        out_h(insn[Field::kOutH]), out_w(insn[Field::kOutW]), win_h(insn[Field::kWinH]),
        win_w(insn[Field::kWinW]), stride_h(insn[Field::kStrideH]),
        stride_w(insn[Field::kStrideW]) {}
  std::uint64_t SourceRow(std::uint64_t y, std::uint64_t x) const { return src + y * in_w + x; }
  // Every coordinate term is non-negative, so the last window pixel of the last output pixel
  // is the highest source row. Field widths keep this below 2^42.
  std::uint64_t LastSourceRow() const {
    return SourceRow((out_h - 1) * stride_h + win_h - 1, (out_w - 1) * stride_w + win_w - 1);
  }
};
}  // namespace

std::optional<GoldenModel::Fault> GoldenModel::CheckPool(const isa::Instruction& insn) const {
  const PoolShape shape(insn);
  if (shape.LastSourceRow() >= ub_rows_) {
    return Fault{ErrorCode::kUbRange,
                 fmt::format("pool: source rows {}..{} are outside the {} rows", shape.src,
                             shape.LastSourceRow() + 1, ub_rows_)};
  }
  if (auto why = RowsOutside("pool: destination", shape.dst, shape.out_h * shape.out_w, ub_rows_)) {
    return Fault{ErrorCode::kUbRange, *why};
  }
  return std::nullopt;
}

void GoldenModel::ExecutePool(const isa::Instruction& insn) {
  const PoolShape shape(insn);
  const bool is_max = static_cast<isa::PoolOp>(insn[Field::kOp]) == isa::PoolOp::kMax;
  const std::uint32_t scale = EffectiveScale(static_cast<std::uint32_t>(insn[Field::kScale]), is_bf16_);
  const auto shift = static_cast<unsigned>(insn[Field::kShift]);
  // One running value per element: fp32 bits (bf16) or an int32 sum / int8 max (int8).
  std::vector<std::int64_t> running(ub_row_elems_);
  std::uint8_t* result = scratch_bytes_.data();
  for (std::uint64_t oy = 0; oy < shape.out_h; ++oy) {
    for (std::uint64_t ox = 0; ox < shape.out_w; ++ox) {
      std::fill(running.begin(), running.end(), 0);  // +0 and integer 0
      bool first = true;
      for (std::uint64_t wy = 0; wy < shape.win_h; ++wy) {
        for (std::uint64_t wx = 0; wx < shape.win_w; ++wx) {
          const std::uint8_t* pixel = UbRowData(
              shape.SourceRow(oy * shape.stride_h + wy, ox * shape.stride_w + wx));
          for (std::uint32_t j = 0; j < ub_row_elems_; ++j) {
            std::int64_t& value = running[j];
            if (is_bf16_) {
              const std::uint32_t x = Bf16ToF32(LoadBf16(pixel, j));
              const auto current = static_cast<std::uint32_t>(value);
              value = is_max ? (first ? x : MaxF32(current, x)) : AddF32(current, x);
            } else {
              const std::int32_t x = LoadInt8(pixel, j);
              value = is_max ? (first ? x : std::max<std::int64_t>(value, x)) : value + x;
            }
          }
          first = false;
        }
      }
      for (std::uint32_t j = 0; j < ub_row_elems_; ++j) {
        if (is_bf16_) {
          std::uint32_t v = static_cast<std::uint32_t>(running[j]);
          if (!is_max) v = MulF32(v, scale);
          StoreBf16(result, j, F32ToBf16(v));
        } else {
          std::int64_t v = running[j];
          if (!is_max) v = Requantize(v, static_cast<std::int32_t>(scale), shift);
          StoreInt8(result, j, SaturateInt8(v));
        }
      }
      std::memcpy(UbRowData(shape.dst + oy * shape.out_w + ox), result, ub_row_bytes_);
    }
  }
}

}  // namespace systole::model
