// A compiled model: an HLO module cut into steps that run in order. Device steps are Systole
// programs built with the codegen kernels (dots and convolutions on the MXU, their bias,
// batch-norm scale and activation fused into the accumulator drain; bf16 elementwise ops on
// the vector unit); host steps are single HLO instructions evaluated by the CPU interpreter;
// control steps are while loops and conditionals whose called computations, cut into steps the
// same way, have device work: the host runs the loop, the device the dots of its body each
// iteration. Values flow between steps on the host as hlo::Literal; each device step says how
// to turn its operands into device tensors (a transpose to the kernel's layout, e.g. NCHW ->
// NHWC, and a rounding to the device element type) and how to turn its output back.
// docs/COMPILER.md draws the pipeline.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/image/program.hpp"
#include "toolchain/codegen/program_builder.hpp"
#include "toolchain/hlo/ir.hpp"

namespace systole::compiler {

// One per-channel term of a fused epilogue: value = value + vector or value = value * vector,
// `vector` being the C elements of the HLO value `operand` (a per-channel vector that was
// broadcast along the output feature dimension).
struct EpilogueTerm {
  enum class Op : std::uint8_t { kAdd, kMultiply } op = Op::kAdd;
  std::string operand;
};

// How one device tensor is made from (input) or turned into (output) an HLO value:
// device tensor = reshape(transpose(value, permutation), shape), elements of `dtype`.
struct Binding {
  enum class Kind : std::uint8_t {
    kValue,    // the value itself
    kWeights,  // the weights, each output channel (last device dim) scaled by the epilogue
    kBias,     // the epilogue's folded bias: one element per output channel
    kState,    // a state tensor the device keeps between runs (StateTensor): bound, never written
  } kind = Kind::kValue;
  std::string value;                      // HLO instruction name (kBias: unused; kState: the StateTensor's name)
  std::vector<std::int64_t> permutation;  // device dim i is value dim permutation[i]
  image::DataType dtype = image::DataType::kBf16;
  std::vector<std::uint64_t> shape;       // the device tensor's shape
  // Column blocking (weights, codegen/kernels.hpp): when non-zero, the transposed value
  // [outer..., K..., N] is stored as [outer..., ceil(N / block_columns), K..., block_columns],
  // block_outer leading dimensions kept outside, the padding columns zero. Each weight tile
  // is then one contiguous DMA burst.
  std::uint64_t block_columns = 0;
  std::size_t block_outer = 0;
  // Value dimensions read back to front, before the permutation (kValue; empty: none): a
  // convolution's weights as the input gradient's convolution reads them, in a state tensor
  // (place_state.cpp; model files do not store models with state tensors, so neither this).
  std::vector<std::int64_t> reversed = {};
};

// The elements of `data` (a value transposed by `binding.permutation`, dims `dims`) in the
// binding's column-blocked order; `data` itself when the binding is not blocked.
std::vector<double> BlockColumns(const Binding& binding, std::vector<double> data,
                                 const std::vector<std::uint64_t>& dims);
// The inverse, for outputs: device elements in blocked order back to the transposed value.
std::vector<double> UnblockColumns(const Binding& binding, std::vector<double> data,
                                   const std::vector<std::uint64_t>& dims);

// Static cycle estimate of a device step (ProgramBuilder::Estimates, the model's timing).
struct StepEstimate {
  std::uint64_t cycles = 0, mxu_busy = 0, macs = 0;
  // Per unit (isa::Unit order), where the golden model's timing spent the cycles: from the
  // compiler only (model files do not store it; a loaded model has zeros here).
  std::array<codegen::CycleEstimate::UnitStalls, isa::kNumUnits> units{};
};

struct DeviceStep {
  std::string kernel;                // "conv 7x7/2 224x224x3 -> 64", for listings
  std::vector<std::string> covers;   // the HLO instructions it computes, in order
  image::Program program;
  std::vector<Binding> inputs;       // parallel to program.inputs
  Binding output;                    // program.outputs[0] -> value `covers.back()`
  std::vector<EpilogueTerm> epilogue;  // folded into kWeights / kBias inputs at run time
  StepEstimate estimate;
  // An update step (place_state.cpp) reads nothing back: `output.value` is empty, and these HLO
  // values (new parameters and optimizer state, outputs of the entry's root) stay in its kState
  // tensors. The host sees placeholders unless it reads the state back (runtime/device_state.hpp).
  std::vector<std::string> resident_outputs = {};
};

// A tensor of training state that lives in device memory across runs: an entry parameter
// (`layout.value`) laid out as `layout` says (permutation, element type, column blocking), as
// a device step's input binding of that parameter would write it. One parameter may have
// several: its fp32 value and momentum in each weight layout its dots read, and the element-type
// copy those dots load.
struct StateTensor {
  std::string name;          // unique: "params_0_.1 fp32 [1,0]"
  Binding layout;            // kind kValue; value: the entry parameter whose value it holds
  // The HLO value (an entry root operand) that replaces the parameter after a run: the step's
  // new value of the parameter, read back from this tensor when the host needs it. Empty for
  // element-type copies (not exact).
  std::string output;
};

// What a host step does (host_work.cpp). kParameters: arithmetic on the model's parameters
// and constants alone whose result reaches device steps only as weights or drain vectors
// (batch norm's scale and shift); the constant folding computes it at compile time when the
// parameters are constants. kCompute: everything else that computes — the work a device
// should do, counted as `host_compute_steps`.
enum class HostWork : std::uint8_t { kValue, kDataMovement, kParameters, kCompute };
std::string_view HostWorkName(HostWork work);
// Opcodes that only move or re-type data (reshape, broadcast, transpose, tuple, convert, …).
bool MovesDataOnly(hlo::Opcode opcode);
// Parameters, constants and iotas.
bool ProducesValue(hlo::Opcode opcode);

struct Step;

// A computation that a control-flow instruction calls (a while's condition or body, a
// conditional's branch), cut into steps as an entry computation is: its parameter is what the
// host hands in each time it runs, its root's value what it hands back.
struct Region {
  std::string computation;  // the called computation's name
  std::string role;         // "condition", "body", "branch 0", …: for listings
  std::vector<Step> steps;
};

struct Step {
  // kControl: a while or conditional whose called computations have device work. The host
  // runs the control itself — the condition's value, the branch index, the tuple it carries —
  // and each time a computation is called, that region's steps in order; a control-flow
  // instruction whose computations have no device work is a plain host step instead.
  enum class Kind : std::uint8_t { kHost, kDevice, kControl } kind = Kind::kHost;
  std::string instruction;  // host, control: the instruction it evaluates
  std::string reason;       // host: why it is not on the device ("" for plain data movement)
  std::shared_ptr<const DeviceStep> device;  // device steps only
  HostWork work = HostWork::kCompute;        // host steps only: set by ClassifyHostSteps
  std::vector<Region> regions = {};          // control steps only: one per called computation, in order
};

// One line of a placement listing, in execution order: a step, or the start of one region of
// the control step above it, whose steps follow one level deeper.
struct PlacementRow {
  const Step* step = nullptr;                   // nullptr for a region's start
  const Region* region = nullptr;               // a region's start only
  const hlo::Computation* computation = nullptr;  // the step's computation; a start: the region's
  std::size_t depth = 0;                        // 0: the entry's steps
};

// A control step's note for listings: what the host does with the loop or conditional.
std::string ControlStepNote(const Step& step, const hlo::Instruction& instruction);
// A host step's work and reason for listings: "compute: no device kernel", or the reason alone
// where it names the work already ("data movement", "parameters only: …").
std::string HostStepNote(const Step& step);

struct CompiledModel {
  std::string config;        // configuration name
  std::string hlo_text;      // the source, re-parsed when a model is loaded
  std::string source_name;   // for messages
  std::shared_ptr<hlo::Module> module;  // after the front-end passes
  std::vector<Step> steps;
  // Training state kept in device memory (CompileOptions::device_state): empty otherwise.
  std::vector<StateTensor> state_tensors;

