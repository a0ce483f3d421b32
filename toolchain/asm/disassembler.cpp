#include "toolchain/asm/disassembler.hpp"

#include <fmt/format.h>

#include <exception>

#include "arch/regs/regmap.hpp"
#include "toolchain/asm/literals.hpp"

namespace systole::assembly {
// The device image types (arch/image/program.hpp) this file builds and reads.
using image::Program;
using image::DataSegment;
using image::TensorDesc;
using image::DataType;
using image::DataTypeName;
using image::DataTypeBytes;

namespace {

using isa::FieldKind;
using isa::FieldSpec;

constexpr std::size_t kValuesPerLine = 16;

// Small numbers read best in decimal, addresses and masks in hex.
std::string FormatUnsigned(std::uint64_t value) {
  return value < 0x10000 ? fmt::format("{}", value) : fmt::format("0x{:x}", value);
}

std::string FormatScale(std::uint64_t raw, const std::optional<DType>& element_type) {
  const auto bits = static_cast<std::uint32_t>(raw);
  if (element_type == DType::kBf16) {
    if (auto text = FormatFp32(bits)) return *text;
  } else if (element_type == DType::kInt8) {
    return fmt::format("{}", static_cast<std::int32_t>(bits));
  }
  return fmt::format("0x{:08x}", bits);
}

std::string FormatClamp(std::uint64_t raw, const std::optional<DType>& element_type) {
  const auto bits = static_cast<std::uint16_t>(raw);
  if (element_type == DType::kBf16) {
    if (auto text = FormatBf16(bits)) return *text;
  } else if (element_type == DType::kInt8) {
    return fmt::format("{}", static_cast<std::int16_t>(bits));
  }
  return fmt::format("0x{:04x}", bits);
}

std::string UnitMask(unsigned mask) {
  std::string text;
  for (unsigned u = 0; u < isa::kNumUnits; ++u) {
    if ((mask >> u & 1u) == 0) continue;
    if (!text.empty()) text += '|';
    text += isa::UnitName(static_cast<isa::Unit>(u));
  }
  return text;
}

// `symbol` turns a dram= value into NAME+offset where the Program knows one.
template <typename Symbolize>
std::string Instruction(const isa::Instruction& instruction, const DisassemblyOptions& options,
                        Symbolize symbolize) {
  const isa::OpcodeSpec* spec = isa::FindOpcode(static_cast<std::uint8_t>(instruction.opcode));
  if (spec == nullptr) {
    return fmt::format("; opcode 0x{:02x} is not defined",
                       static_cast<unsigned>(instruction.opcode));
  }
  std::string text(spec->mnemonic);
  bool first = true;
  const auto add = [&](std::string operand) {
    text += first ? " " : ", ";
    text += operand;
    first = false;
  };
  for (const FieldSpec& field : spec->fields) {
    const std::uint64_t value = instruction[field.field];
    if (value == 0) continue;  // omitted fields are zero
    switch (field.kind) {
      case FieldKind::kFlag:
        add(value == 1 ? std::string(field.name) : fmt::format("{}={}", field.name, value));
        break;
      case FieldKind::kEnum:
        add(fmt::format(
            "{}={}", field.name,
            value < field.names.size() ? std::string(field.names[value]) : FormatUnsigned(value)));
        break;
      case FieldKind::kSigned:
        add(fmt::format("{}={}", field.name, static_cast<std::int64_t>(value)));
        break;
      case FieldKind::kScale:
        // ACCVEC's imm is fp32 in every configuration (int8 ones fault the instruction).
        add(fmt::format("{}={}", field.name,
                        FormatScale(value, field.field == isa::Field::kImm ? std::optional<DType>(DType::kBf16)
                                                                           : options.element_type)));
        break;
      case FieldKind::kClamp:
        add(fmt::format("{}={}", field.name, FormatClamp(value, options.element_type)));
        break;
      case FieldKind::kUnsigned:
        add(fmt::format("{}={}", field.name, symbolize(field.field, value)));
        break;
    }
  }
  if (instruction.wait != 0) add("wait=" + UnitMask(instruction.wait));
  if (instruction.signal != 0) add("signal=" + UnitMask(instruction.signal));
  return text;
}

std::string RawWord(const isa::Word& word) {
  std::string text = ".word 0x";
  for (unsigned i = isa::kInstructionBytes; i-- > 0;) {
    text += fmt::format("{:02x}", word[i]);
    if (i % 8 == 0 && i != 0) text += '_';  // one group per 64-bit limb
  }
  return text;
}

template <typename Symbolize>
std::string Word(const isa::Word& word, const DisassemblyOptions& options, Symbolize symbolize) {
  isa::Instruction instruction;
  if (auto error = isa::Decode(word, instruction)) {
    return fmt::format("{} ; {}: {}", RawWord(word),
                       regs::ErrorName(static_cast<regs::ErrorCode>(error->code)), error->message);
  }
  return Instruction(instruction, options, symbolize);
}

// An unsigned field's value; device addresses read best in hex whatever their size.
std::string PlainNumber(isa::Field field, std::uint64_t value) {
  return field == isa::Field::kDram ? fmt::format("0x{:x}", value) : FormatUnsigned(value);
}

void AppendLines(std::string& out, std::span<const isa::Word> words,
                 const DisassemblyOptions& options, std::uint64_t text_address,
                 const auto& symbolize) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string line = Word(words[i], options, symbolize);
    if (options.show_addresses) {
      line = fmt::format("{:<72} ; 0x{:06x}", line, text_address + i * isa::kInstructionBytes);
    }
    out += line;
    out += '\n';
  }
}

