// ACCVEC: elementwise fp32 arithmetic on accumulator rows, written back to accumulator rows with
// no rounding to bf16 — the optimizer update's arithmetic (docs/ISA.md "ACCVEC",
// docs/NUMERICS.md "ACCVEC"). Each element is one AccOpF32 (numerics.hpp).
#include <fmt/format.h>

#include <array>
#include <tuple>

#include "sim/model/golden_model.hpp"
#include "sim/model/numerics.hpp"
#include "sim/model/ub_elements.hpp"

namespace systole::model {

using isa::AccOp;
using isa::Field;
using regs::ErrorCode;

// Faults in docs/ISA.md's order: an int8 configuration (int32 accumulators: no fp32 to work
// on), `scalar` together with `bcast` or `bcol`, then the rows of a, b (unless b is the
// immediate or the op is sqrt) and the destination.
std::optional<GoldenModel::Fault> GoldenModel::CheckAccVec(const isa::Instruction& insn) const {
  if (!is_bf16_) {
    return Fault{ErrorCode::kIllegalField,
                 fmt::format("accvec: needs fp32 accumulators (a bf16 configuration); {} is int8",
                             config_.name)};
  }
  const bool scalar = insn[Field::kScalar] != 0;
  if (scalar && (insn[Field::kBcast] != 0 || insn[Field::kBcol] != 0)) {
    return Fault{ErrorCode::kIllegalField,
                 "accvec: scalar (operand b is imm) cannot be combined with bcast or bcol"};
  }
  const std::uint64_t rows = insn[Field::kRows];
  const bool reads_b = !scalar && static_cast<AccOp>(insn[Field::kOp]) != AccOp::kSqrt;
  const std::uint64_t b_rows = !reads_b ? 0 : (insn[Field::kBcast] != 0 ? 1 : rows);
  for (const auto& [what, first, count] :
       {std::tuple{"accvec: operand a", insn[Field::kA], rows},
        std::tuple{"accvec: operand b", insn[Field::kB], b_rows},
        std::tuple{"accvec: destination", insn[Field::kDst], rows}}) {
    if (count == 0) continue;
    if (auto why = RowsOutside(what, first, count, acc_rows_)) {
      return Fault{ErrorCode::kAccRange, *why};
    }
  }
  return std::nullopt;
}

// Rows in order, each read completely (a, then b) before it is written, so dst may overlap a
// or b; a broadcast b row written by an earlier row of the same instruction is read as written.
void GoldenModel::ExecuteAccVec(const isa::Instruction& insn) {
  const std::uint64_t a = insn[Field::kA], b = insn[Field::kB], dst = insn[Field::kDst];
  const bool bcast = insn[Field::kBcast] != 0, bcol = insn[Field::kBcol] != 0;
  const bool scalar = insn[Field::kScalar] != 0;
  const auto op = static_cast<AccOp>(insn[Field::kOp]);
  const auto imm = static_cast<std::uint32_t>(insn[Field::kImm]);
  std::vector<std::uint32_t> x(config_.cols), y(config_.cols, imm);
  for (std::uint64_t i = 0; i < insn[Field::kRows]; ++i) {
    const std::uint32_t* row_a = AccRowData(a + i);
    std::copy(row_a, row_a + config_.cols, x.begin());
    if (!scalar && op != AccOp::kSqrt) {
      const std::uint32_t* row_b = AccRowData(b + (bcast ? 0 : i));
      for (std::uint32_t j = 0; j < config_.cols; ++j) y[j] = row_b[bcol ? 0 : j];
    }
    std::uint32_t* out = AccRowData(dst + i);
    for (std::uint32_t j = 0; j < config_.cols; ++j) out[j] = AccOpF32(op, x[j], y[j]);
  }
}

}  // namespace systole::model
