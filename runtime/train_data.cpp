// Training data and initial state from .npz files or from arrays in memory (docs/TRAINING.md):
// the arrays typed and shaped as the training step's parameters, every mismatch named with the
// file (or the caller's name for the arrays) and the array.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "runtime/train_loop.hpp"

namespace systole::runtime {

namespace {

// An .npz array as a literal of `type` (rounded as an input of that type would be).
hlo::Literal ToLiteral(const npy::Array& array, hlo::ElementType type) {
  hlo::Shape shape;
  shape.type = type;
  shape.dims.assign(array.shape.begin(), array.shape.end());
  hlo::Literal literal(shape);
  literal.values = array.values;
  hlo::RoundAll(type, literal.values);
  return literal;
}

}  // namespace

std::string ArraySource::Element(std::size_t index) const {
  return npz ? fmt::format("arr_{}", index) : fmt::format("array {}", index);
}

Dataset ReadDataset(const std::filesystem::path& file, const CompiledModel& step, const StepSignature& signature) {
  return DatasetFromArrays(npy::ReadNpz(file), {file.string(), true}, step, signature);
}

Dataset DatasetFromArrays(const std::vector<npy::Array>& arrays, const ArraySource& source, const CompiledModel& step,
                          const StepSignature& signature) {
  const std::size_t n = signature.batch_parameters.size();
  if (arrays.size() != 2 * n) {
    throw std::runtime_error(fmt::format("{}: {} arrays, but {} takes {} batch arrays: the data holds the {} "
                                         "training arrays, then the {} test arrays", source.name, arrays.size(),
                                         step.source_name, n, n, n));
  }
  Dataset data;
  for (std::size_t i = 0; i < 2 * n; ++i) {
    const hlo::Instruction* parameter = step.module->entry->Parameters().at(signature.batch_parameters[i % n]);
    // A row is the parameter's shape after its batch dimension (after steps and batch when a
    // launch runs several steps on stacked batches).
    const std::size_t leading = signature.leading_dims();
    const auto& want = parameter->shape.dims;
    const auto& got = arrays[i].shape;
    const bool rows_match = !got.empty() && got.size() + leading - 1 == want.size() &&
                            std::equal(want.begin() + static_cast<std::ptrdiff_t>(leading), want.end(), got.begin() + 1,
                                       [](std::int64_t w, std::uint64_t g) { return static_cast<std::uint64_t>(w) == g; });
    if (!rows_match) {
      throw std::runtime_error(fmt::format("{}: {} has shape [{}], but its rows must be shaped like {} ('{}') "
                                           "after the {}", source.name, source.Element(i), fmt::join(got, ", "),
                                           parameter->shape.ToString(), parameter->name,
                                           leading == 1 ? "batch dimension" : "steps and batch dimensions"));
    }
    (i < n ? data.train : data.test).push_back(ToLiteral(arrays[i], parameter->shape.type));
  }
  if (data.train[0].shape.dims[0] != data.train.back().shape.dims[0] ||
      data.test[0].shape.dims[0] != data.test.back().shape.dims[0]) {
    throw std::runtime_error(fmt::format("{}: the arrays of one set differ in their number of rows", source.name));
  }
  return data;
}

std::vector<hlo::Literal> ReadInitialState(const std::filesystem::path& file, const CompiledModel& step,
                                           const StepSignature& signature) {
  return InitialStateFromArrays(npy::ReadNpz(file), {file.string(), true}, step, signature);
}

std::vector<hlo::Literal> InitialStateFromArrays(const std::vector<npy::Array>& arrays, const ArraySource& source,
                                                 const CompiledModel& step, const StepSignature& signature) {
  if (arrays.size() != signature.state_parameters.size()) {
    throw std::runtime_error(fmt::format("{}: {} arrays, but {} has {} state parameters (the donated inputs)",
                                         source.name, arrays.size(), step.source_name,
                                         signature.state_parameters.size()));
  }
  std::vector<hlo::Literal> state;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const hlo::Instruction* parameter = step.module->entry->Parameters().at(signature.state_parameters[i]);
    hlo::Literal value = ToLiteral(arrays[i], parameter->shape.type);
    if (!value.shape.SameAs(parameter->shape)) {
      throw std::runtime_error(fmt::format("{}: {} is [{}], parameter {} ('{}') is {}", source.name,
                                           source.Element(i), fmt::join(arrays[i].shape, ", "),
                                           signature.state_parameters[i], parameter->name,
                                           parameter->shape.ToString()));
    }
    state.push_back(std::move(value));
  }
  return state;
}

}  // namespace systole::runtime
