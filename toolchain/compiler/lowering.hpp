// Internals of Compile(): which instructions form a device step (fusion.cpp) and how a step
// becomes a Systole program (lower_dot_conv.cpp, lower_vector.cpp). Not a public API.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "arch/isa/isa.hpp"
#include "toolchain/compiler/model.hpp"

namespace systole::compiler::detail {

using Users = std::unordered_map<const hlo::Instruction*, std::vector<const hlo::Instruction*>>;

// A dot or convolution and the elementwise instructions fused into its drain.
struct Group {
  const hlo::Instruction* anchor = nullptr;    // the dot / convolution
  // The value bound as the left operand: the anchor's, or the input of a zero `pad` that the
  // convolution's own padding absorbs (JAX pads explicitly before ResNet's first layer).
  const hlo::Instruction* input = nullptr;
  std::array<std::int64_t, 4> extra_padding{};  // top, bottom, left, right (from the pad)
  std::vector<const hlo::Instruction*> chain;  // fused users, in order; the last is the result
  std::vector<EpilogueTerm> epilogue;
  isa::ActFunc func = isa::ActFunc::kNone;
  float lo = 0.0f, hi = 0.0f;  // clamp bounds
  bool narrow_output = false;  // store the element type (bf16) through ACTIVATE, not fp32
  // A residual add in the chain (IsResidualAdd): its other operand is the accumulators'
  // starting tensor, so the add happens in fp32 before the drain (convolutions only).
  const hlo::Instruction* residual = nullptr;
  // The residual is a device step's result stored in the element type (bf16, int8): the
  // starting tensor is written as such and widened into the accumulators by its LOAD (half the
  // bytes of an fp32 copy, the same values). Set by Compile before lowering.
  bool residual_in_element_type = false;
  // int8: the chain ends in a requantization to s8 that ACTIVATE computes (requantize.cpp):
  // r = (acc * multiplier + 2^(shift-1)) >> shift, func (clamp to [int_lo, int_hi]), + zero_point.
  bool requantize = false;
  std::int32_t multiplier = 1;
  std::uint8_t shift = 0;
  std::int8_t zero_point = 0;
  std::int16_t int_lo = 0, int_hi = 0;
  // A requantization that follows the group but cannot be fused exactly: its first
  // instruction and why (the placement listing shows it on the host step).
  const hlo::Instruction* unfused = nullptr;
  std::string unfused_reason;

