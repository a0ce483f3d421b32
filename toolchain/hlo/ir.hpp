// The HLO IR: a Module owns Computations, a Computation owns Instructions, an Instruction
// points at its operands and at the computations it calls. Attributes the front end
// understands are stored in typed form; the rest (metadata, backend_config, sharding, …) are
// dropped by the parser.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolchain/hlo/error.hpp"
#include "toolchain/hlo/literal.hpp"
#include "toolchain/hlo/shape.hpp"

namespace systole::hlo {

// X(enumerator, HLO text name)
#define SYSTOLE_HLO_OPCODES(X)                  \
  X(kParameter, "parameter")                    \
  X(kConstant, "constant")                      \
  X(kIota, "iota")                              \
  /* elementwise unary */                       \
  X(kAbs, "abs")                                \
  X(kCeil, "ceil")                              \
  X(kConvert, "convert")                        \
  X(kCopy, "copy")                              \
  X(kCosine, "cosine")                          \
  X(kErf, "erf")                                \
  X(kExp, "exponential")                        \
  X(kExpm1, "exponential-minus-one")            \
  X(kFloor, "floor")                            \
  X(kIsFinite, "is-finite")                     \
  X(kLog, "log")                                \
  X(kLog1p, "log-plus-one")                     \
  X(kLogistic, "logistic")                      \
  X(kNegate, "negate")                          \
  X(kNot, "not")                                \
  X(kReducePrecision, "reduce-precision")       \
  X(kRoundNearestAfz, "round-nearest-afz")      \
  X(kRoundNearestEven, "round-nearest-even")    \
  X(kRsqrt, "rsqrt")                            \
  X(kSign, "sign")                              \
  X(kSine, "sine")                              \
  X(kSqrt, "sqrt")                              \
  X(kTanh, "tanh")                              \
  /* elementwise binary */                      \
  X(kAdd, "add")                                \
  X(kAnd, "and")                                \
  X(kAtan2, "atan2")                            \
  X(kCompare, "compare")                        \
  X(kDivide, "divide")                          \
  X(kMaximum, "maximum")                        \
  X(kMinimum, "minimum")                        \
  X(kMultiply, "multiply")                      \
  X(kOr, "or")                                  \
  X(kPower, "power")                            \
  X(kRemainder, "remainder")                    \
  X(kSubtract, "subtract")                      \
  X(kXor, "xor")                                \
  /* elementwise ternary */                     \
  X(kClamp, "clamp")                            \
  X(kSelect, "select")                          \
  /* shape and data movement */                 \
  X(kBitcast, "bitcast")                        \
  X(kBroadcast, "broadcast")                    \
  X(kConcatenate, "concatenate")                \
  X(kDynamicSlice, "dynamic-slice")             \
  X(kDynamicUpdateSlice, "dynamic-update-slice") \
  X(kGather, "gather")                          \
  X(kGetTupleElement, "get-tuple-element")      \
  X(kPad, "pad")                                \
  X(kReshape, "reshape")                        \
  X(kReverse, "reverse")                        \
  X(kSlice, "slice")                            \
  X(kTranspose, "transpose")                    \
  X(kTuple, "tuple")                            \
  /* compute */                                 \
  X(kCall, "call")                              \
  X(kFusion, "fusion")                          \
  X(kConvolution, "convolution")                \
  X(kDot, "dot")                                \
  X(kReduce, "reduce")                          \
  X(kScatter, "scatter")                        \
  X(kSort, "sort")                              \
  X(kWhile, "while")                            \
  X(kConditional, "conditional")                \
  X(kReduceWindow, "reduce-window")            \
  X(kSelectAndScatter, "select-and-scatter")    \
  /* batch normalization over every dimension but feature_index */ \
  X(kBatchNormTraining, "batch-norm-training")  \
  X(kBatchNormInference, "batch-norm-inference") \
  X(kBatchNormGrad, "batch-norm-grad")

enum class Opcode : std::uint8_t {
#define SYSTOLE_HLO_ENUM(e, n) e,
  SYSTOLE_HLO_OPCODES(SYSTOLE_HLO_ENUM)
#undef SYSTOLE_HLO_ENUM
};

std::string_view OpcodeName(Opcode opcode);
std::optional<Opcode> OpcodeFromName(std::string_view name);
bool IsElementwiseUnary(Opcode opcode);
bool IsElementwiseBinary(Opcode opcode);

enum class ComparisonDirection : std::uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
std::string_view ComparisonDirectionName(ComparisonDirection direction);  // "EQ", …

// One dimension of `window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1}`.
struct WindowDim {
  std::int64_t size = 1;
  std::int64_t stride = 1;
  std::int64_t pad_low = 0;
  std::int64_t pad_high = 0;
  std::int64_t lhs_dilation = 1;  // base dilation
  std::int64_t rhs_dilation = 1;  // window dilation
  bool reversal = false;
};

// `dim_labels=b01f_01io->b01f`: which dimension of each operand plays which role. Spatial
// dimensions are listed in the order of their digits (0, 1, …).
struct ConvDimensionNumbers {
  std::int64_t input_batch = 0;
  std::int64_t input_feature = 1;
  std::vector<std::int64_t> input_spatial;
  std::int64_t kernel_input_feature = 0;
  std::int64_t kernel_output_feature = 1;
  std::vector<std::int64_t> kernel_spatial;
  std::int64_t output_batch = 0;
  std::int64_t output_feature = 1;
  std::vector<std::int64_t> output_spatial;
};

struct DotDimensionNumbers {
  std::vector<std::int64_t> lhs_batch;
  std::vector<std::int64_t> lhs_contracting;
  std::vector<std::int64_t> rhs_batch;
  std::vector<std::int64_t> rhs_contracting;
};

// gather's `offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1,
// slice_sizes={1,4}`, and scatter's attributes under gather's names (scatter's own name after
// each field): the two operations are mirror images, one reading windows of the operand at
// indexed positions, the other combining update windows into it. The batching dimensions are
// what XLA prints for vmapped gathers and scatters (operand dimension k is indexed by the batch
// position of start-indices dimension k).
struct GatherScatterDims {
  std::vector<std::int64_t> offset_dims;                  // update_window_dims
  std::vector<std::int64_t> collapsed_slice_dims;         // inserted_window_dims
  std::vector<std::int64_t> start_index_map;              // scatter_dims_to_operand_dims
  std::vector<std::int64_t> operand_batching_dims;        // input_batching_dims
  std::vector<std::int64_t> start_indices_batching_dims;  // scatter_indices_batching_dims
  std::int64_t index_vector_dim = -1;                     // -1: not printed (the verifier refuses it)
  std::vector<std::int64_t> slice_sizes;                  // gather only
};

struct SliceDim {  // `[start:limit:stride]`
  std::int64_t start = 0;
  std::int64_t limit = 0;
  std::int64_t stride = 1;
};

struct PadDim {  // `low_high_interior`
  std::int64_t low = 0;
  std::int64_t high = 0;
  std::int64_t interior = 0;
};

class Computation;

// What `metadata={…}` says about where an instruction came from: JAX's op name and either a
// source file and line (older dumps) or an index into the module's stack-frame tables (JAX
// 0.4.30 and later: StackFrames after the HloModule line).
struct OpMetadata {
  std::string op_name;       // "jit(mlp)/dot_general"
  std::string source_file;   // source_file=
  std::int64_t source_line = 0;
  std::int64_t stack_frame_id = 0;  // 1-based into StackFrameIndex::frames; 0: none
};

// The tables recent XLA prints after the HloModule line (FileNames, FunctionNames,
// FileLocations, StackFrames): every id is 1-based, 0 meaning none, as XLA numbers them.
struct StackFrameIndex {
  struct FileLocation {
    std::int64_t file_name_id = 0, function_name_id = 0;
    std::int64_t line = 0, end_line = 0, column = 0, end_column = 0;
  };
  struct Frame {
    std::int64_t file_location_id = 0;
    std::int64_t parent_frame_id = 0;  // as printed; not interpreted
  };
  std::vector<std::string> file_names;
  std::vector<std::string> function_names;
  std::vector<FileLocation> file_locations;
  std::vector<Frame> frames;
};

// "mlp.py:12:8 (mlp)": where `metadata` says an instruction was traced from, through its stack
// frame in `index` or its source_file/source_line; "" when it says neither.
std::string SourceLine(const StackFrameIndex& index, const OpMetadata& metadata);

class Instruction {
 public:
  std::string name;  // without the leading '%'
  Opcode opcode = Opcode::kParameter;
  Shape shape;
  std::vector<Instruction*> operands;
  // to_apply= / calls=; while: {condition, body}; conditional: {true, false} or the
  // branch_computations in order; select-and-scatter: {select, scatter}.
  std::vector<Computation*> called;
  SourceLocation location;            // where the instruction was written, if parsed

