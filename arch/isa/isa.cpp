// Table-driven encoder and decoder for the instruction words defined in isa_table.cpp.
#include "arch/isa/isa.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "arch/regs/regmap.hpp"

namespace systole::isa {
namespace {

using regs::ErrorCode;

constexpr std::array<std::string_view, kNumUnits + 1> kUnitNames = {"load",   "weight", "mxu",
                                                                     "vector", "store",  "seq"};

constexpr std::array<std::string_view, kNumFields> kFieldNames = {
    "mem",   "dram", "stride", "row",   "col",   "rows", "elems", "cols", "pop",
    "accumulate",    "ub",     "acc",   "k",     "bias", "bias_row", "func", "scale",
    "shift", "zp",   "lo",     "hi",    "op",    "bcast", "a",   "b",    "dst",
    "src",   "in_w", "out_h",  "out_w", "win_h", "win_w", "stride_h", "stride_w", "code",
    "bcol",  "math", "over", "widen", "scalar", "imm"};

// The 256-bit word as four little-endian 64-bit limbs.
using Limbs = std::array<std::uint64_t, 4>;

Limbs ToLimbs(const Word& word) {
  Limbs limbs{};
  for (unsigned i = 0; i < kInstructionBytes; ++i) {
    limbs[i / 8] |= std::uint64_t{word[i]} << (8 * (i % 8));
  }
  return limbs;
}

Word FromLimbs(const Limbs& limbs) {
  Word word{};
  for (unsigned i = 0; i < kInstructionBytes; ++i) {
    word[i] = static_cast<std::uint8_t>(limbs[i / 8] >> (8 * (i % 8)));
  }
  return word;
}

constexpr std::uint64_t LowMask(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

// Reads `width` (<= 64) bits starting at bit `lsb`; fields may straddle two limbs.
std::uint64_t GetBits(const Limbs& limbs, unsigned lsb, unsigned width) {
  const unsigned limb = lsb / 64, offset = lsb % 64;
  std::uint64_t value = limbs[limb] >> offset;
  if (offset + width > 64) value |= limbs[limb + 1] << (64 - offset);
  return value & LowMask(width);
}

void SetBits(Limbs& limbs, unsigned lsb, unsigned width, std::uint64_t value) {
  const unsigned limb = lsb / 64, offset = lsb % 64;
  value &= LowMask(width);
  limbs[limb] |= value << offset;
  if (offset + width > 64) limbs[limb + 1] |= value >> (64 - offset);
}

std::int64_t SignExtend(std::uint64_t value, unsigned width) {
  const std::uint64_t sign = std::uint64_t{1} << (width - 1);
  return static_cast<std::int64_t>((value ^ sign) - sign);
}

IsaError Error(ErrorCode code, std::string message) {
  return IsaError{static_cast<std::uint32_t>(code), std::move(message)};
}

// Token masks: five bits; sequencer instructions take none; no unit tokens itself.
std::optional<IsaError> CheckMasks(const OpcodeSpec& spec, unsigned wait, unsigned signal) {
  for (const auto& [mask, name] : {std::pair{wait, "wait"}, std::pair{signal, "signal"}}) {
    if (mask >= (1u << kNumUnits)) {
      return Error(ErrorCode::kIllegalField,
                   fmt::format("{}: {} mask 0x{:x} names no unit", spec.mnemonic, name, mask));
    }
    if (spec.unit == Unit::kSequencer && mask != 0) {
      return Error(ErrorCode::kIllegalField,
                   fmt::format("{}: runs in the sequencer and takes no {} tokens", spec.mnemonic,
                               name));
    }
    if (spec.unit != Unit::kSequencer && (mask >> static_cast<unsigned>(spec.unit) & 1u) != 0) {
      return Error(ErrorCode::kIllegalField,
                   fmt::format("{}: {} names its own unit '{}'", spec.mnemonic, name,
                               UnitName(spec.unit)));
    }
  }
  return std::nullopt;
}

std::optional<IsaError> CheckRange(const OpcodeSpec& spec, const FieldSpec& field,
                                   std::uint64_t raw) {
  if (field.kind == FieldKind::kSigned) return std::nullopt;  // any bit pattern is legal
  if (raw < field.min || raw > field.max) {
    return Error(ErrorCode::kIllegalField,
                 fmt::format("{}: field '{}' = {} is out of range {}..{}", spec.mnemonic,
                             field.name, raw, field.min, std::min(field.max, LowMask(field.width))));
  }
  return std::nullopt;
}

}  // namespace

std::string_view UnitName(Unit unit) { return kUnitNames[static_cast<unsigned>(unit)]; }

std::optional<Unit> UnitFromName(std::string_view name) {
  for (unsigned i = 0; i < kUnitNames.size(); ++i) {
    if (kUnitNames[i] == name) return static_cast<Unit>(i);
  }
  return std::nullopt;
}

std::string_view FieldName(Field field) { return kFieldNames[static_cast<unsigned>(field)]; }

const OpcodeSpec* FindOpcode(std::uint8_t opcode) {
  for (const OpcodeSpec& spec : Opcodes()) {
    if (static_cast<std::uint8_t>(spec.opcode) == opcode) return &spec;
  }
  return nullptr;
}

const OpcodeSpec* FindMnemonic(std::string_view mnemonic) {
  for (const OpcodeSpec& spec : Opcodes()) {
    if (spec.mnemonic == mnemonic) return &spec;
  }
  return nullptr;
}

const FieldSpec* FindField(const OpcodeSpec& opcode, Field field) {
  for (const FieldSpec& spec : opcode.fields) {
    if (spec.field == field) return &spec;
  }
  return nullptr;
}

std::optional<IsaError> Encode(const Instruction& instruction, Word& out) {
  const OpcodeSpec* spec = FindOpcode(static_cast<std::uint8_t>(instruction.opcode));
  if (spec == nullptr) {
    return Error(ErrorCode::kIllegalOpcode,
                 fmt::format("opcode 0x{:02x} is not defined",
                             static_cast<unsigned>(instruction.opcode)));
  }
  if (auto error = CheckMasks(*spec, instruction.wait, instruction.signal)) return error;
  Limbs limbs{};
  SetBits(limbs, kOpcodeLsb, kOpcodeWidth, static_cast<std::uint8_t>(instruction.opcode));
  SetBits(limbs, kWaitLsb, kUnitMaskWidth, instruction.wait);
  SetBits(limbs, kSignalLsb, kUnitMaskWidth, instruction.signal);
  for (unsigned f = 0; f < kNumFields; ++f) {
    const Field field = static_cast<Field>(f);
    const std::uint64_t value = instruction.values[f];
    const FieldSpec* field_spec = FindField(*spec, field);
    if (field_spec == nullptr) {
      if (value != 0) {
        return Error(ErrorCode::kIllegalField, fmt::format("{}: has no field '{}'",
                                                           spec->mnemonic, FieldName(field)));
      }
      continue;
    }
    if (field_spec->kind == FieldKind::kSigned) {
      const std::int64_t signed_value = static_cast<std::int64_t>(value);
      const std::int64_t lo = -(std::int64_t{1} << (field_spec->width - 1));
      const std::int64_t hi = (std::int64_t{1} << (field_spec->width - 1)) - 1;
      if (signed_value < lo || signed_value > hi) {
        return Error(ErrorCode::kIllegalField,
                     fmt::format("{}: field '{}' = {} does not fit {} signed bits", spec->mnemonic,
                                 field_spec->name, signed_value, field_spec->width));
      }
    } else if ((value & ~LowMask(field_spec->width)) != 0) {
      return Error(ErrorCode::kIllegalField,
                   fmt::format("{}: field '{}' = {} does not fit {} bits", spec->mnemonic,
                               field_spec->name, value, field_spec->width));
    }
    if (auto error = CheckRange(*spec, *field_spec, value)) return error;
    SetBits(limbs, field_spec->lsb, field_spec->width, value);
  }
  out = FromLimbs(limbs);
  return std::nullopt;
}

std::optional<IsaError> Decode(const Word& word, Instruction& out) {
  const Limbs limbs = ToLimbs(word);
  const auto opcode = static_cast<std::uint8_t>(GetBits(limbs, kOpcodeLsb, kOpcodeWidth));
  const OpcodeSpec* spec = FindOpcode(opcode);
  if (spec == nullptr) {
    return Error(ErrorCode::kIllegalOpcode, fmt::format("opcode 0x{:02x} is not defined", opcode));
  }
  // Reserved bits: everything that neither the header nor a field of this opcode covers.
  Limbs used{};
  SetBits(used, 0, kSignalLsb + kUnitMaskWidth, ~std::uint64_t{0});
  for (const FieldSpec& field : spec->fields) {
    SetBits(used, field.lsb, field.width, ~std::uint64_t{0});
  }
  for (unsigned i = 0; i < limbs.size(); ++i) {
    const std::uint64_t stray = limbs[i] & ~used[i];
    if (stray != 0) {
      const unsigned bit = i * 64 + static_cast<unsigned>(__builtin_ctzll(stray));
      return Error(ErrorCode::kReservedBits,
                   fmt::format("{}: reserved bit {} is set", spec->mnemonic, bit));
    }
  }
  Instruction result;
  result.opcode = spec->opcode;
  result.wait = static_cast<std::uint8_t>(GetBits(limbs, kWaitLsb, kUnitMaskWidth));
  result.signal = static_cast<std::uint8_t>(GetBits(limbs, kSignalLsb, kUnitMaskWidth));
  if (auto error = CheckMasks(*spec, result.wait, result.signal)) return error;
  for (const FieldSpec& field : spec->fields) {
    const std::uint64_t raw = GetBits(limbs, field.lsb, field.width);
    if (auto error = CheckRange(*spec, field, raw)) return error;
    result[field.field] = field.kind == FieldKind::kSigned
                              ? static_cast<std::uint64_t>(SignExtend(raw, field.width))
                              : raw;
  }
  out = result;
  return std::nullopt;
}

Instruction MakeInstruction(Opcode opcode,
                            std::initializer_list<std::pair<Field, std::uint64_t>> fields,
                            std::uint8_t wait, std::uint8_t signal) {
  Instruction instruction;
  instruction.opcode = opcode;
  instruction.wait = wait;
  instruction.signal = signal;
  for (const auto& [field, value] : fields) instruction[field] = value;
  return instruction;
}

Word EncodeOrThrow(const Instruction& instruction) {
  Word word{};
  if (auto error = Encode(instruction, word)) throw std::invalid_argument(error->message);
  return word;
}

Instruction DecodeOrThrow(const Word& word) {
  Instruction instruction;
  if (auto error = Decode(word, instruction)) throw std::invalid_argument(error->message);
  return instruction;
}

}  // namespace systole::isa