  const hlo::Instruction* Result() const { return chain.empty() ? anchor : chain.back(); }
};

// Rewrites every convolution the MXU would take but for its input (lhs) dilation into a `pad`
// with interior padding and the same convolution undilated (explicit_dilation.cpp). Compile and
// LoadModel both run it after PrepareModule, so that a model file's step names match.
void MakeInputDilationExplicit(hlo::Module& module, const std::string& source_name);

// Why `anchor` (a dot or convolution) cannot go to the MXU of `config`, or nullopt when it
// can. Throws std::runtime_error for float dots on an int8 configuration: such a model cannot
// be compiled for it at all.
std::optional<std::string> MxuRejection(const hlo::Instruction& anchor, const Config& config,
                                        const std::string& source_name);

// Why the convolution kernel cannot take `conv`'s window (not 2-D, batch groups, window
// reversal, negative padding, and input dilation unless `input_dilation_allowed`), or nullopt.
// MxuRejection's convolution part; MakeInputDilationExplicit asks it with dilation allowed.
std::optional<std::string> ConvolutionKernelRejection(const hlo::Instruction& conv, bool input_dilation_allowed);

// The output feature dimension of a dot / convolution result (nullopt: no single one).
std::optional<std::int64_t> FeatureDimension(const hlo::Instruction& anchor);

// Follows `anchor`'s single-user chain of per-channel adds and multiplies and a final ReLU /
// ReLU6 / clamp, as far as the configuration's drain can compute it.
// A residual add in `claimed` (joined by another group already) is not joined again.
Group PlanGroup(const hlo::Instruction& anchor, const Users& users, const hlo::Instruction* root,
                const Config& config, bool fuse,
                const std::unordered_set<const hlo::Instruction*>& claimed = {});

// Extends an int8 group whose result is s32 with the requantization to s8 that follows it,
// when ACTIVATE computes it bit-exactly; otherwise records why not in `unfused_reason`.
void PlanRequantization(Group& group, const Users& users, const hlo::Instruction* root);

// Every use of the f32 / bf16 value `value` rounds it to bf16 anyway, so a device step may
// store it as bf16 without changing any result: its users are dots / convolutions (the MXU
// rounds their operands), converts to bf16, or data movement, max pools and maximum / minimum
// with a constant (they commute with the monotone rounding) whose own uses are such
// (rounding.cpp) — and, when `fuse`, residual adds, which keep the residual stream in bf16
// (IsResidualAdd). Never true for the root, nor on an int8 configuration.
bool RoundingToBf16IsInvisible(const hlo::Instruction& value, const Users& users, const hlo::Instruction* root,
                               const Config& config, bool fuse);

// A reduce-window computing a max pool that the device's POOL runs exactly: `input` is the
// value the POOL reads (the reduce-window's operand, or the input of a -inf `pad` it absorbs),
// `permutation` takes the value's dims to NHWC, `padding` is top, bottom, left, right.
struct PoolPlan {
  const hlo::Instruction* pool = nullptr;
  const hlo::Instruction* input = nullptr;
  const hlo::Instruction* pad = nullptr;  // the absorbed pad, if any
  std::vector<std::int64_t> permutation;
  std::uint32_t window_h = 1, window_w = 1, stride_h = 1, stride_w = 1;
  std::array<std::uint32_t, 4> padding{};
};
// The plan of a max pool the POOL kernel can compute, or why not (lower_pool.cpp). Whether
// the bf16 POOL is exact for f32 values is the caller's question (compile.cpp).
// `non_negative` tells whether a value is >= 0 everywhere (a ReLU's result): a zero pad of
// such a value is absorbed like a -inf pad.
std::optional<PoolPlan> PlanMaxPool(const hlo::Instruction& pool, const Users& users, const Config& config,
                                    const std::function<bool(const hlo::Instruction&)>& non_negative,
                                    std::string& why_not);
DeviceStep LowerPool(const PoolPlan& plan, const Config& config);

// `instruction` is a constant (or a broadcast of one) whose elements all equal one value.
std::optional<double> UniformConstant(const hlo::Instruction& instruction);

// Builds the Systole program of `group`; throws std::invalid_argument (from the kernels) for
// shapes the kernels reject, which then run on the host.
DeviceStep LowerGroup(const Group& group, const Config& config);

// The bounds [lo, hi] of `user` applied to `value` when it is a maximum / minimum with a
// constant (either operand order) or a clamp with constant bounds; nullopt otherwise.
std::optional<std::pair<double, double>> ClampBounds(const hlo::Instruction& user, const hlo::Instruction& value);
// The drain / VECTOR function of a clamp to [lo, hi]: relu, relu6 or clamp.
isa::ActFunc FunctionOf(double lo, double hi);

// The f32 instructions the vector unit computes at the MXU's DEFAULT precision (bf16 operands
// and result, fp32 inside): arithmetic, transcendentals and reductions of activations with
// constants or per-channel vectors whose results flow into the outputs through such steps,
// dots, convolutions and data movement only (default_precision.cpp). Empty without fusion and
// on int8 configurations.
using DefaultPrecisionOps = std::unordered_set<const hlo::Instruction*>;
DefaultPrecisionOps F32VectorOps(const hlo::Computation& entry, const Users& users, const Config& config, bool fuse);

// An elementwise instruction the vector unit computes: bf16, or f32 in `f32_ops`
// (lower_vector.cpp).
bool RunsOnVectorUnit(const hlo::Instruction& instruction, const Config& config, const DefaultPrecisionOps& f32_ops = {});

// A residual add of a bf16 configuration: an f32 `add` of two activations of one shape, each
// computed by a dot / convolution (through its per-channel drain and clamps) or by another
// residual add. With fusion on it joins the drain of the convolution computing one operand
// (the other is the accumulators' starting tensor, PlanGroup), or else runs on the vector unit
// in bf16 with the ReLU after it as the VECTOR function. Either way its result is rounded to
// bf16, a visible rounding that the ResNet-50 test bounds (docs/COMPILER.md, "Residual adds").
bool IsResidualAdd(const hlo::Instruction& instruction, const Config& config);

// A mask applied as JAX writes it, `select(mask, x, -inf)` (`jnp.where(mask, scores, -inf)`;
// or `select(mask, -inf, x)`), whose mask is a compile-time constant (a causal mask: compares
// of iotas, folded here): the additive bias that computes it, 0 where x is kept and -inf where
// it is masked, in the select's row-major order; `data` is x. Equal to the select for every x
// except -0 (kept as +0), +inf and NaN (masked to NaN instead of -inf). nullopt otherwise.
struct MaskBias {
  const hlo::Instruction* data = nullptr;
  std::vector<bool> masked;
};
std::optional<MaskBias> ConstantMaskOf(const hlo::Instruction& select);

// One vector-unit step: a binary op (or, when `op` is null, an activation of `input`) and the
// maximum / minimum / clamp with constants that follow it, as the VECTOR function. A masking
// select is an add of its constant bias (`mask`).
struct VectorGroup {
  const hlo::Instruction* op = nullptr;
  const hlo::Instruction* input = nullptr;
  std::vector<const hlo::Instruction*> chain;  // the function's instructions; the last is the result
  isa::ActFunc func = isa::ActFunc::kNone;
  std::uint16_t lo_bits = 0, hi_bits = 0;  // bf16
  std::optional<MaskBias> mask;
  // A whole function of `input` matched as one VECTOR math (GELU's tanh or erf form): `chain`
  // holds its instructions, the last the result.
  std::optional<isa::VecMath> math;
  // a / sqrt(b) = a · rsqrt(b), as XLA's algebraic simplifier rewrites it: a sqrt whose every use
  // (through element copies: broadcasts, reshapes, …) is the divisor of a divide on the vector
  // unit stores rsqrt(b) (`stores_rsqrt`), and those divides multiply by it (`divisor_rsqrt` is
  // the sqrt): two roundings to bf16, as the HLO has, instead of four (sqrt = 1 / rsqrt and
  // a · (1 / b)). Both sides run on the device or neither (compile.cpp).
  bool stores_rsqrt = false;
  const hlo::Instruction* divisor_rsqrt = nullptr;