  // Typed attributes; which ones are meaningful depends on the opcode.
  std::optional<Literal> literal;  // constant; literal->values is empty when printed `{...}`
  bool literal_elided = false;
  std::int64_t parameter_number = 0;
  std::int64_t tuple_index = 0;       // get-tuple-element index=
  std::int64_t iota_dimension = 0;
  std::int64_t feature_group_count = 1;
  std::int64_t batch_group_count = 1;
  std::int64_t exponent_bits = 8;     // reduce-precision
  std::int64_t mantissa_bits = 23;
  std::vector<std::int64_t> dimensions;  // broadcast, transpose, reduce, concatenate, reverse, sort
  std::vector<std::int64_t> dynamic_slice_sizes;
  std::vector<WindowDim> window;
  ConvDimensionNumbers conv_dims;
  DotDimensionNumbers dot_dims;
  std::vector<SliceDim> slice;
  std::vector<PadDim> padding;
  ComparisonDirection comparison = ComparisonDirection::kEq;
  bool total_order = false;  // compare type=TOTALORDER: -NaN < -inf < … < -0 < +0 < … < inf < NaN
  GatherScatterDims gather_dims;  // gather, scatter
  bool is_stable = false;         // sort
  double epsilon = 0;             // batch-norm-*: added to the variance
  std::int64_t feature_index = 0; // batch-norm-*: the dimension that keeps its own statistics
  OpMetadata metadata;

