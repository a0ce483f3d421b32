// Shared by the compiler tests: compile an HLO file, run it on a device, run the interpreter
// on the same inputs, and measure how far apart they are.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/execute.hpp"
#include "compiler/model.hpp"
#include "hlo/interpreter.hpp"
#include "hlo/io.hpp"

namespace systole::compiler::testing {

inline std::filesystem::path CorpusFile(const std::string& name) {
  return std::filesystem::path(SYSTOLE_SHARED_DIR) / "corpus" / "hlo" / name;
}
inline std::filesystem::path ExampleFile(const std::string& name) {
  return std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "hlo" / name;
}

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The error of `actual` against `expected`, relative to the largest reference magnitude of
// each array (tuples flattened); the worst array wins. NaN where only one side is NaN.
inline double RelativeError(const hlo::Literal& actual, const hlo::Literal& expected) {
  if (expected.shape.IsTuple()) {
    double worst = 0;
    for (std::size_t i = 0; i < expected.elements.size(); ++i) {
      worst = std::max(worst, RelativeError(actual.elements.at(i), expected.elements[i]));
    }
    return worst;
  }
  EXPECT_EQ(actual.values.size(), expected.values.size());
  double scale = 0, error = 0;
  for (double v : expected.values) scale = std::max(scale, std::isfinite(v) ? std::abs(v) : 0.0);
  for (std::size_t i = 0; i < expected.values.size() && i < actual.values.size(); ++i) {
    const double a = actual.values[i], e = expected.values[i];
    if (std::isnan(a) != std::isnan(e) || std::isinf(a) != std::isinf(e)) return std::nan("");
    if (std::isfinite(e)) error = std::max(error, std::abs(a - e));
  }
  return scale == 0 ? error : error / scale;
}

// The TPU's default precision as an HLO rewrite: every f32 dot / convolution operand goes
// through convert(bf16) and back. The interpreter on the rewritten module differs from an
// unfused device run only by fp32 vs double accumulation.
inline void RoundDotOperandsToBf16(hlo::Module& module) {
  hlo::Computation& entry = *module.entry;
  for (hlo::Instruction* i : entry.PostOrder()) {
    if (i->opcode != hlo::Opcode::kDot && i->opcode != hlo::Opcode::kConvolution) continue;
    for (hlo::Instruction*& operand : i->operands) {
      if (operand->shape.type != hlo::ElementType::kF32) continue;
      hlo::Instruction* value = operand;
      for (hlo::ElementType type : {hlo::ElementType::kBf16, hlo::ElementType::kF32}) {
        auto convert = std::make_unique<hlo::Instruction>();
        convert->name = entry.UniqueName(value->name + ".bf16");
        convert->opcode = hlo::Opcode::kConvert;
        convert->shape = hlo::Shape(type, operand->shape.dims);
        convert->operands = {value};
        value = entry.Insert(std::move(convert), i);
      }
      operand = value;
    }
  }
}

struct Comparison {
  CompiledModel model;
  RunResult run;
  double error = 0;
};

// Compiles `path` for `config_name`, runs it on `uri` and on the interpreter with `inputs`.
inline Comparison CompileRunCompare(const std::filesystem::path& path, const std::string& config_name,
                                    const std::string& uri, const std::vector<hlo::Literal>& inputs) {
  Comparison c;
  const Config config = LoadConfig(config_name);
  c.model = Compile(ReadText(path), path.filename().string(), config);
  Device device = Device::Open(uri, config);
  c.run = Execute(c.model, device, inputs);
  const hlo::Literal expected = hlo::Interpreter(*c.model.module).Run(inputs);
  c.error = RelativeError(c.run.result, expected);
  return c;
}

}  // namespace systole::compiler::testing