std::string FormatElement(DataType dtype, const std::uint8_t* bytes) {
  std::uint32_t bits = 0;
  for (unsigned i = 0; i < DataTypeBytes(dtype); ++i) bits |= std::uint32_t{bytes[i]} << (8 * i);
  switch (dtype) {
    case DataType::kInt8:
      return fmt::format("{}", static_cast<std::int8_t>(bits));
    case DataType::kInt32:
      return fmt::format("{}", static_cast<std::int32_t>(bits));
    case DataType::kBf16:
      if (auto text = FormatBf16(static_cast<std::uint16_t>(bits))) return *text;
      return fmt::format("bits(0x{:04x})", bits);
    case DataType::kFp32:
      if (auto text = FormatFp32(bits)) return *text;
      return fmt::format("bits(0x{:08x})", bits);
  }
  return "0";
}

std::string Shape(const std::vector<std::uint64_t>& shape) {
  std::string text;
  for (std::uint64_t d : shape) text += (text.empty() ? "" : "x") + fmt::format("{}", d);
  return text;
}

}  // namespace

std::optional<DType> ElementTypeOfConfig(std::string_view config_name) {
  try {
    return LoadConfig(config_name).dtype;
  } catch (const std::exception&) {
    return std::nullopt;  // unknown or unreadable: print raw bits, which always reassemble
  }
}

std::string DisassembleInstruction(const isa::Instruction& instruction,
                                   const DisassemblyOptions& options) {
  return Instruction(instruction, options, PlainNumber);
}

std::string DisassembleWord(const isa::Word& word, const DisassemblyOptions& options) {
  return Word(word, options, PlainNumber);
}

std::string Disassemble(std::span<const isa::Word> words, const DisassemblyOptions& options,
                        std::uint64_t text_address) {
  std::string out;
  AppendLines(out, words, options, text_address, PlainNumber);
  return out;
}

std::string Disassemble(const Program& program, DisassemblyOptions options) {
  if (!options.element_type && program.config) {
    options.element_type = ElementTypeOfConfig(*program.config);
  }
  std::string out = fmt::format("; Systole program: {} instructions at 0x{:x}\n",
                                program.words.size(), program.text_address);
  if (program.config) out += fmt::format(".config {}\n", *program.config);
  out += fmt::format(".text at=0x{:x}\n", program.text_address);
  for (const auto* list : {&program.inputs, &program.outputs}) {
    for (const TensorDesc& tensor : *list) {
      out += fmt::format("{:<7} {}, at=0x{:x}, dtype={}, shape={}\n",
                         list == &program.inputs ? ".input" : ".output", tensor.name,
                         tensor.address, DataTypeName(tensor.dtype), Shape(tensor.shape));
    }
  }
  for (const DataSegment& segment : program.data) {
    out += fmt::format("\n.data {}, at=0x{:x}, dtype={}\n", segment.name, segment.address,
                       DataTypeName(segment.dtype));
    const unsigned size = DataTypeBytes(segment.dtype);
    const std::size_t count = segment.bytes.size() / size;
    for (std::size_t i = 0; i < count; ++i) {
      out += i % kValuesPerLine == 0 ? ".values " : ", ";
      out += FormatElement(segment.dtype, &segment.bytes[i * size]);
      if (i % kValuesPerLine == kValuesPerLine - 1 || i + 1 == count) out += '\n';
    }
  }
  out += '\n';
  // dram= as NAME or NAME+offset: the first data segment, input or output containing it.
  const auto symbolize = [&](isa::Field field, std::uint64_t value) -> std::string {
    if (!options.symbolic_addresses || field != isa::Field::kDram) return PlainNumber(field, value);
    const auto try_range = [&](const std::string& name, std::uint64_t address,
                               std::uint64_t bytes) -> std::optional<std::string> {
      if (value < address || value - address >= bytes) return std::nullopt;
      if (value == address) return name;
      return fmt::format("{}+{}", name, FormatUnsigned(value - address));
    };
    for (const DataSegment& segment : program.data) {
      if (auto text = try_range(segment.name, segment.address, segment.bytes.size())) return *text;
    }
    for (const auto* list : {&program.inputs, &program.outputs}) {
      for (const TensorDesc& tensor : *list) {
        if (auto text = try_range(tensor.name, tensor.address, tensor.Bytes())) return *text;
      }
    }
    return PlainNumber(field, value);
  };
  AppendLines(out, program.words, options, program.text_address, symbolize);
  return out;
}

}  // namespace systole::assembly
