// Harness: an RAII wrapper around one Verilated model, the way every RTL test, benchmark and
// the `rtl` link drive the hardware.
//
//   systole::rtl::Harness<Vmxu_tiny> sim("mxu");   // model constructed, clk low, inputs zero
//   sim.Reset();                                    // rst high for a few edges, then low
//   sim->cmd_valid = 1;                             // drive inputs through operator->
//   sim.Eval();                                     // settle combinational outputs (ready, …)
//   sim.Tick();                                     // one rising edge; registers update
//   sim.WaitFor([&] { return sim->done; }, 1000, "matmul done");   // throws on timeout
//
// Every top-level module has a `clk` input and, unless it is pure storage, a synchronous
// active-high `rst` input. A tick
// is a full clock period: the rising edge, then the falling edge, two time units. Inputs set
// between ticks are sampled at the next rising edge, as a testbench clocking block would.
//
// Every variable starts as a random value from `seed`, top-level inputs included (the models are
// built with --x-initial unique): drive every input before Reset(), as a real testbench must.
//
// Tracing: pass a path in HarnessOptions (or call StartTrace) and every edge is dumped to an
// FST file that GTKWave or Surfer opens. Random initial values make a missing reset show up as
// a test that depends on the seed rather than one that passes by luck.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace systole::rtl {

// A wait ran out of cycles. The message names the harness, the cycle and what was awaited.
class TimeoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HarnessOptions {
  std::filesystem::path trace_path;  // empty: no waveform
  std::uint64_t seed = 1;            // seeds the randomised initial X values
};

template <class Model>
class Harness {
  // Pure storage blocks (systole_row_ram) have no reset; Reset() then only clocks.
  static constexpr bool kHasReset = requires(Model& m) { m.rst; };

 public:
  explicit Harness(std::string name, const HarnessOptions& options = {})
      : name_(std::move(name)), context_(std::make_unique<VerilatedContext>()) {
    context_->randReset(2);  // X → random values, from the seed below
    context_->randSeed(static_cast<int>(options.seed & 0x7fffffff));
    context_->traceEverOn(true);
    model_ = std::make_unique<Model>(context_.get(), name_.c_str());
    model_->clk = 0;
    if constexpr (kHasReset) model_->rst = 0;
    model_->eval();
    if (!options.trace_path.empty()) StartTrace(options.trace_path);
  }
  ~Harness() {
    model_->final();
    StopTrace();
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  Model* operator->() { return model_.get(); }
  Model& dut() { return *model_; }
  const std::string& name() const { return name_; }
  // Rising edges since construction.
  std::uint64_t Cycle() const { return cycle_; }

  // Settles combinational logic after inputs changed, without a clock edge.
  void Eval() {
    model_->eval();
    low_evaluated_ = true;
  }

  // `cycles` full clock periods.
  //
  // The falling edge is evaluated only while tracing (for the waveform's second sample). No
  // block uses the falling edge or reads `clk` as data, so after the rising edge's evaluation
  // every signal has its value for the rest of the period, and evaluating again with clk low
  // would only run the input-combinational region (Verilator 5 runs it on every eval(), changed
  // inputs or not) for nothing; at three evaluations a cycle that region took 12 % of the
  // small-int8 core's samples and 28 % of tiny's (perf, rtl_core_bench --speed-only).
  // Verilator must still see clk low once between two rising edges (it finds an edge by
  // comparing clk with its value at the previous eval()), so a Tick that follows a Tick with no
  // evaluation in between evaluates clk low first, with the inputs as they are now — which is
  // what the rising edge's evaluation starts with anyway, so every register sees the same values.
  void Tick(std::uint64_t cycles = 1) {
    for (std::uint64_t i = 0; i < cycles; ++i) {
      if (!low_evaluated_) model_->eval();
      model_->clk = 1;
      model_->eval();
      Dump();
      model_->clk = 0;
      if (trace_) {
        model_->eval();
        Dump();
      } else {
        ++time_;
      }
      low_evaluated_ = trace_ != nullptr;
      ++cycle_;
    }
  }

  // Says that the model has been evaluated (with clk low) since the last Tick, by code that holds
  // the model itself (a memory backend's BeforeEdge): the next Tick need not evaluate clk low.
  void Evaluated() { low_evaluated_ = true; }

  // Holds rst high for `cycles` rising edges, then releases it.
  void Reset(std::uint64_t cycles = 4) {
    if constexpr (kHasReset) model_->rst = 1;
    Tick(cycles);
    if constexpr (kHasReset) model_->rst = 0;
    Eval();
  }

  // Ticks until `done()` is true (checked before each edge) or `max_cycles` edges have passed.
  // Returns whether `done()` became true.
  template <class Predicate>
  bool RunUntil(Predicate done, std::uint64_t max_cycles) {
    for (std::uint64_t i = 0; i < max_cycles; ++i) {
      Eval();
      if (done()) return true;
      Tick();
    }
    Eval();
    return done();
  }

  // RunUntil, throwing TimeoutError("mxu: cycle 1234: no `matmul done` within 1000 cycles").
  template <class Predicate>
  void WaitFor(Predicate done, std::uint64_t max_cycles, std::string_view what) {
    if (!RunUntil(done, max_cycles)) {
      throw TimeoutError(name_ + ": cycle " + std::to_string(cycle_) + ": no `" +
                         std::string(what) + "` within " + std::to_string(max_cycles) +
                         " cycles");
    }
  }

  void StartTrace(const std::filesystem::path& path) {
    StopTrace();
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    trace_ = std::make_unique<VerilatedFstC>();
    model_->trace(trace_.get(), 99);
    trace_->open(path.c_str());
    trace_path_ = path;
  }
  void StopTrace() {
    if (trace_) trace_->close();
    trace_.reset();
  }
  bool Tracing() const { return trace_ != nullptr; }
  const std::filesystem::path& TracePath() const { return trace_path_; }

 private:
  void Dump() {
    if (trace_) trace_->dump(time_);
    ++time_;
  }

  std::string name_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<VerilatedFstC> trace_;
  std::filesystem::path trace_path_;
  std::uint64_t cycle_ = 0;
  std::uint64_t time_ = 0;
  bool low_evaluated_ = true;  // eval() has run with clk low since the last rising edge
};

}  // namespace systole::rtl
