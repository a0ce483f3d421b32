// The Systole assembler: assembly text -> Program.
//
// The language is docs/ISA.md "Assembly language"; the field names, bit positions, kinds and
// legal ranges all come from the ISA table (arch/isa/isa_table.cpp) and values are checked by
// isa::Encode, so the assembler knows nothing about any particular instruction. In short:
//
//   ; comment (also '#')
//   .config small                           ; optional: the configuration it targets
//   .text   at=0x0                          ; device address of the instructions (default 0)
//   .equ    ROWS, 8                          ; a constant
//   .data   W1, at=0x100000, dtype=bf16      ; a data segment, filled by the .values after it
//   .values 1.0, -2.5, 3                     ;   (int8, int32, bf16 or fp32 elements)
//   .input  X, at=0x200000, dtype=bf16, shape=8x16
//   .output Y, at=0x300000, dtype=bf16, shape=8x16
//   load mem=ub, dram=X, stride=32, rows=ROWS, elems=16, signal=mxu
//   matmul ub=0, acc=0, rows=ROWS, k=16, pop, wait=load|weight
//   .word 0x00000000_00000000_00000000_00000000_00000000_00000000_00000000_0000000a
//
// Values are integer expressions over numbers and symbols with + - * and parentheses
// (`dram=W1+32`), or a single float literal for scale (fp32 bits) and lo/hi (bf16 bits). For
// those fields an integer is the raw bit pattern, signed or unsigned (`scale=-3`,
// `lo=0xff80`). Symbols (.equ, .data, .input, .output names; the latter three stand for their
// address) may be used before they are defined. In float .values, `bits(0x7fc1)` gives an
// element's raw bits. `.word` takes exactly 64 hex digits (underscores ignored): the 256-bit
// instruction as one number, bit n of the number = bit n of the instruction; it is not checked,
// so that a disassembled undecodable word reassembles to itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "arch/image/program.hpp"

namespace systole::assembly {

struct Diagnostic {
  std::string file;
  std::uint32_t line = 0;    // 1-based
  std::uint32_t column = 0;  // 1-based, in bytes; 0 when the message is about the whole file
  std::string message;

  // "mlp.s:12:9: error: unknown field 'rwos' for 'load' (expected one of: ...)"
  std::string ToString() const;
  bool operator==(const Diagnostic&) const = default;
};

// Thrown by Assemble with every problem found (at most kMaxDiagnostics of them), sorted by line
// and column; what() is their ToString()s, one per line.
class AssemblyError : public std::runtime_error {
 public:
  explicit AssemblyError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

inline constexpr std::size_t kMaxDiagnostics = 50;

// Assembles `source`; `file_name` names it in diagnostics and in the source map. Throws
// AssemblyError; never anything else for any input (apart from std::bad_alloc).
image::Program Assemble(std::string_view source, std::string_view file_name = "<input>");
// Reads and assembles a file. Throws AssemblyError (also for a file that cannot be read).
image::Program AssembleFile(const std::filesystem::path& path);

}  // namespace systole::assembly