  // "%name = f32[2] add(%a, %b)" — for messages.
  std::string Describe() const;
};

class Computation {
 public:
  std::string name;
  std::vector<std::unique_ptr<Instruction>> instructions;  // in text order
  Instruction* root = nullptr;
  SourceLocation location;

  // Parameters indexed by parameter number (nullptr where missing: the verifier reports it).
  std::vector<Instruction*> Parameters() const;
  // Instructions reachable from the root, every operand before its users.
  std::vector<Instruction*> PostOrder() const;
  Instruction* Find(std::string_view instruction_name) const;

  // Adds `instruction` before `position` (at the end when nullptr) and returns it.
  Instruction* Insert(std::unique_ptr<Instruction> instruction, const Instruction* position = nullptr);
  // Makes every user of `from` (and the root) use `to` instead.
  void ReplaceAllUses(const Instruction* from, Instruction* to);
  // Removes instructions for which `dead` is true; they must have no remaining users.
  template <typename Predicate>
  void RemoveIf(Predicate dead) {
    std::erase_if(instructions, [&](const std::unique_ptr<Instruction>& i) { return dead(*i); });
  }
  std::string UniqueName(std::string_view base) const;
};

// One entry of the module header's `input_output_alias={ {OUT}: (PARAM, {INDEX}, KIND), … }`:
// output `output_index` (a tuple index path into the entry's result; {} for a non-tuple result)
// may reuse the buffer of entry parameter `parameter` (at `parameter_index` inside it). JAX
// writes one per donated argument (`jax.jit(f, donate_argnums=…)`): a training step's
// parameters and optimizer state, which a runtime can keep where they are between steps.
struct InputOutputAlias {
  std::vector<std::int64_t> output_index;
  std::int64_t parameter = 0;
  std::vector<std::int64_t> parameter_index;
  bool must_alias = false;  // `must-alias` rather than `may-alias`
  SourceLocation location;
};

class Module {
 public:
  std::string name;
  std::vector<InputOutputAlias> input_output_aliases;  // from the header, in text order
  std::vector<std::unique_ptr<Computation>> computations;  // callees before callers
  Computation* entry = nullptr;
  StackFrameIndex stack_frames;

  Computation* Find(std::string_view computation_name) const;
  // The source line the instruction was traced from, "mlp.py:12:8 (mlp)", from its stack
  // frame or its source_file/source_line metadata; "" when the text does not say.
  std::string SourceOf(const Instruction& instruction) const;
  std::size_t InstructionCount() const;
};

}  // namespace systole::hlo
