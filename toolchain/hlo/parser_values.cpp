#include "toolchain/hlo/parser_values.hpp"

#include <fmt/core.h>

#include <charconv>
#include <string>

namespace systole::hlo::detail {

namespace {

constexpr int kMaxNesting = 64;  // tuple shapes and literal braces: deep enough for any real dump
constexpr std::int64_t kMaxDimension = std::int64_t{1} << 31;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

Shape ParseShapeAt(Cursor& cursor, int depth) {
  const SourceLocation where = cursor.Location();
  if (depth > kMaxNesting) cursor.FailAt(where, "shape nested too deeply");
  if (cursor.TryConsume("(")) {
    std::vector<Shape> elements;
    if (!cursor.TryConsume(")")) {
      do {
        elements.push_back(ParseShapeAt(cursor, depth + 1));
      } while (cursor.TryConsume(","));
      cursor.Expect(")");
    }
    return Shape::Tuple(std::move(elements));
  }
  const SourceLocation type_location = cursor.Location();
  const std::string_view type_name = cursor.Name("a shape (element type such as f32, or '(')");
  const std::optional<ElementType> type = ElementTypeFromName(type_name);
  if (!type) {
    cursor.FailAt(type_location,
                  fmt::format("expected an element type (pred, s8, s16, s32, s64, u8, u16, u32, u64, "
                              "bf16, f16, f32, f64, f8e4m3fn, f8e5m2), found '{}'",
                              Printable(type_name)));
  }
  Shape shape(*type, {});
  cursor.Expect("[");
  std::int64_t elements = 1;
  if (!cursor.TryConsume("]")) {
    do {
      const SourceLocation dim_location = cursor.Location();
      if (cursor.Peek() == '?' || cursor.Peek() == '<') {
        cursor.FailAt(dim_location, "dynamic dimensions ('?', '<=') are not supported");
      }
      const std::int64_t dim = cursor.Integer("a dimension size");
      if (dim < 0 || dim > kMaxDimension) {
        cursor.FailAt(dim_location, fmt::format("dimension size {} is out of range", dim));
      }
      elements = elements * dim;
      if (elements > kMaxElements) cursor.FailAt(dim_location, "shape has more than 2^40 elements");
      shape.dims.push_back(dim);
    } while (cursor.TryConsume(","));
    cursor.Expect("]");
  }
  // Layout: {minor,...,major} optionally followed by ':' and tiling / memory-space details,
  // which are skipped as a balanced group.
  // A '{' right after a shape is a layout only when a digit, '}' or ':' follows: in a
  // signature `-> f32[2] {` the brace opens the computation body instead.
  const char after_brace = cursor.Peek(1);
  if (cursor.Peek() == '{' && ((after_brace >= '0' && after_brace <= '9') || after_brace == '}' ||
                               after_brace == ':')) {
    cursor.Expect("{");
    while (cursor.Peek() != '}' && cursor.Peek() != ':') {
      shape.minor_to_major.push_back(cursor.Integer("a layout dimension"));
      if (!cursor.TryConsume(",")) break;
    }
    if (cursor.TryConsume(":")) cursor.SkipUntilClosing('}');
    cursor.Expect("}");
  }
  return shape;
}

// Appends the numbers of a (possibly nested) brace list to `values`.
void ParseDenseValues(Cursor& cursor, std::vector<double>& values, int depth) {
  if (depth > kMaxNesting) cursor.FailAt(cursor.Location(), "literal nested too deeply");
  if (!cursor.TryConsume("{")) {
    values.push_back(cursor.Number("a number"));
    return;
  }
  if (cursor.TryConsume("}")) return;
  do {
    ParseDenseValues(cursor, values, depth + 1);
  } while (cursor.TryConsume(","));
  cursor.Expect("}");
}

Literal ParseLiteralAt(Cursor& cursor, const Shape& shape, bool& elided, int depth) {
  if (depth > kMaxNesting) cursor.FailAt(cursor.Location(), "literal nested too deeply");
  if (AtShape(cursor)) ParseShape(cursor);  // old dumps: constant(f32[2] {1, 2})
  Literal literal;
  literal.shape = shape;
  if (shape.IsTuple()) {
    cursor.Expect("(");
    for (std::size_t i = 0; i < shape.tuple.size(); ++i) {
      if (i > 0) cursor.Expect(",");
      literal.elements.push_back(ParseLiteralAt(cursor, shape.tuple[i], elided, depth + 1));
    }
    cursor.Expect(")");
    return literal;
  }
  if (!shape.IsArray()) cursor.Fail("an array shape for a constant");
  const SourceLocation where = cursor.Location();
  if (cursor.TryConsume("{...}")) {
    elided = true;
    return literal;
  }
  if (cursor.Peek() == '{' && cursor.Peek(1) == '.' ) {
    cursor.Expect("{");
    cursor.Expect("...");
    cursor.Expect("}");
    elided = true;
    return literal;
  }
  ParseDenseValues(cursor, literal.values, depth);
  if (static_cast<std::int64_t>(literal.values.size()) != shape.Elements()) {
    cursor.FailAt(where, fmt::format("constant of shape {} needs {} value(s), found {}", shape.ToString(),
                                     shape.Elements(), literal.values.size()));
  }
  RoundAll(shape.type, literal.values);
  return literal;
}

// Splits "3x3" / "1_1x2_2" style words.
std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::int64_t ToInteger(Cursor& cursor, const SourceLocation& where, std::string_view text,
                       std::string_view what) {
  std::int64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(begin, end, value);
  if (text.empty() || error != std::errc() || stop != end || value > (std::int64_t{1} << 31) ||
      value < -(std::int64_t{1} << 31)) {
    cursor.FailAt(where, fmt::format("expected {}, found '{}'", what, Printable(text)));
  }
  return value;
}

bool IsWindowChar(char c) { return (c >= '0' && c <= '9') || c == 'x' || c == '_' || c == '-'; }

}  // namespace

bool AtShape(Cursor& cursor) {
  if (cursor.Peek() == '(') return true;
  if (!cursor.AtName() || cursor.Peek() == '%') return false;
  // Look ahead for "<type>[" without consuming.
  std::size_t length = 0;
  while (IsNameChar(cursor.PeekRaw(length)) && length < 8) ++length;
  if (cursor.PeekRaw(length) != '[') return false;
  std::string name;
  for (std::size_t i = 0; i < length; ++i) name += cursor.PeekRaw(i);
  return ElementTypeFromName(name).has_value() || name == "token";
}

Shape ParseShape(Cursor& cursor) { return ParseShapeAt(cursor, 0); }

Literal ParseLiteral(Cursor& cursor, const Shape& shape, bool& elided) {
  return ParseLiteralAt(cursor, shape, elided, 0);
}

std::vector<std::int64_t> ParseIntegerList(Cursor& cursor) {
  std::vector<std::int64_t> values;
  cursor.Expect("{");
  if (cursor.TryConsume("}")) return values;
  do {
    values.push_back(cursor.Integer("an integer"));
  } while (cursor.TryConsume(","));
  cursor.Expect("}");
  return values;
}

std::vector<WindowDim> ParseWindow(Cursor& cursor) {
  std::vector<WindowDim> window;
  cursor.Expect("{");
  bool have_size = false;
  while (!cursor.TryConsume("}")) {
    const SourceLocation key_location = cursor.Location();
    const std::string_view key = cursor.Name("a window field (size, stride, pad, lhs_dilate, rhs_dilate)");
    cursor.Expect("=");
    const SourceLocation value_location = cursor.Location();
    const std::vector<std::string_view> parts =
        Split(cursor.Word("a window value such as 3x3", IsWindowChar), 'x');
    if (key == "size") {
      window.assign(parts.size(), WindowDim{});
      have_size = true;
    } else if (!have_size) {
      cursor.FailAt(key_location, fmt::format("window field '{}' before size=", Printable(key)));
    }
    if (parts.size() != window.size()) {
      cursor.FailAt(value_location, fmt::format("window {}= has {} dimension(s) but size= has {}",
                                                Printable(key), parts.size(), window.size()));
    }
    for (std::size_t i = 0; i < parts.size(); ++i) {
      WindowDim& dim = window[i];
      if (key == "pad") {
        const std::vector<std::string_view> low_high = Split(parts[i], '_');
        if (low_high.size() != 2) {
          cursor.FailAt(value_location, fmt::format("expected low_high padding, found '{}'", Printable(parts[i])));
        }
        dim.pad_low = ToInteger(cursor, value_location, low_high[0], "a padding");
        dim.pad_high = ToInteger(cursor, value_location, low_high[1], "a padding");
        continue;
      }
      const std::int64_t value = ToInteger(cursor, value_location, parts[i], "a window number");
      if (key == "size") {
        dim.size = value;
      } else if (key == "stride") {
        dim.stride = value;
      } else if (key == "lhs_dilate") {
        dim.lhs_dilation = value;
      } else if (key == "rhs_dilate") {
        dim.rhs_dilation = value;
      } else if (key == "rhs_reversal") {
        dim.reversal = value != 0;
      } else {
        cursor.FailAt(key_location, fmt::format("unknown window field '{}'", Printable(key)));
      }
    }
  }
  return window;
}

ConvDimensionNumbers ParseDimLabels(Cursor& cursor) {
  const SourceLocation where = cursor.Location();
  const std::string_view text = cursor.Word("dim_labels such as b01f_01io->b01f", [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '-' || c == '>';
  });
  const std::size_t arrow = text.find("->");
  const std::size_t underscore = text.find('_');
  if (arrow == std::string_view::npos || underscore == std::string_view::npos || underscore > arrow) {
    cursor.FailAt(where, fmt::format("expected dim_labels such as b01f_01io->b01f, found '{}'", Printable(text)));
  }
  const std::string_view input = text.substr(0, underscore);
  const std::string_view kernel = text.substr(underscore + 1, arrow - underscore - 1);
  const std::string_view output = text.substr(arrow + 2);
  // Each label string names one role per dimension: two letters, then spatial digits 0..n-1.
  auto parse = [&](std::string_view labels, char first, char second, std::int64_t& first_dim,
                   std::int64_t& second_dim, std::vector<std::int64_t>& spatial) {
    const std::size_t spatial_count = labels.size() >= 2 ? labels.size() - 2 : 0;
    spatial.assign(spatial_count, -1);
    first_dim = second_dim = -1;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const char c = labels[i];
      const auto position = static_cast<std::int64_t>(i);
      if (c == first && first_dim < 0) {
        first_dim = position;
      } else if (c == second && second_dim < 0) {
        second_dim = position;
      } else if (c >= '0' && c <= '9' && static_cast<std::size_t>(c - '0') < spatial_count &&
                 spatial[static_cast<std::size_t>(c - '0')] < 0) {
        spatial[static_cast<std::size_t>(c - '0')] = position;
      } else {
        cursor.FailAt(where, fmt::format("bad dim_labels '{}': '{}' needs each of '{}', '{}' and 0..{} once",
                                         Printable(text), Printable(labels), first, second,
                                         spatial_count == 0 ? 0 : spatial_count - 1));
      }
    }
    if (first_dim < 0 || second_dim < 0) {
      cursor.FailAt(where, fmt::format("bad dim_labels '{}': '{}' lacks '{}' or '{}'", Printable(text),
                                       Printable(labels), first, second));
    }
  };
  ConvDimensionNumbers dims;
  parse(input, 'b', 'f', dims.input_batch, dims.input_feature, dims.input_spatial);
  parse(kernel, 'i', 'o', dims.kernel_input_feature, dims.kernel_output_feature, dims.kernel_spatial);
  parse(output, 'b', 'f', dims.output_batch, dims.output_feature, dims.output_spatial);
  if (dims.kernel_spatial.size() != dims.input_spatial.size() ||
      dims.output_spatial.size() != dims.input_spatial.size()) {
    cursor.FailAt(where, fmt::format("bad dim_labels '{}': operands differ in spatial rank", Printable(text)));
  }
  return dims;
}

