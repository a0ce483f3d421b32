// Training data and initial state from .npz files (docs/TRAINING.md): the arrays typed and
// shaped as the training step's parameters, every mismatch named with the file and the array.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "runtime/train_loop.hpp"
#include "toolchain/npy/npy.hpp"

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

Dataset ReadDataset(const std::filesystem::path& file, const CompiledModel& step, const StepSignature& signature) {
  const std::string path = file.string();
  const std::vector<npy::Array> arrays = npy::ReadNpz(file);
  const std::size_t n = signature.batch_parameters.size();
  if (arrays.size() != 2 * n) {
    throw std::runtime_error(fmt::format("{}: {} arrays, but {} takes {} batch arrays: the data file holds the {} "
                                         "training arrays, then the {} test arrays", path, arrays.size(),
                                         step.source_name, n, n, n));
  }
  Dataset data;
  for (std::size_t i = 0; i < 2 * n; ++i) {
    const hlo::Instruction* parameter = step.module->entry->Parameters().at(signature.batch_parameters[i % n]);
    const auto& want = parameter->shape.dims;
    const auto& got = arrays[i].shape;
    const bool rows_match = got.size() == want.size() && std::equal(want.begin() + 1, want.end(), got.begin() + 1,
                                                                    [](std::int64_t w, std::uint64_t g) {
                                                                      return static_cast<std::uint64_t>(w) == g;
                                                                    });
    if (!rows_match) {
      throw std::runtime_error(fmt::format("{}: arr_{} has shape [{}], but its rows must be shaped like {} ('{}') "
                                           "after the batch dimension", path, i, fmt::join(got, ", "),
                                           parameter->shape.ToString(), parameter->name));
    }
    (i < n ? data.train : data.test).push_back(ToLiteral(arrays[i], parameter->shape.type));
  }
  if (data.train[0].shape.dims[0] != data.train.back().shape.dims[0] ||
      data.test[0].shape.dims[0] != data.test.back().shape.dims[0]) {
    throw std::runtime_error(fmt::format("{}: the arrays of one set differ in their number of rows", path));
  }
  return data;
}

std::vector<hlo::Literal> ReadInitialState(const std::filesystem::path& file, const CompiledModel& step,
                                           const StepSignature& signature) {
  const std::string path = file.string();
  const std::vector<npy::Array> arrays = npy::ReadNpz(file);
  if (arrays.size() != signature.state_parameters.size()) {
    throw std::runtime_error(fmt::format("{}: {} arrays, but {} has {} state parameters (the donated inputs)", path,
                                         arrays.size(), step.source_name, signature.state_parameters.size()));
  }
  std::vector<hlo::Literal> state;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const hlo::Instruction* parameter = step.module->entry->Parameters().at(signature.state_parameters[i]);
    hlo::Literal value = ToLiteral(arrays[i], parameter->shape.type);
    if (!value.shape.SameAs(parameter->shape)) {
      throw std::runtime_error(fmt::format("{}: arr_{} is [{}], parameter {} ('{}') is {}", path, i,
                                           fmt::join(arrays[i].shape, ", "), signature.state_parameters[i],
                                           parameter->name, parameter->shape.ToString()));
    }
    state.push_back(std::move(value));
  }
  return state;
}

}  // namespace systole::runtime
