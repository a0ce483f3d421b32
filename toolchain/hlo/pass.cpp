#include "toolchain/hlo/pass.hpp"

#include <fmt/core.h>

#include "toolchain/hlo/verifier.hpp"

namespace systole::hlo {

PassResult Pipeline::Run(Module& module) {
  bool changed_any = false;
  for (int iteration = 0; iteration < max_iterations_; ++iteration) {
    bool changed = false;
    for (const std::unique_ptr<Pass>& pass : passes_) {
      PassResult result;
      try {
        result = pass->Run(module);
      } catch (const std::exception& error) {
        result = PassResult::Error(error.what());
      }
      if (!result.ok()) return PassResult::Error(fmt::format("{}/{}: {}", name_, pass->name(), *result.error));
      if (!result.changed) continue;
      changed = true;
      try {
        Verify(module);
      } catch (const HloError& error) {
        return PassResult::Error(fmt::format("{}/{}: the module no longer verifies: {}", name_, pass->name(),
                                             error.what()));
      }
    }
    changed_any = changed_any || changed;
    if (!until_fixed_point_ || !changed) return PassResult::Changed(changed_any);
  }
  return PassResult::Error(fmt::format("{}: still changing after {} iterations", name_, max_iterations_));
}

}  // namespace systole::hlo
