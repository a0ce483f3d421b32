// The Systole instruction set, defined once.
//
// Every instruction is 32 bytes (256 bits), little-endian. Bits [7:0] hold the opcode,
// [12:8] the units this instruction waits for a token from, [17:13] the units it sends a token
// to when it completes; every other bit belongs to a field listed in kOpcodes below, and any bit
// no field covers is reserved and must be zero. docs/ISA.md explains the machine model; its
// field tables are generated from this file (`systole gen docs`), as is the RTL's decoder
// header rtl/generated/systole_isa.svh (`systole gen rtl`).
//
// Encoding and decoding are table-driven with shifts and masks on four 64-bit words; there are
// no bitfield structs, so the layout is the same on every compiler. Golden vectors in
// tests/arch/isa_golden_test.cpp pin it.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "arch/numerics/transcendental.hpp"

namespace systole::isa {

inline constexpr unsigned kInstructionBytes = 32;
inline constexpr unsigned kInstructionBits = kInstructionBytes * 8;
// ISA version reported in the ID_VERSION register: bump major on an incompatible change.
inline constexpr std::uint32_t kIsaVersionMajor = 1;
inline constexpr std::uint32_t kIsaVersionMinor = 2;  // 1.1: VECTOR math/pass/bcol, REDUCE; 1.2: ACCVEC

// The decoupled execution units. Each has an in-order queue; units synchronise only through
// dependency tokens (see docs/ISA.md "Dependencies").
enum class Unit : std::uint8_t {
  kLoad = 0,    // DMA device memory -> unified buffer / accumulators
  kWeight = 1,  // DMA device memory -> weight FIFO
  kMxu = 2,     // the systolic array
  kVector = 3,  // activation, elementwise and pooling
  kStore = 4,   // DMA unified buffer / accumulators -> device memory
  kSequencer = 5,  // SYNC / INTERRUPT / HALT execute in the sequencer itself
};
inline constexpr unsigned kNumUnits = 5;  // units that exchange tokens
std::string_view UnitName(Unit unit);     // "load", "weight", "mxu", "vector", "store", "seq"
std::optional<Unit> UnitFromName(std::string_view name);

enum class Opcode : std::uint8_t {
  kLoad = 0x01,
  kStore = 0x02,
  kLoadWeights = 0x03,
  kMatmul = 0x04,
  kActivate = 0x05,
  kVector = 0x06,
  kPool = 0x07,
  kSync = 0x08,
  kInterrupt = 0x09,
  kHalt = 0x0A,
  kReduce = 0x0B,
  kAccVec = 0x0C,
};
// Opcode 0x00 is illegal on purpose: running into zeroed memory faults at once.

// Every operand field of every instruction. A field's meaning is the same wherever it appears;
// its bit position depends on the opcode (see kOpcodes).
enum class Field : std::uint8_t {
  kMem,        // LOAD/STORE: which on-chip memory (enum MemSpace)
  kDram,       // device-memory byte address of the first element
  kStride,     // device-memory bytes between consecutive rows
  kRow,        // LOAD/STORE: first buffer row
  kCol,        // LOAD/STORE: first element within each buffer row
  kRows,       // number of rows (matrix rows, tile rows, pixels)
  kElems,      // LOAD/STORE: elements per row
  kCols,       // LOAD_WEIGHTS: tile columns
  kPop,        // MATMUL: take the next tile from the weight FIFO first
  kAccumulate, // MATMUL: add to the accumulators instead of overwriting them
  kUb,         // MATMUL: first input row / ACTIVATE: first output row
  kAcc,        // MATMUL: first output row / ACTIVATE: first input row
  kK,          // MATMUL: active input elements per row (the rest count as zero)
  kBias,       // ACTIVATE: add the bias row
  kBiasRow,    // ACTIVATE: accumulator row holding the bias vector
  kFunc,       // ACTIVATE/VECTOR: activation function (enum ActFunc)
  kScale,      // ACTIVATE/POOL: fp32 scale (bf16) or int32 multiplier (int8)
  kShift,      // ACTIVATE/VECTOR/POOL: int8 right shift after scaling
  kZeroPoint,  // ACTIVATE: int8 output zero point
  kLo,         // clamp lower bound: bf16 bits (bf16) or int16 (int8)
  kHi,         // clamp upper bound
  kOp,         // VECTOR: enum VecOp / POOL: enum PoolOp
  kBcast,      // VECTOR: operand b is one row broadcast to every row
  kA,          // VECTOR: first row of operand a
  kB,          // VECTOR: first row of operand b
  kDst,        // VECTOR/POOL: first destination row
  kSrc,        // POOL: first source row
  kInW,        // POOL: input image width (rows per image line)
  kOutH,       // POOL: output height
  kOutW,       // POOL: output width
  kWinH,       // POOL: window height
  kWinW,       // POOL: window width
  kStrideH,    // POOL: vertical stride
  kStrideW,    // POOL: horizontal stride
  kCode,       // INTERRUPT: code reported in IRQ_CODE
  kBcol,       // VECTOR: operand b is element 0 of its row, broadcast along the row
  kMath,       // VECTOR: transcendental function applied after op (enum VecMath; bf16 only)
  kOver,       // REDUCE: reduce over the elements of each row, or over the rows (enum ReduceOver)
  kWiden,      // LOAD: device elements of the array's type, widened into the accumulators
  kScalar,     // ACCVEC: operand b is the fp32 immediate kImm
  kImm,        // ACCVEC: fp32 immediate operand (bits)
  kCount_,     // number of fields (not a field)
};
inline constexpr unsigned kNumFields = static_cast<unsigned>(Field::kCount_);

// Enumerated field values.
enum class MemSpace : std::uint8_t { kUb = 0, kAcc = 1 };
enum class ActFunc : std::uint8_t { kNone = 0, kRelu = 1, kRelu6 = 2, kClamp = 3 };
// kPass is x alone: operand b is neither read nor range-checked (for a unary `math`).
enum class VecOp : std::uint8_t { kAdd = 0, kSub = 1, kMul = 2, kMax = 3, kMin = 4, kPass = 5 };
// ACCVEC's op: fp32 on accumulator rows, IEEE-754 binary32 (docs/NUMERICS.md, "ACCVEC").
// kSqrt is a alone: operand b is neither read nor range-checked.
enum class AccOp : std::uint8_t { kAdd = 0, kSub = 1, kMul = 2, kMax = 3, kMin = 4, kDiv = 5, kSqrt = 6 };
// The transcendental step of VECTOR (docs/NUMERICS.md gives each algorithm bit by bit): defined
// with the algorithms in arch/numerics/transcendental.hpp, which the HLS kernels share.
using VecMath = numerics::MathFunction;
inline constexpr unsigned kNumVecMath = 9;
// POOL's and REDUCE's op.
enum class PoolOp : std::uint8_t { kMax = 0, kSum = 1 };
enum class ReduceOver : std::uint8_t { kElems = 0, kRows = 1 };

// How the assembler reads and the disassembler prints a field.
enum class FieldKind : std::uint8_t {
  kUnsigned,  // integer
  kSigned,    // two's-complement integer
  kFlag,      // 1-bit; written as a bare word ("pop") when set, omitted when clear
  kEnum,      // named values (FieldSpec::names)
  kScale,     // 32 bits: a float literal is fp32, an integer literal is an int32
  kClamp,     // 16 bits: a float literal is bf16, an integer literal is an int16
};

struct FieldSpec {
  Field field;
  std::string_view name;       // as written in assembly
  std::uint16_t lsb;           // bit position in the 256-bit instruction
  std::uint8_t width;          // bits
  FieldKind kind;
  std::uint64_t min = 0;       // legal range of the raw value (unsigned fields and enums)
  std::uint64_t max = ~std::uint64_t{0};
  std::span<const std::string_view> names = {};  // kEnum value names, index = value
  std::string_view doc = {};
};

struct OpcodeSpec {
  Opcode opcode;
  std::string_view mnemonic;
  Unit unit;
  std::span<const FieldSpec> fields;
  std::string_view doc;
};

// All opcodes, in opcode order.
std::span<const OpcodeSpec> Opcodes();
const OpcodeSpec* FindOpcode(std::uint8_t opcode);
const OpcodeSpec* FindMnemonic(std::string_view mnemonic);
std::string_view FieldName(Field field);
// The spec of `field` within `opcode`, or nullptr if the opcode has no such field.
const FieldSpec* FindField(const OpcodeSpec& opcode, Field field);

// Header bit positions, shared by all opcodes.
inline constexpr unsigned kOpcodeLsb = 0, kOpcodeWidth = 8;
inline constexpr unsigned kWaitLsb = 8, kSignalLsb = 13, kUnitMaskWidth = kNumUnits;

// A decoded instruction: the opcode, its token masks and the raw value of each field (fields the
// opcode does not have are zero). Signed fields hold their sign-extended value as two's
// complement in the uint64_t; use Signed() to read them.
struct Instruction {
  Opcode opcode = Opcode::kHalt;
  std::uint8_t wait = 0;    // bit u: wait for a token from Unit(u) before starting
  std::uint8_t signal = 0;  // bit u: send a token to Unit(u) after completing
  std::array<std::uint64_t, kNumFields> values{};

