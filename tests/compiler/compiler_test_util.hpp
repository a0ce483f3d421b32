// Shared by the compiler tests: compile an HLO file, run it on a device, run the interpreter
// on the same inputs, and measure how far apart they are.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "runtime/execute.hpp"
#include "toolchain/compiler/model.hpp"
#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/io.hpp"

namespace systole::compiler {
// The tests compile, then run through runtime/ (runtime/execute.hpp).
using runtime::Execute;
using runtime::NetworkInputs;
using runtime::RunResult;
}  // namespace systole::compiler

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

// The step that computes `instruction` (a host step, or the device step covering it).
inline const Step* FindStep(const CompiledModel& model, const std::string& instruction) {
  for (const Step& step : model.steps) {
    if (step.instruction == instruction) return &step;
    if (step.device) {
      for (const std::string& covered : step.device->covers) {
        if (covered == instruction) return &step;
      }
    }
  }
  return nullptr;
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

// HLO text compiled for `small`, run on the golden model and on the interpreter (seed `seed`).
struct Ran {
  CompiledModel model;
  RunResult run;
  hlo::Literal expected;
  double error = 0;
};

// `matched`: compare with the interpreter on the module with dot / convolution operands
// rounded to bf16 as the MXU rounds them, so that only the drain's rounding and the
// accumulation order remain.
inline Ran CompileAndRun(const std::string& text, std::uint64_t seed = 3, bool matched = false) {
  Ran r;
  const Config config = LoadConfig("small");
  r.model = Compile(text, "test.hlo", config);
  const std::vector<hlo::Literal> inputs = hlo::RandomInputs(*r.model.module, seed);
  Device device = Device::Open("ref", config);
  r.run = Execute(r.model, device, inputs);
  const auto reference = PrepareModule(text, "test.hlo");
  if (matched) RoundDotOperandsToBf16(*reference);
  r.expected = hlo::Interpreter(*reference).Run(inputs);
  r.error = RelativeError(r.run.result, r.expected);
  return r;
}

inline bool OnDevice(const CompiledModel& model, const std::string& name) {
  const Step* step = FindStep(model, name);
  return step != nullptr && step->kind == Step::Kind::kDevice;
}

// Where `actual` and `expected` first differ in a bit of a value ("" when they do not): stricter
// than RelativeError == 0, which treats NaN payloads and -0 / +0 as equal.
inline std::string FirstBitDifference(const hlo::Literal& actual, const hlo::Literal& expected,
                                      const std::string& where = "output") {
  if (actual.shape.ToString() != expected.shape.ToString()) {
    return where + ": shape " + actual.shape.ToString() + " vs " + expected.shape.ToString();
  }
  if (actual.elements.size() != expected.elements.size() || actual.values.size() != expected.values.size()) {
    return where + ": element count differs";
  }
  for (std::size_t i = 0; i < expected.elements.size(); ++i) {
    std::string difference =
        FirstBitDifference(actual.elements[i], expected.elements[i], where + "." + std::to_string(i));
    if (!difference.empty()) return difference;
  }
  for (std::size_t i = 0; i < expected.values.size(); ++i) {
    if (std::bit_cast<std::uint64_t>(actual.values[i]) != std::bit_cast<std::uint64_t>(expected.values[i])) {
      return where + "[" + std::to_string(i) + "]: " + std::to_string(actual.values[i]) + " vs " +
             std::to_string(expected.values[i]);
    }
  }
  return "";
}

// The RTL check shared by the default and the long test sets: `path` compiled for
// `config_name` has `device_steps` device steps; run on the golden model and on the Verilated
// RTL with the same random inputs (seed 9), the RTL must give the same outputs bit for bit and
// the same MXU counters, and both must match the interpreter within `tolerance`. Skips when
// this build has no Verilated core for the configuration (-DSYSTOLE_RTL_CONFIGS); fails when it
// should have one (SYSTOLE_BUILT_RTL_CONFIGS, tests/compiler/CMakeLists.txt).
inline void ExpectRtlMatchesRefAndInterpreter(const std::filesystem::path& path, const std::string& config_name,
                                              std::size_t device_steps, double tolerance) {
  const Config config = LoadConfig(config_name);
  std::optional<Device> rtl;
  try {
    rtl = Device::Open("rtl", config);
  } catch (const std::exception& error) {
#ifdef SYSTOLE_BUILT_RTL_CONFIGS
    // A core this build Verilates must open: skipping would hide a broken RTL device.
    if ((std::string(",") + SYSTOLE_BUILT_RTL_CONFIGS + ",").find("," + config_name + ",") != std::string::npos) {
      FAIL() << "the Verilated " << config_name << " core of this build does not open: " << error.what();
    }
#endif
    GTEST_SKIP() << "no Verilated " << config_name << " core in this build: " << error.what();
  }
  const std::string name = path.filename().string();
  const CompiledModel model = Compile(ReadText(path), name, config);
  EXPECT_EQ(model.DeviceStepCount(), device_steps) << name;
  const auto inputs = hlo::RandomInputs(*model.module, 9);
  Device ref = Device::Open("ref", config);
  const RunResult on_ref = Execute(model, ref, inputs);
  const RunResult on_rtl = Execute(model, *rtl, inputs);
  EXPECT_EQ(FirstBitDifference(on_rtl.result, on_ref.result), "") << name << ": rtl vs ref";
  EXPECT_EQ(on_rtl.stats.device_steps, device_steps) << name;
  EXPECT_EQ(on_rtl.stats.macs, on_ref.stats.macs) << name;
  EXPECT_EQ(on_rtl.stats.mxu_busy, on_ref.stats.mxu_busy) << name;
  const hlo::Literal expected = hlo::Interpreter(*model.module).Run(inputs);
  const double error = RelativeError(on_rtl.result, expected);
  EXPECT_LE(error, tolerance) << name;
  // The measurements docs/COMPILER.md reports (and that decide which files are in the long set).
  std::printf("%s on rtl (%s): %llu cycles, %.1f s of device time, error vs interpreter %.2e\n", name.c_str(),
              config_name.c_str(), static_cast<unsigned long long>(on_rtl.stats.cycles),
              on_rtl.stats.device_seconds, error);
}

}  // namespace systole::compiler::testing
