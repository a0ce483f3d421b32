// The instruction table: every opcode's fields and their bit positions. This is the definition
// of the encoding; everything else (encoder, decoder, assembler, disassembler, RTL header, docs)
// is derived from it.
#include "arch/isa/isa.hpp"

namespace systole::isa {
namespace {

using K = FieldKind;
constexpr std::uint64_t kMax16 = 0xFFFF;

constexpr std::array<std::string_view, 2> kMemNames = {"ub", "acc"};
constexpr std::array<std::string_view, 4> kFuncNames = {"none", "relu", "relu6", "clamp"};
constexpr std::array<std::string_view, 6> kVecOpNames = {"add", "sub", "mul", "max", "min", "pass"};
constexpr std::array<std::string_view, kNumVecMath> kVecMathNames = {
    "none", "exp", "recip", "rsqrt", "tanh", "sigmoid", "gelu_tanh", "gelu_erf", "log"};
constexpr std::array<std::string_view, 7> kAccOpNames = {"add", "sub", "mul", "max", "min", "div", "sqrt"};
constexpr std::array<std::string_view, 2> kReduceOverNames = {"elems", "rows"};
constexpr std::array<std::string_view, 2> kPoolOpNames = {"max", "sum"};

// clang-format off
// LOAD and STORE share one layout: a 2-D strided copy of `rows` x `elems` elements.
constexpr std::array kDmaFields = std::to_array<FieldSpec>({
  {Field::kMem,    "mem",    18,  1, K::kEnum,     0, 1, kMemNames, "on-chip side: ub (unified buffer) or acc (accumulators)"},
  {Field::kDram,   "dram",   32, 48, K::kUnsigned, 0, ~0ull, {}, "device byte address of element (0,0); a multiple of the element size"},
  {Field::kStride, "stride", 80, 32, K::kUnsigned, 0, ~0ull, {}, "device bytes between rows; a multiple of the element size"},
  {Field::kRow,    "row",   112, 24, K::kUnsigned, 0, ~0ull, {}, "first buffer row; row i goes to row+i"},
  {Field::kCol,    "col",   136, 16, K::kUnsigned, 0, kMax16, {}, "first element within each buffer row"},
  {Field::kRows,   "rows",  152, 16, K::kUnsigned, 1, kMax16, {}, "rows to copy (>= 1)"},
  {Field::kElems,  "elems", 168, 16, K::kUnsigned, 1, kMax16, {}, "elements per row (>= 1; col+elems <= row width)"},
});

// LOAD adds `widen`: accumulator rows loaded from elements of the array's own type (a bf16
// tensor into fp32 accumulators: half the bytes of an fp32 copy of the same values).
constexpr std::array kLoadFields = std::to_array<FieldSpec>({
  kDmaFields[0],
  {Field::kWiden,  "widen",  19,  1, K::kFlag,     0, 1, {}, "mem=acc: device elements are E bytes (the array's type), widened exactly (bf16 to fp32, int8 to int32); mem=ub: no effect"},
  kDmaFields[1], kDmaFields[2], kDmaFields[3], kDmaFields[4], kDmaFields[5], kDmaFields[6],
});

constexpr std::array kLoadWeightsFields = std::to_array<FieldSpec>({
  {Field::kDram,   "dram",   32, 48, K::kUnsigned, 0, ~0ull, {}, "device byte address of W[0][0]"},
  {Field::kStride, "stride", 80, 32, K::kUnsigned, 0, ~0ull, {}, "device bytes between W[k][*] and W[k+1][*]"},
  {Field::kRows,   "rows",  112, 16, K::kUnsigned, 1, kMax16, {}, "tile rows K read (<= R); rows below are zero"},
  {Field::kCols,   "cols",  128, 16, K::kUnsigned, 1, kMax16, {}, "tile columns N read (<= C); columns right of them are zero"},
});

constexpr std::array kMatmulFields = std::to_array<FieldSpec>({
  {Field::kPop,        "pop",        18,  1, K::kFlag,     0, 1, {}, "first move the next weight tile from the FIFO into the array"},
  {Field::kAccumulate, "accumulate", 19,  1, K::kFlag,     0, 1, {}, "add into the accumulators (otherwise overwrite)"},
  {Field::kUb,         "ub",         32, 24, K::kUnsigned, 0, ~0ull, {}, "first input row in the unified buffer"},
  {Field::kAcc,        "acc",        56, 24, K::kUnsigned, 0, ~0ull, {}, "first output row in the accumulators"},
  {Field::kRows,       "rows",       80, 16, K::kUnsigned, 1, kMax16, {}, "input rows M streamed through the array"},
  {Field::kK,          "k",          96, 16, K::kUnsigned, 1, kMax16, {}, "input elements used per row (<= R); the rest count as zero"},
});

constexpr std::array kActivateFields = std::to_array<FieldSpec>({
  {Field::kBias,      "bias",      18,  1, K::kFlag,     0, 1, {}, "add the accumulator row bias_row first"},
  {Field::kFunc,      "func",      19,  3, K::kEnum,     0, 3, kFuncNames, "activation: none, relu, relu6, clamp(lo, hi)"},
  {Field::kAcc,       "acc",       32, 24, K::kUnsigned, 0, ~0ull, {}, "first input accumulator row"},
  {Field::kUb,        "ub",        56, 24, K::kUnsigned, 0, ~0ull, {}, "first output unified-buffer row"},
  {Field::kRows,      "rows",      80, 16, K::kUnsigned, 1, kMax16, {}, "rows to process"},
  {Field::kBiasRow,   "bias_row",  96, 24, K::kUnsigned, 0, ~0ull, {}, "accumulator row holding the bias vector"},
  {Field::kScale,     "scale",    120, 32, K::kScale,    0, ~0ull, {}, "fp32 scale (bf16) or int32 multiplier (int8); 0 means 1"},
  {Field::kShift,     "shift",    152,  8, K::kUnsigned, 0, 62, {}, "int8: arithmetic right shift after the multiply, rounding half up"},
  {Field::kZeroPoint, "zp",       160,  8, K::kSigned,   0, ~0ull, {}, "int8: output zero point added before saturation"},
  {Field::kLo,        "lo",       168, 16, K::kClamp,    0, ~0ull, {}, "clamp lower bound"},
  {Field::kHi,        "hi",       184, 16, K::kClamp,    0, ~0ull, {}, "clamp upper bound"},
});

constexpr std::array kVectorFields = std::to_array<FieldSpec>({
  {Field::kOp,    "op",     18,  4, K::kEnum,     0, 5, kVecOpNames, "add, sub, mul, max, min; pass is a alone (b not read)"},
  {Field::kFunc,  "func",   22,  3, K::kEnum,     0, 3, kFuncNames, "activation applied to the result"},
  {Field::kBcast, "bcast",  25,  1, K::kFlag,     0, 1, {}, "operand b is the single row b, used for every row"},
  {Field::kBcol,  "bcol",   26,  1, K::kFlag,     0, 1, {}, "operand b is element 0 of its row, used for every element"},
  {Field::kMath,  "math",   27,  4, K::kEnum,     0, 8, kVecMathNames, "bf16 only: exp, recip, rsqrt, tanh, sigmoid, gelu_tanh, gelu_erf or log of (a op b), before func"},
  {Field::kA,     "a",      32, 24, K::kUnsigned, 0, ~0ull, {}, "first row of operand a"},
  {Field::kB,     "b",      56, 24, K::kUnsigned, 0, ~0ull, {}, "first row of operand b"},
  {Field::kDst,   "dst",    80, 24, K::kUnsigned, 0, ~0ull, {}, "first destination row"},
  {Field::kRows,  "rows",  104, 16, K::kUnsigned, 1, kMax16, {}, "rows to process"},
  {Field::kShift, "shift", 120,  8, K::kUnsigned, 0, 62, {}, "int8 mul: right shift of the product, rounding half up"},
  {Field::kLo,    "lo",    128, 16, K::kClamp,    0, ~0ull, {}, "clamp lower bound"},
  {Field::kHi,    "hi",    144, 16, K::kClamp,    0, ~0ull, {}, "clamp upper bound"},
});

constexpr std::array kPoolFields = std::to_array<FieldSpec>({
  {Field::kOp,      "op",       18,  1, K::kEnum,     0, 1, kPoolOpNames, "max, or sum then scale (average = sum with scale 1/n)"},
  {Field::kSrc,     "src",      32, 24, K::kUnsigned, 0, ~0ull, {}, "row of input pixel (0,0); pixel (y,x) is row src + y*in_w + x"},
  {Field::kDst,     "dst",      56, 24, K::kUnsigned, 0, ~0ull, {}, "row of output pixel (0,0); pixel (y,x) is row dst + y*out_w + x"},
  {Field::kInW,     "in_w",     80, 16, K::kUnsigned, 1, kMax16, {}, "input image width in pixels"},
  {Field::kOutH,    "out_h",    96, 16, K::kUnsigned, 1, kMax16, {}, "output height"},
  {Field::kOutW,    "out_w",   112, 16, K::kUnsigned, 1, kMax16, {}, "output width"},
  {Field::kWinH,    "win_h",   128,  8, K::kUnsigned, 1, 255, {}, "window height"},
  {Field::kWinW,    "win_w",   136,  8, K::kUnsigned, 1, 255, {}, "window width"},
  {Field::kStrideH, "stride_h",144,  8, K::kUnsigned, 1, 255, {}, "vertical stride"},
  {Field::kStrideW, "stride_w",152,  8, K::kUnsigned, 1, 255, {}, "horizontal stride"},
  {Field::kScale,   "scale",   160, 32, K::kScale,    0, ~0ull, {}, "sum: fp32 scale (bf16) or int32 multiplier (int8); 0 means 1"},
  {Field::kShift,   "shift",   192,  8, K::kUnsigned, 0, 62, {}, "sum, int8: right shift after the multiply, rounding half up"},
});

constexpr std::array kReduceFields = std::to_array<FieldSpec>({
  {Field::kOp,    "op",     18,  1, K::kEnum,     0, 1, kPoolOpNames, "max, or sum then scale (mean = sum with scale 1/n)"},
  {Field::kOver,  "over",   19,  1, K::kEnum,     0, 1, kReduceOverNames, "elems: one result per row (element 0 of dst+i); rows: one result row"},
  {Field::kSrc,   "src",    32, 24, K::kUnsigned, 0, ~0ull, {}, "first source row"},
  {Field::kDst,   "dst",    56, 24, K::kUnsigned, 0, ~0ull, {}, "first destination row"},
  {Field::kRows,  "rows",   80, 16, K::kUnsigned, 1, kMax16, {}, "source rows"},
  {Field::kElems, "elems",  96, 16, K::kUnsigned, 1, kMax16, {}, "elements 0..elems-1 of each row take part (<= row width)"},
  {Field::kScale, "scale", 112, 32, K::kScale,    0, ~0ull, {}, "sum: fp32 scale (bf16) or int32 multiplier (int8); 0 means 1"},
  {Field::kShift, "shift", 144,  8, K::kUnsigned, 0, 62, {}, "sum, int8: right shift after the multiply, rounding half up"},
});

// ACCVEC shares VECTOR's row fields and their positions; b is a row, or the immediate `imm`.
constexpr std::array kAccVecFields = std::to_array<FieldSpec>({
  {Field::kOp,     "op",     18,  4, K::kEnum,     0, 6, kAccOpNames, "add, sub, mul, max, min, div; sqrt is a alone (b not read)"},
  {Field::kBcast,  "bcast",  25,  1, K::kFlag,     0, 1, {}, "operand b is the single row b, used for every row"},
  {Field::kBcol,   "bcol",   26,  1, K::kFlag,     0, 1, {}, "operand b is element 0 of its row, used for every element"},
  {Field::kScalar, "scalar", 27,  1, K::kFlag,     0, 1, {}, "operand b is imm for every element (no row read; not with bcast or bcol)"},
  {Field::kA,      "a",      32, 24, K::kUnsigned, 0, ~0ull, {}, "first accumulator row of operand a"},
  {Field::kB,      "b",      56, 24, K::kUnsigned, 0, ~0ull, {}, "first accumulator row of operand b"},
  {Field::kDst,    "dst",    80, 24, K::kUnsigned, 0, ~0ull, {}, "first destination accumulator row"},
  {Field::kRows,   "rows",  104, 16, K::kUnsigned, 1, kMax16, {}, "rows to process"},
  {Field::kImm,    "imm",   120, 32, K::kScale,    0, ~0ull, {}, "scalar: the fp32 operand b (a float literal, or raw bits)"},
});

constexpr std::array kInterruptFields = std::to_array<FieldSpec>({
  {Field::kCode, "code", 32, 16, K::kUnsigned, 0, kMax16, {}, "reported in IRQ_CODE"},
});

constexpr std::array kOpcodeTable = std::to_array<OpcodeSpec>({
  {Opcode::kLoad,        "load",         Unit::kLoad,      kLoadFields,        "copy rows x elems elements from device memory into the unified buffer or accumulators"},
  {Opcode::kStore,       "store",        Unit::kStore,     kDmaFields,         "copy rows x elems elements from the unified buffer or accumulators to device memory"},
  {Opcode::kLoadWeights, "load_weights", Unit::kWeight,    kLoadWeightsFields, "read one R x C weight tile from device memory into the weight FIFO"},
  {Opcode::kMatmul,      "matmul",       Unit::kMxu,       kMatmulFields,      "stream rows input rows through the array against the stationary tile"},
  {Opcode::kActivate,    "activate",     Unit::kVector,    kActivateFields,    "accumulator rows -> bias, scale, activation, convert -> unified-buffer rows"},
  {Opcode::kVector,      "vector",       Unit::kVector,    kVectorFields,      "elementwise a op b, then an optional exp/recip/rsqrt/tanh/sigmoid/gelu, over unified-buffer rows"},
  {Opcode::kPool,        "pool",         Unit::kVector,    kPoolFields,        "max or sum pooling over windows of unified-buffer rows (one row per pixel)"},
  {Opcode::kSync,        "sync",         Unit::kSequencer, {},                 "wait until every earlier instruction has completed"},
  {Opcode::kInterrupt,   "interrupt",    Unit::kSequencer, kInterruptFields,   "set IRQ_STATUS.USER with a code and continue"},
  {Opcode::kHalt,        "halt",         Unit::kSequencer, {},                 "wait for every unit to finish, then end the launch"},
  {Opcode::kReduce,      "reduce",       Unit::kVector,    kReduceFields,      "max or sum along each row (one result per row) or across rows (one result row)"},
  {Opcode::kAccVec,      "accvec",       Unit::kVector,    kAccVecFields,      "elementwise fp32 a op b (or sqrt a) on accumulator rows into accumulator rows, no rounding to bf16"},
});
// clang-format on

}  // namespace

std::span<const OpcodeSpec> Opcodes() { return kOpcodeTable; }

}  // namespace systole::isa