std::vector<SliceDim> ParseSlice(Cursor& cursor) {
  std::vector<SliceDim> slice;
  cursor.Expect("{");
  if (cursor.TryConsume("}")) return slice;
  do {
    SliceDim dim;
    cursor.Expect("[");
    dim.start = cursor.Integer("a slice start");
    cursor.Expect(":");
    dim.limit = cursor.Integer("a slice limit");
    if (cursor.TryConsume(":")) dim.stride = cursor.Integer("a slice stride");
    cursor.Expect("]");
    slice.push_back(dim);
  } while (cursor.TryConsume(","));
  cursor.Expect("}");
  return slice;
}

std::vector<PadDim> ParsePadding(Cursor& cursor) {
  const SourceLocation where = cursor.Location();
  std::vector<PadDim> padding;
  for (std::string_view part : Split(cursor.Word("padding such as 0_0x1_1", IsWindowChar), 'x')) {
    const std::vector<std::string_view> fields = Split(part, '_');
    if (fields.size() != 2 && fields.size() != 3) {
      cursor.FailAt(where, fmt::format("expected low_high or low_high_interior padding, found '{}'", Printable(part)));
    }
    PadDim dim;
    dim.low = ToInteger(cursor, where, fields[0], "a padding");
    dim.high = ToInteger(cursor, where, fields[1], "a padding");
    if (fields.size() == 3) dim.interior = ToInteger(cursor, where, fields[2], "an interior padding");
    padding.push_back(dim);
  }
  return padding;
}

ComparisonDirection ParseComparisonDirection(Cursor& cursor) {
  const SourceLocation where = cursor.Location();
  const std::string_view name = cursor.Name("a comparison direction (EQ, NE, LT, LE, GT, GE)");
  for (int i = 0; i < 6; ++i) {
    const auto direction = static_cast<ComparisonDirection>(i);
    if (ComparisonDirectionName(direction) == name) return direction;
  }
  cursor.FailAt(where, fmt::format("expected a comparison direction (EQ, NE, LT, LE, GT, GE), found '{}'",
                                   Printable(name)));
}

}  // namespace systole::hlo::detail
