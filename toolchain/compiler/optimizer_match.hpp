// Recognising an optimizer update in a training step's HLO (CompileOptions::device_state,
// place_state.cpp): the chains jax.grad and optax write for SGD with momentum and Adam, per
// donated parameter, with the gradient each one takes.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/hlo/ir.hpp"

namespace systole::compiler::detail {

// One recognised update.
struct Update {
  enum class Kind : std::uint8_t { kSgd, kAdam } kind = Kind::kSgd;
  const hlo::Instruction *parameter = nullptr, *new_parameter = nullptr;
  std::vector<const hlo::Instruction*> moments, new_moments;  // SGD: m; Adam: m, v (each replaced by its new value)
  const hlo::Instruction* dot = nullptr;                       // the gradient's dot (weights)
  const hlo::Instruction *rows = nullptr, *cols = nullptr;     // g[i][j] = Σ_b rows[b][i] · cols[b][j]
  const hlo::Instruction* host_gradient = nullptr;             // a bias's or a convolution's gradient, an input
  // What the update steps compute instead of the host (besides the dot), the splats included.
  std::vector<const hlo::Instruction*> chain;
  double mu = 0, learning_rate = 0;  // SGD
  codegen::AdamParams adam;          // Adam
  const hlo::Instruction* step_size = nullptr;  // Adam: the scalar s
};

using AliasMap = std::unordered_map<const hlo::Instruction*, const hlo::Instruction*>;  // root operand -> parameter

// The update of `parameter` whose new value is `new_parameter` (its root operand), or nothing
// when the chain is not SGD with momentum (MatchSgd) or Adam (MatchAdam) as place_state.cpp's
// header writes them, or its gradient is neither a dot over the batch (or its transpose) nor,
// for a vector or convolution weights, a value of its shape.
std::optional<Update> MatchSgd(const hlo::Instruction* new_parameter, const hlo::Instruction* parameter,
                               const AliasMap& alias_of_output);
std::optional<Update> MatchAdam(const hlo::Instruction* new_parameter, const hlo::Instruction* parameter,
                                const AliasMap& alias_of_output);

}  // namespace systole::compiler::detail
