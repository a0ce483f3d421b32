// libFuzzer: any text parses as HLO and verifies, or throws HloError — never a crash, a hang or
// another exception. Modules that verify and are small also go through the front end's passes
// and the interpreter, which must agree before and after the passes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/io.hpp"
#include "toolchain/hlo/parser.hpp"
#include "toolchain/hlo/pass.hpp"
#include "toolchain/hlo/verifier.hpp"

namespace {

using namespace systole::hlo;

// Work bound for running a module: every array in it small, so one input runs in milliseconds.
bool SmallEnoughToRun(const Module& module) {
  for (const auto& computation : module.computations) {
    for (const auto& instruction : computation->instructions) {
      if (!instruction->shape.IsArray() || instruction->shape.Elements() > 4096) return false;
      // A loop may run up to the interpreter's iteration bound: parsed and verified, not run.
      if (instruction->opcode == Opcode::kWhile) return false;
      std::int64_t window = 1;
      for (const WindowDim& w : instruction->window) window *= std::max<std::int64_t>(w.size, 1);
      if (window > 4096) return false;
      // Reducers that are not a single op run once per element through the interpreter.
      if (!instruction->called.empty() && instruction->opcode != Opcode::kCall &&
          instruction->opcode != Opcode::kFusion &&
          !instruction->operands.empty() && instruction->operands[0]->shape.Elements() > 256) {
        return false;
      }
    }
  }
  return true;
}

bool SameValues(const Literal& a, const Literal& b) {
  if (a.values.size() != b.values.size() || a.elements.size() != b.elements.size()) return false;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    if (a.values[i] != b.values[i] && !(std::isnan(a.values[i]) && std::isnan(b.values[i]))) return false;
  }
  for (std::size_t i = 0; i < a.elements.size(); ++i) {
    if (!SameValues(a.elements[i], b.elements[i])) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Choosing a module (`--module`) by index or by name: a module's text, or HloError.
  for (const std::string_view selector : {"1", "main"}) {
    try {
      const std::string selected = SelectModuleText(text, "fuzz.hlo", selector);
      if (selected.size() > 2 * size + 1) std::abort();  // a piece of the text and a newline per line before it
    } catch (const HloError&) {
    }
  }
  std::vector<Module> modules;
  try {
    modules = ParseModules(text, "fuzz.hlo");
    for (const Module& module : modules) Verify(module);
  } catch (const HloError&) {
    return 0;
  }
  for (Module& module : modules) {
    if (!SmallEnoughToRun(module)) continue;
    Literal before;
    std::vector<Literal> inputs;
    try {
      inputs = RandomInputs(module, 1);
      before = Interpreter(module).Run(inputs);
    } catch (const HloError&) {
      continue;  // e.g. an elided constant or an unsupported convolution
    }
    Pipeline pipeline("fuzz", /*until_fixed_point=*/true);
    pipeline.Add<InlineCalls>();
    pipeline.Add<ConstantFolding>();
    pipeline.Add<DeadCodeElimination>();
    const PassResult result = pipeline.Run(module);
    if (!result.ok()) std::abort();  // the passes must keep a verified module verified
    if (!SameValues(before, Interpreter(module).Run(inputs))) std::abort();
  }
  return 0;
}
