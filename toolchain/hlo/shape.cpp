#include "toolchain/hlo/shape.hpp"

#include <array>
#include <utility>

#include "toolchain/hlo/error.hpp"

namespace systole::hlo {

namespace {

constexpr std::array<std::pair<ElementType, std::string_view>, 17> kTypeNames{{
    {ElementType::kPred, "pred"},
    {ElementType::kS8, "s8"},
    {ElementType::kS16, "s16"},
    {ElementType::kS32, "s32"},
    {ElementType::kS64, "s64"},
    {ElementType::kU8, "u8"},
    {ElementType::kU16, "u16"},
    {ElementType::kU32, "u32"},
    {ElementType::kU64, "u64"},
    {ElementType::kBf16, "bf16"},
    {ElementType::kF16, "f16"},
    {ElementType::kF32, "f32"},
    {ElementType::kF64, "f64"},
    {ElementType::kF8E4M3FN, "f8e4m3fn"},
    {ElementType::kF8E5M2, "f8e5m2"},
    {ElementType::kTuple, "(tuple)"},
    {ElementType::kToken, "token"},
}};

}  // namespace

std::string SourceLocation::ToString() const {
  if (!Known()) return file;
  std::string where = std::to_string(line) + ":" + std::to_string(column);
  return file.empty() ? where : file + ":" + where;
}

HloError::HloError(const SourceLocation& location, const std::string& message)
    : std::runtime_error(location.Known() || !location.file.empty()
                             ? location.ToString() + ": " + message
                             : message),
      location_(location),
      detail_(message) {}

std::string_view ElementTypeName(ElementType type) {
  for (const auto& [t, name] : kTypeNames) {
    if (t == type) return name;
  }
  return "?";
}

std::optional<ElementType> ElementTypeFromName(std::string_view name) {
  for (const auto& [t, type_name] : kTypeNames) {
    if (type_name == name && t != ElementType::kTuple) return t;
  }
  return std::nullopt;
}

bool IsFloating(ElementType type) {
  return type == ElementType::kBf16 || type == ElementType::kF16 || type == ElementType::kF32 ||
         type == ElementType::kF64 || type == ElementType::kF8E4M3FN || type == ElementType::kF8E5M2;
}

bool IsSigned(ElementType type) {
  return type == ElementType::kS8 || type == ElementType::kS16 || type == ElementType::kS32 ||
         type == ElementType::kS64;
}

bool IsInteger(ElementType type) {
  return IsSigned(type) || type == ElementType::kU8 || type == ElementType::kU16 ||
         type == ElementType::kU32 || type == ElementType::kU64;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.type = ElementType::kTuple;
  shape.tuple = std::move(elements);
  return shape;
}

std::int64_t Shape::Elements() const {
  if (!IsArray()) return 0;
  std::int64_t count = 1;
  for (std::int64_t d : dims) count *= d;
  return count;
}

bool Shape::SameAs(const Shape& other) const {
  if (type != other.type || dims != other.dims || tuple.size() != other.tuple.size()) return false;
  for (std::size_t i = 0; i < tuple.size(); ++i) {
    if (!tuple[i].SameAs(other.tuple[i])) return false;
  }
  return true;
}

std::string Shape::ToString() const {
  if (IsTuple()) {
    std::string text = "(";
    for (std::size_t i = 0; i < tuple.size(); ++i) {
      if (i > 0) text += ", ";
      text += tuple[i].ToString();
    }
    return text + ")";
  }
  if (type == ElementType::kToken) return "token[]";
  std::string text(ElementTypeName(type));
  text += "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

std::vector<std::int64_t> RowMajorStrides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

}  // namespace systole::hlo
