#pragma once
// The kernels' check of their arguments, shared so that each kernel's file need not define its own.

#include <stdexcept>
#include <string>
#include <string_view>

namespace systole::codegen {

// Throws std::invalid_argument("codegen: <kernel>: <what>") unless ok.
inline void Require(std::string_view kernel, bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string("codegen: ").append(kernel).append(": ").append(what));
}

}  // namespace systole::codegen