  const hlo::Instruction* Result() const { return chain.empty() ? op : chain.back(); }
  std::vector<const hlo::Instruction*> Reads() const;  // the values the step reads
};
// The sqrt whose values the divisor of `divide` carries through element copies, when that sqrt
// and `divide` compute a / sqrt(b) as a · rsqrt(b) (VectorGroup::divisor_rsqrt); else nullptr.
const hlo::Instruction* DivisorRsqrt(const hlo::Instruction& divide, const Users& users, const hlo::Instruction* root,
                                     const Config& config, const DefaultPrecisionOps& f32_ops = {});

// The vector step starting at `i` (bf16 configurations, bf16 values), or nullopt; without
// `fuse`, one binary op per step and no function.
std::optional<VectorGroup> PlanVector(const hlo::Instruction& i, const Users& users, const hlo::Instruction* root,
                                      const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops = {});
DeviceStep LowerVector(const VectorGroup& group, const Config& config);
// `i` is a constant (or a broadcast of one) equal to `expected` after rounding to bf16 (within
// 1/256: a bf16 program writes 0.04468 for 0.044715) (lower_gelu.cpp).
bool IsConstant(const hlo::Instruction& i, double expected);
// `op` is `opcode`(v, constant c) in either order: v, else nullptr.
const hlo::Instruction* WithConstant(const hlo::Instruction* op, hlo::Opcode opcode, double c);
// GELU in the tanh form as JAX writes it (`jax.nn.gelu(x, approximate=True)`: x · 0.5 · (1 +
// tanh(√(2/π) · (x + 0.044715 · x³))), operands in either order, constants in the element
// type) ending at `result`: one VECTOR math=gelu_tanh of x, when every intermediate is read
// only by the next (lower_gelu.cpp). bf16, or f32 in `f32_ops`; nullopt otherwise.
std::optional<VectorGroup> PlanGeluTanh(const hlo::Instruction& result, const Users& users, const hlo::Instruction* root,
                                        const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops);

// GELU in the erf form as JAX writes it (`jax.nn.gelu(x, approximate=False)`: (x · 0.5) ·
// erfc((−x) · (1/√2)) with XLA's expansion of erfc) ending at `y`: x, and the instructions from
// −x to y (the last) when nothing else reads them (lower_gelu_erf.cpp recognises the expansion by the
// values it computes).
struct GeluErfMatch {
  const hlo::Instruction* x = nullptr;
  std::vector<const hlo::Instruction*> chain;
};
std::optional<GeluErfMatch> MatchGeluErf(const hlo::Instruction& y, const Users& users, const hlo::Instruction* root);
// That GELU as one VECTOR math=gelu_erf of x: bf16, or f32 in `f32_ops`; nullopt otherwise.
std::optional<VectorGroup> PlanGeluErf(const hlo::Instruction& y, const Users& users, const hlo::Instruction* root,
                                       const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops);

// A reduction over contiguous dimensions that REDUCE computes (lower_reduce.cpp): the reduce of
// `input` (bf16, through the reduce's convert to f32, or f32 in `f32_ops`) and the reshapes,
// constant scale and convert to bf16 after it. The input is [outer, columns, inner] in row-major
// order: the trailing dimensions (inner = 1, REDUCE along rows) or middle ones (a global pool
// over an image's pixels: REDUCE across rows).
struct RowReducePlan {
  const hlo::Instruction* reduce = nullptr;
  const hlo::Instruction* input = nullptr;
  std::vector<const hlo::Instruction*> chain;  // fused users, in order; the last is the result
  bool max = false;
  std::uint64_t columns = 0;     // elements reduced per result
  std::uint64_t inner = 1;       // elements after the reduced dimensions
  std::uint32_t scale_bits = 0;  // fp32; 0 means 1