  // Every step and region start, nested ones included, in execution order (depth first): the
  // order in which SaveModel numbers the device steps' programs.
  std::vector<PlacementRow> PlacementRows() const;
  // Calls `visit(step, computation, depth)` for every step of PlacementRows().
  void ForEachStep(const std::function<void(const Step&, const hlo::Computation&, std::size_t)>& visit) const;
  // The device steps in that order, each once: a loop's body counts once whatever its number
  // of iterations (not known at compile time).
  std::vector<const DeviceStep*> DeviceSteps() const;
  // Summed over DeviceSteps(): one pass through every loop body and every branch.
  StepEstimate TotalEstimate() const;
  std::size_t DeviceStepCount() const;
  // Host steps of `work`, nested ones included.
  std::size_t HostStepCount(HostWork work) const;
  // Whether any step is a control step (a loop or conditional with device work).
  bool HasControlSteps() const;
  // Bytes of the tensors the device steps read and write in device memory (each step's inputs
  // and outputs; weights included, instructions not): what fusion saves by keeping
  // intermediates in the unified buffer and accumulators. DMA re-reads are not counted.
  std::uint64_t DeviceTensorBytes() const;
};

// Sets `work` of every host step of `model`, nested ones included (Compile and LoadModel call
// it).
void ClassifyHostSteps(CompiledModel& model);

struct CompileOptions {
  bool fuse = true;  // fuse bias / batch norm / activations into the drain
  // Training steps: keep parameters and optimizer state in device memory, updated there by
  // ACCVEC where the update is one the compiler recognises (place_state.cpp).
  bool device_state = false;
  // Called before each device step is built ("step 3/54: conv ..."); may be empty.
  std::function<void(const std::string&)> progress;
};

// The front-end passes every compile and load runs: inline calls, dead-code elimination,
// constant folding, then verification. Deterministic, so names are stable between the two.
std::shared_ptr<hlo::Module> PrepareModule(const std::string& hlo_text, const std::string& source_name);

// Compiles HLO text for `config`. Throws std::runtime_error with a clear message for a model
// the configuration cannot run at all (float dots on an int8 configuration).
CompiledModel Compile(const std::string& hlo_text, const std::string& source_name,
                      const Config& config, const CompileOptions& options = {});

}  // namespace systole::compiler
