// Element types and shapes of XLA HLO: arrays (`f32[2,3]{1,0}`), scalars (`f32[]`) and tuples
// (`(f32[2], s32[])`). Layouts are kept as printed but never change what a value means: the
// front end and the interpreter always work on the logical, row-major view.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace systole::hlo {

enum class ElementType : std::uint8_t {
  kPred,
  kS8,
  kS16,
  kS32,
  kS64,
  kU8,
  kU16,
  kU32,
  kU64,
  kBf16,
  kF16,
  kF32,
  kF64,
  kF8E4M3FN,  // 8-bit float: 4 exponent bits, 3 fraction bits, no infinities (max 448)
  kF8E5M2,    // 8-bit float: 5 exponent bits, 2 fraction bits, IEEE-like (max 57344, ±inf)
  kTuple,  // a tuple shape; its elements are in Shape::tuple
  kToken,
};

std::string_view ElementTypeName(ElementType type);  // "f32", "pred", "(tuple)", …
std::optional<ElementType> ElementTypeFromName(std::string_view name);
bool IsFloating(ElementType type);  // bf16, f16, f32, f64, the f8 types
bool IsInteger(ElementType type);   // signed or unsigned integers, not pred
bool IsSigned(ElementType type);

struct Shape {
  ElementType type = ElementType::kF32;
  std::vector<std::int64_t> dims;            // arrays only; empty for a scalar
  std::vector<std::int64_t> minor_to_major;  // as printed (`{1,0}`); empty when absent
  std::vector<Shape> tuple;                  // tuple elements when type == kTuple

  Shape() = default;
  Shape(ElementType element_type, std::vector<std::int64_t> dimensions)
      : type(element_type), dims(std::move(dimensions)) {}
  static Shape Tuple(std::vector<Shape> elements);

  bool IsTuple() const { return type == ElementType::kTuple; }
  bool IsArray() const { return type != ElementType::kTuple && type != ElementType::kToken; }
  std::size_t Rank() const { return dims.size(); }
  std::int64_t Elements() const;  // product of dims (1 for a scalar); 0 for tuples

  // Same element type, dimensions and tuple structure; layouts are ignored.
  bool SameAs(const Shape& other) const;
  std::string ToString() const;  // `f32[2,3]`, `(f32[], s32[4])`, without layout
};

// Row-major strides of `dims` in elements.
std::vector<std::int64_t> RowMajorStrides(const std::vector<std::int64_t>& dims);

}  // namespace systole::hlo
