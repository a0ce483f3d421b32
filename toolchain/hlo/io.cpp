#include "toolchain/hlo/io.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cmath>
#include <random>

namespace systole::hlo {

namespace {

std::vector<const Instruction*> EntryParameters(const Module& module) {
  if (module.entry == nullptr) throw HloError("module has no entry computation");
  std::vector<const Instruction*> parameters;
  for (const Instruction* parameter : module.entry->Parameters()) {
    if (parameter == nullptr) throw HloError("the entry computation's parameter numbers have gaps");
    if (!parameter->shape.IsArray()) {
      throw HloError(parameter->location, fmt::format("parameter '{}' is a {}: only array parameters can be supplied",
                                                      parameter->name, parameter->shape.ToString()));
    }
    parameters.push_back(parameter);
  }
  return parameters;
}

void Flatten(const Literal& literal, std::vector<npy::Array>& arrays) {
  if (literal.shape.IsTuple()) {
    for (const Literal& element : literal.elements) Flatten(element, arrays);
    return;
  }
  npy::Array array;
  array.type = NpyTypeFor(literal.shape.type);
  for (std::int64_t d : literal.shape.dims) array.shape.push_back(static_cast<std::uint64_t>(d));
  array.values = literal.values;
  arrays.push_back(std::move(array));
}

// Whether `value` arrives as `converted` without losing what it says. Integers and pred must
// be held exactly (1000 is not an s8, NaN no integer); floating types round to their precision
// as NumPy's float32 must for bf16, but a finite value must not overflow to infinity.
bool ConvertsExactly(ElementType type, double value, double converted) {
  if (IsFloating(type)) return !std::isfinite(value) || std::isfinite(converted);
  return value == converted;
}

}  // namespace

npy::ElementType NpyTypeFor(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kU8: return npy::ElementType::kUInt8;
    case ElementType::kS8: return npy::ElementType::kInt8;
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kU16: return npy::ElementType::kInt32;
    case ElementType::kS64:
    case ElementType::kU32:
    case ElementType::kU64: return npy::ElementType::kInt64;
    case ElementType::kF64: return npy::ElementType::kFloat64;
    default: return npy::ElementType::kFloat32;  // f32, bf16, f16
  }
}

std::vector<Literal> RandomInputs(const Module& module, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Literal> inputs;
  for (const Instruction* parameter : EntryParameters(module)) {
    Literal literal(parameter->shape);
    const ElementType type = parameter->shape.type;
    for (double& value : literal.values) {
      const std::uint64_t draw = rng();
      if (IsFloating(type)) {
        const double unit = static_cast<double>(draw >> 11) * 0x1.0p-53;
        value = RoundToType(type, 2.0 * unit - 1.0);
      } else if (IsSigned(type)) {
        value = static_cast<double>(draw % 17) - 8.0;
      } else if (type == ElementType::kPred) {
        value = static_cast<double>(draw & 1);
      } else {
        value = static_cast<double>(draw % 17);
      }
    }
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

std::vector<Literal> InputsFromArrays(const Module& module, const std::vector<npy::Array>& arrays,
                                      InputConversion conversion, std::string_view origin) {
  const std::vector<const Instruction*> parameters = EntryParameters(module);
  if (arrays.size() != parameters.size()) {
    throw HloError(fmt::format("{}: {} input array(s) given but the entry computation '{}' takes {}", origin,
                               arrays.size(), module.entry->name, parameters.size()));
  }
  std::vector<Literal> inputs;
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    const Shape& shape = parameters[k]->shape;
    std::vector<std::uint64_t> expected;
    for (std::int64_t d : shape.dims) expected.push_back(static_cast<std::uint64_t>(d));
    if (arrays[k].shape != expected) {
      throw HloError(fmt::format("{}: arr_{} has shape ({}) but parameter {} ('{}') is {}", origin, k,
                                 fmt::join(arrays[k].shape, ", "), k, parameters[k]->name, shape.ToString()));
    }
    Literal literal;
    literal.shape = shape;
    literal.values = arrays[k].values;
    RoundAll(shape.type, literal.values);
    if (conversion == InputConversion::kExact) {
      for (std::size_t i = 0; i < literal.values.size(); ++i) {
        if (!ConvertsExactly(shape.type, arrays[k].values[i], literal.values[i])) {
          throw LossyInputError(fmt::format(
              "{}: arr_{} ({}) for parameter {} ('{}', {}): element {} = {} does not fit {} (it would become {})",
              origin, k, npy::ElementTypeName(arrays[k].type), k, parameters[k]->name, shape.ToString(), i,
              arrays[k].values[i], ElementTypeName(shape.type), literal.values[i]));
        }
      }
    }
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

std::vector<npy::Array> OutputArrays(const Literal& result) {
  std::vector<npy::Array> arrays;
  Flatten(result, arrays);
  return arrays;
}

}  // namespace systole::hlo
