// XLA-style passes: each has a name() and a Run(module) that reports "changed, or an error";
// a Pipeline runs them in order (optionally until none changes anything) and re-verifies the
// module after every pass that changed it, so a broken pass is caught where it broke things.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolchain/hlo/ir.hpp"

namespace systole::hlo {

struct PassResult {
  bool changed = false;
  std::optional<std::string> error;  // set: the pass failed and the module may be half-rewritten

  static PassResult Unchanged() { return {false, std::nullopt}; }
  static PassResult Changed(bool changed = true) { return {changed, std::nullopt}; }
  static PassResult Error(std::string message) { return {false, std::move(message)}; }
  bool ok() const { return !error.has_value(); }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual PassResult Run(Module& module) = 0;
};

class Pipeline : public Pass {
 public:
  explicit Pipeline(std::string name, bool until_fixed_point = false, int max_iterations = 25)
      : name_(std::move(name)), until_fixed_point_(until_fixed_point), max_iterations_(max_iterations) {}

  template <typename P, typename... Args>
  P& Add(Args&&... args) {
    passes_.push_back(std::make_unique<P>(std::forward<Args>(args)...));
    return static_cast<P&>(*passes_.back());
  }
  void Add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }

  std::string_view name() const override { return name_; }
  // Errors name the pass: "pipeline/pass: message" (a verifier failure after a pass included).
  PassResult Run(Module& module) override;

 private:
  std::string name_;
  bool until_fixed_point_;
  int max_iterations_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

// Replaces every `call` and `fusion` by a copy of the called computation's body (nested ones
// included): the back end makes its own fusion decisions.
class InlineCalls : public Pass {
 public:
  std::string_view name() const override { return "inline-calls"; }
  PassResult Run(Module& module) override;
};

// Removes instructions the root does not depend on (parameters stay: they are the interface)
// and computations the entry no longer calls.
class DeadCodeElimination : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  PassResult Run(Module& module) override;
};

// Folds instructions whose operands are all constants into a constant when the result has at
// most `max_elements` elements (scalar arithmetic, small shapes), and an elementwise op whose
// operands are scalar constants or broadcasts of them into a broadcast of one folded scalar.
// Broadcasts themselves are never expanded into large constants.
class ConstantFolding : public Pass {
 public:
  explicit ConstantFolding(std::int64_t max_elements = 1024) : max_elements_(max_elements) {}
  std::string_view name() const override { return "constant-folding"; }
  PassResult Run(Module& module) override;

 private:
  std::int64_t max_elements_;
};

}  // namespace systole::hlo
