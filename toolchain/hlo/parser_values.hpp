// Parsers for the value syntaxes inside an instruction: shapes, literals and the structured
// attributes (window, dim_labels, slice, padding). Internal to the parser.
#pragma once

#include <cstdint>
#include <vector>

#include "toolchain/hlo/ir.hpp"
#include "toolchain/hlo/parser_cursor.hpp"

namespace systole::hlo::detail {

// An element-type name followed by '[' (an array shape) or a '(' (a tuple shape).
bool AtShape(Cursor& cursor);
Shape ParseShape(Cursor& cursor);
// A constant's literal for `shape`; sets `elided` for `{...}`. Accepts the old form that
// repeats the shape first (`constant(f32[2] {1, 2})`).
Literal ParseLiteral(Cursor& cursor, const Shape& shape, bool& elided);
std::vector<std::int64_t> ParseIntegerList(Cursor& cursor);  // {1,2,3} or {}
std::vector<WindowDim> ParseWindow(Cursor& cursor);
ConvDimensionNumbers ParseDimLabels(Cursor& cursor);
std::vector<SliceDim> ParseSlice(Cursor& cursor);
std::vector<PadDim> ParsePadding(Cursor& cursor);
ComparisonDirection ParseComparisonDirection(Cursor& cursor);
// The module header's `{ {0}: (0, {}, may-alias), {1, 2}: (3, {1}, must-alias) }`
// (parser_alias.cpp); `{}` is an empty list. The kind may be left out (XLA's older dumps).
std::vector<InputOutputAlias> ParseInputOutputAlias(Cursor& cursor);

}  // namespace systole::hlo::detail
