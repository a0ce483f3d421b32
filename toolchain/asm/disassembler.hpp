// The Systole disassembler: instruction words (or a whole Program) -> canonical assembly text.
//
// Driven by the ISA table like the assembler: the mnemonic, then every non-zero field in table
// order (flags as bare words, enums by name), then wait= and signal=. The output reassembles to
// exactly the same bytes: values are printed in a form the assembler converts back losslessly,
// and a word that does not decode is printed as `.word 0x...` with the decode error as a comment.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "arch/config/config.hpp"
#include "arch/image/program.hpp"
#include "arch/isa/isa.hpp"

namespace systole::assembly {

struct DisassemblyOptions {
  // How scale, lo and hi are printed: for bf16 machines as float literals (raw hex when no
  // literal reproduces the bits: NaN, infinity, subnormals), for int8 machines as signed
  // integers, and as raw hex when the element type is unknown. All three reassemble exactly.
  std::optional<DType> element_type;
  // Append "; 0x000040" (the instruction's device address) to each instruction line.
  bool show_addresses = false;
  // Program only: write dram= values that fall inside a data segment, input or output as
  // NAME or NAME+offset.
  bool symbolic_addresses = true;
};

// One line, without a newline. Never fails.
std::string DisassembleInstruction(const isa::Instruction& instruction,
                                   const DisassemblyOptions& options = {});
// One line; an undecodable word becomes ".word 0x... ; ILLEGAL_OPCODE: ...". Never fails.
std::string DisassembleWord(const isa::Word& word, const DisassemblyOptions& options = {});
// One line per word, each ending in '\n'; addresses (if shown) start at `text_address`.
std::string Disassemble(std::span<const isa::Word> words, const DisassemblyOptions& options = {},
                        std::uint64_t text_address = 0);
// The whole program with its directives (.config, .text, .input, .output, .data/.values), so
// that Assemble(Disassemble(program)) == program. When options.element_type is not set, the
// element type comes from the program's .config if that configuration can be loaded.
std::string Disassemble(const image::Program& program, DisassemblyOptions options = {});

// The element type of a named configuration, or nullopt when it cannot be loaded.
std::optional<DType> ElementTypeOfConfig(std::string_view config_name);

}  // namespace systole::assembly
