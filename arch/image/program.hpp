// A Systole program in memory: what the assembler produces, the disassembler prints and a
// program bundle (.sbin, see bundle.hpp) stores.
//
// A program is its instruction words plus the device-memory image it needs: named data
// segments (weights, constants) placed at fixed device addresses, and descriptors of the arrays
// a run supplies (inputs) and reads back (outputs). To run it, a host writes every data segment
// and the words to device memory, then launches CMD_PC = text_address, CMD_COUNT = words.size().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/isa/isa.hpp"

namespace systole::image {

// Element types of data segments, inputs and outputs. Wider than the machine's element types
// because accumulator rows (int32 / fp32) can be stored and biases are loaded as int32 / fp32.
enum class DataType : std::uint8_t { kInt8 = 0, kInt32 = 1, kBf16 = 2, kFp32 = 3 };

std::string_view DataTypeName(DataType dtype);                    // "int8", "int32", "bf16", "fp32"
std::optional<DataType> DataTypeFromName(std::string_view name);  // inverse of DataTypeName
unsigned DataTypeBytes(DataType dtype);                           // 1, 4, 2, 4
// "int8, int32, bf16, fp32": for "expected one of" messages.
std::string_view DataTypeNames();

// Bytes of initialised device memory: little-endian elements of `dtype`.
struct DataSegment {
  std::string name;
  std::uint64_t address = 0;
  DataType dtype = DataType::kInt8;
  std::vector<std::uint8_t> bytes;

  bool operator==(const DataSegment&) const = default;
};

// An array the run supplies (input) or reads back (output): row-major, densely packed.
struct TensorDesc {
  std::string name;
  std::uint64_t address = 0;
  DataType dtype = DataType::kInt8;
  std::vector<std::uint64_t> shape;

  std::uint64_t Elements() const;  // product of the shape
  std::uint64_t Bytes() const;     // Elements() * DataTypeBytes(dtype)
  bool operator==(const TensorDesc&) const = default;
};

// Where an instruction came from, for error messages ("mlp.s:12").
struct SourceLine {
  std::string file;
  std::uint32_t line = 0;

  bool operator==(const SourceLine&) const = default;
};

struct Program {
  // The configuration the program was written for ("small"), if it says (.config).
  std::optional<std::string> config;
  // Device address of the first instruction (.text at=ADDR; 0 when not given).
  std::uint64_t text_address = 0;
  std::vector<isa::Word> words;
  std::vector<DataSegment> data;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  // Parallel to `words` when known (empty otherwise): debug information only.
  std::vector<SourceLine> source_map;

  std::uint64_t TextBytes() const { return words.size() * std::uint64_t{isa::kInstructionBytes}; }
  // "mlp.s:12" for instruction `index`, or "" when the source map does not know it.
  std::string SourceOf(std::size_t index) const;
  // The data segment / input / output called `name`, or nullptr.
  const DataSegment* FindData(std::string_view name) const;
  const TensorDesc* FindInput(std::string_view name) const;
  const TensorDesc* FindOutput(std::string_view name) const;

  // Two programs are equal when they put the same bytes in the same places and describe the
  // same inputs and outputs: the source map (debug information) is not compared, so a
  // disassembled and reassembled program equals the original.
  bool operator==(const Program& other) const;
};

// Names of symbols, data segments, inputs and outputs: [A-Za-z_][A-Za-z0-9_]*, at most 128
// characters, and not one of the reserved words bits, wait, signal. A bundle uses
// data names as file names, so this is also what keeps a hostile bundle from naming "../x".
bool IsValidName(std::string_view name);

// Everything that makes a program unusable, one sentence each (empty when it is fine):
// invalid or duplicate names, empty data segments, data whose size is not a multiple of its
// element size, empty or zero-sized shapes, address ranges that overflow, data segments that
// overlap each other or the instructions. `subject` names the data segment, input or output a
// problem is about ("" for the program as a whole), so the assembler can point at its line.
struct ProgramProblem {
  std::string subject;
  std::string message;
};
std::vector<ProgramProblem> ValidateProgram(const Program& program);

}  // namespace systole::image
