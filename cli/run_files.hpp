// The files a run reads and writes (--inputs, --outputs), handled the same way by `systole run`
// and `systole hlo interp`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "toolchain/hlo/ir.hpp"
#include "toolchain/hlo/literal.hpp"

namespace systole::cli {

// The entry arguments from an .npz. Values a parameter's type cannot hold (f32 1000 for an s8,
// NaN for an integer) are refused with a message naming the array, its dtype and the
// parameter's type, unless `lossy` (--lossy-inputs) asks to convert them as XLA would.
std::vector<hlo::Literal> ReadModelInputs(const hlo::Module& module, const std::string& npz, bool lossy);

// Runs `run`. If it fails, the --outputs file (when one is named) is removed before the error
// goes on, so that an earlier run's outputs are never taken for this run's — unless it is the
// --inputs file itself, which a failed run must not destroy. A run that succeeds replaces the
// file in one rename (npy::WriteNpz), never leaving half of it.
void RemoveOutputsOnFailure(const std::string& outputs, const std::string& inputs, const std::function<void()>& run);

}  // namespace systole::cli
