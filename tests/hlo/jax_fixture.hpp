// JAX-made fixtures with JAX's own results: NAME.hlo and NAME.npz in tests/hlo/data, written by
// jax_dumps.py. The .npz holds, for each run, the entry computation's inputs and then JAX's
// output on the CPU.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/parser.hpp"
#include "toolchain/hlo/verifier.hpp"
#include "toolchain/npy/npy.hpp"

namespace systole::hlo::testing {

inline const std::filesystem::path kJaxData = std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests" / "hlo" / "data";

struct JaxRun {
  Literal got;            // the interpreter's output for the run's inputs
  npy::Array expected;    // JAX's
};

inline Literal LiteralFromNpy(const npy::Array& array, const Shape& shape) {
  Literal literal(shape);
  EXPECT_EQ(array.values.size(), literal.values.size());
  for (std::size_t k = 0; k < literal.values.size() && k < array.values.size(); ++k) {
    literal.values[k] = array.values[k];
  }
  return literal;
}

// The first run of NAME.npz: the inputs of `module`'s parameters, and JAX's output.
inline std::pair<std::vector<Literal>, npy::Array> FirstJaxRun(const Module& module, const std::string& name) {
  const std::vector<npy::Array> arrays = npy::ReadNpz(kJaxData / (name + ".npz"));
  const std::vector<Instruction*> parameters = module.entry->Parameters();
  std::vector<Literal> inputs;
  for (std::size_t k = 0; k < parameters.size() && k < arrays.size(); ++k) {
    inputs.push_back(LiteralFromNpy(arrays[k], parameters[k]->shape));
  }
  EXPECT_GT(arrays.size(), parameters.size()) << name << ".npz: no output after the inputs";
  return {std::move(inputs), arrays.size() > parameters.size() ? arrays[parameters.size()] : npy::Array{}};
}

// Parses and verifies NAME.hlo and runs the interpreter on every run of NAME.npz.
inline std::vector<JaxRun> RunJaxFixture(const std::string& name) {
  std::vector<Module> modules = ParseModuleFile(kJaxData / (name + ".hlo"));
  EXPECT_EQ(modules.size(), 1u);
  const Module& module = modules.front();
  Verify(module);
  const std::vector<npy::Array> arrays = npy::ReadNpz(kJaxData / (name + ".npz"));
  const std::vector<Instruction*> parameters = module.entry->Parameters();
  const std::size_t per_run = parameters.size() + 1;
  EXPECT_EQ(arrays.size() % per_run, 0u);
  std::vector<JaxRun> runs;
  for (std::size_t run = 0; run < arrays.size() / per_run; ++run) {
    std::vector<Literal> inputs;
    for (std::size_t k = 0; k < parameters.size(); ++k) {
      inputs.push_back(LiteralFromNpy(arrays[run * per_run + k], parameters[k]->shape));
    }
    runs.push_back({Interpreter(module).Run(inputs), arrays[run * per_run + parameters.size()]});
  }
  return runs;
}

}  // namespace systole::hlo::testing