  std::uint64_t operator[](Field field) const { return values[static_cast<unsigned>(field)]; }
  std::uint64_t& operator[](Field field) { return values[static_cast<unsigned>(field)]; }
  std::int64_t Signed(Field field) const {
    return static_cast<std::int64_t>(values[static_cast<unsigned>(field)]);
  }
  bool operator==(const Instruction&) const = default;
};

// Bytes of one device-memory element that a LOAD or STORE moves (docs/ISA.md, "LOAD and
// STORE"): the array's element size `element_bytes` (1 for int8, 2 for bf16) for the unified
// buffer and for a LOAD with `widen`, the accumulators' 4 otherwise.
inline unsigned DmaElementBytes(const Instruction& insn, unsigned element_bytes) {
  const bool accumulators = insn[Field::kMem] == static_cast<unsigned>(MemSpace::kAcc);
  return accumulators && !(insn.opcode == Opcode::kLoad && insn[Field::kWiden] != 0) ? 4 : element_bytes;
}

// The wait/signal mask bit of a unit.
constexpr std::uint8_t UnitBit(Unit unit) {
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(unit));
}

// An instruction from field values, for code that generates programs (tests, benchmarks, the
// compiler): MakeInstruction(Opcode::kMatmul, {{Field::kRows, 8}, {Field::kK, 16}}, wait, signal).
// Nothing is checked here; Encode checks.
Instruction MakeInstruction(Opcode opcode,
                            std::initializer_list<std::pair<Field, std::uint64_t>> fields,
                            std::uint8_t wait = 0, std::uint8_t signal = 0);

using Word = std::array<std::uint8_t, kInstructionBytes>;

// Why a word does not decode (or an instruction does not encode). The error codes are those of
// the ERROR_CODE register (regs::ErrorCode).
struct IsaError {
  std::uint32_t code = 0;          // regs::ErrorCode value
  std::string message;             // e.g. "activate: field 'func' = 7 is out of range 0..3"
};

// Encodes `instruction`; returns an error for a value that does not fit its field or is outside
// its legal range, or for a token mask naming the instruction's own unit.
[[nodiscard]] std::optional<IsaError> Encode(const Instruction& instruction, Word& out);
// Decodes a word; every illegal opcode, reserved bit, out-of-range value is reported.
[[nodiscard]] std::optional<IsaError> Decode(const Word& word, Instruction& out);

// Convenience for tests and tools: throws std::invalid_argument carrying the message.
Word EncodeOrThrow(const Instruction& instruction);
Instruction DecodeOrThrow(const Word& word);

}  // namespace systole::isa