  const hlo::Instruction* Result() const { return chain.empty() ? reduce : chain.back(); }
};
// The plan of a reduction REDUCE computes, or nullopt (with `why_not` when it is a reduction
// the device could not take).
std::optional<RowReducePlan> PlanRowReduce(const hlo::Instruction& reduce, const Users& users,
                                           const hlo::Instruction* root, const Config& config, bool fuse,
                                           const DefaultPrecisionOps& f32_ops, std::string& why_not);
DeviceStep LowerRowReduce(const RowReducePlan& plan, const Config& config);

// Softmax along the last dimension as JAX writes it (max, subtract, exp, sum, divide, with the
// broadcasts and converts between them) ending at the divide `y`: one device step that keeps
// every intermediate in the unified buffer (lower_softmax.cpp, codegen Softmax). bf16, or f32
// in `f32_ops`; nullopt otherwise, and when a row does not fit the unified buffer twice.
struct SoftmaxPlan {
  const hlo::Instruction* input = nullptr;   // x
  const hlo::Instruction* result = nullptr;  // y, the divide
  std::vector<const hlo::Instruction*> covers;  // every instruction from the reductions to y
  std::uint64_t rows = 0, n = 0;             // x as [rows, n]: n is its last dimension
  bool round_difference = false;             // a bf16 subtract: x − max rounded before exp
};
std::optional<SoftmaxPlan> PlanSoftmax(const hlo::Instruction& y, const Users& users, const hlo::Instruction* root,
                                       const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops);
DeviceStep LowerSoftmax(const SoftmaxPlan& plan, const Config& config);

// Layer norm along the last dimension as JAX writes it ((x − mean) · rsqrt(var + ε) or
// (x − mean) / sqrt(var + ε), then optionally · γ and + β) matched from its normalising multiply
// or divide: one device step that keeps every intermediate in the unified buffer
// (lower_layer_norm.cpp, codegen LayerNorm), bit-identical to the step-by-step lowering.
struct LayerNormPlan {
  const hlo::Instruction* input = nullptr;   // x
  const hlo::Instruction* gamma = nullptr;   // [n] or null
  const hlo::Instruction* beta = nullptr;    // [n] or null
  const hlo::Instruction* result = nullptr;  // the last instruction covered
  std::vector<const hlo::Instruction*> covers;
  std::uint64_t rows = 0, n = 0;
  std::uint32_t inverse_n_bits = 0;  // fp32: the means' scale
  std::uint16_t epsilon_bits = 0;    // bf16
};
std::optional<LayerNormPlan> PlanLayerNorm(const hlo::Instruction& norm, const Users& users, const hlo::Instruction* root,
                                           const Config& config, bool fuse, const DefaultPrecisionOps& f32_ops);
DeviceStep LowerLayerNorm(const LayerNormPlan& plan, const Config& config);

// Cuts `computation` into steps — device steps for what the device runs, host steps for the
// rest, control steps for loops and conditionals with device work — as Compile does for the
// entry (compile.cpp). `built` counts the device steps built so far (progress messages).
std::vector<Step> PartitionComputation(const hlo::Computation& computation, const Config& config,
                                       const CompileOptions& options, const std::string& source_name,
                                       std::size_t& built);

// A while or conditional (control_flow.cpp): each computation it calls partitioned as if it
// were an entry, in a control step, or — when none of them has device work — a host step that
// the interpreter runs whole, as before.
Step PlaceControlFlow(const hlo::Instruction& control, const Config& config, const CompileOptions& options,
                      const std::string& source_name, std::size_t& built);

// Training steps with CompileOptions::device_state: the SGD-with-momentum updates of donated
// parameters that only device dots read move to update steps on the device, the parameters and
// momenta to `model.state_tensors` (place_state.cpp). Leaves the model as it is when nothing
// matches, and on int8 configurations.
void PlaceStateUpdates(CompiledModel& model, const Config& config);

// The last part of every Lower*: the builder's program, tagged with its configuration, and its
// estimate (the whole program's, from the golden model's timing).
inline void FinishStep(DeviceStep& step, codegen::ProgramBuilder& builder, const Config& config) {
  step.program = builder.Finish();
  step.program.config = config.name;
  const codegen::CycleEstimate& total = builder.Estimates().back();
  step.estimate = {total.cycles, total.mxu_busy, total.macs, total.units};
}

}  // namespace systole::compiler::detail
