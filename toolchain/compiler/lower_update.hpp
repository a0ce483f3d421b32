// The update steps of training state in device memory (place_state.cpp): one per layout of a
// parameter, SGD with momentum or Adam on ACCVEC, and the names of the state tensors they bind.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toolchain/compiler/lowering.hpp"
#include "toolchain/compiler/optimizer_match.hpp"
#include "toolchain/compiler/state_scope.hpp"

namespace systole::compiler::detail {

// "params_0_.1 fp32 [0,1]"; with the dimensions a layout reverses, "params_2_.1 weights [0,1,3,2] reversed [0,1]".
std::string StateName(const hlo::Instruction& parameter, std::string_view what, const std::vector<std::int64_t>& permutation,
                      const std::vector<std::int64_t>& reversed = {});
// A bias replicated as a drain starts from it: "params_1_.1 bias [4,32,16]".
std::string ReplicaName(const hlo::Instruction& parameter, const std::vector<std::uint64_t>& shape);

// The update step of a dot's weights in one layout (`permutation` of [K, N]): the gradient dot
// recomputed in that layout, then the update.
DeviceStep LowerUpdate(const Update& u, const std::vector<std::int64_t>& permutation, const StateScope& scope,
                       const Config& config);

// The update step of a parameter whose gradient is an input: a bias (`layout` {0}, `shape`
// [ceil(n/C), 1, C], with its replicas) or convolution weights in one reader's layout.
DeviceStep LowerInputGradientUpdate(const Update& u, const std::vector<std::int64_t>& layout,
                                    const std::vector<std::int64_t>& reversed, const std::vector<std::uint64_t>& shape,
                                    const std::vector<std::vector<std::uint64_t>>& replicas, const StateScope& scope,
                                    const Config& config);

}  // namespace systole::compiler::detail
