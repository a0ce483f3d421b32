// libFuzzer: any 32 bytes decode to an instruction or a clean IsaError; a decoded instruction
// re-encodes to the same bytes and disassembles to text that assembles back to them.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "arch/isa/isa.hpp"
#include "toolchain/asm/assembler.hpp"
#include "toolchain/asm/disassembler.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace systole;
  if (size < isa::kInstructionBytes) return 0;
  isa::Word word{};
  std::memcpy(word.data(), data, word.size());
  isa::Instruction instruction;
  const std::string text = assembly::DisassembleWord(word) + "\n";
  const image::Program program = assembly::Assemble(text, "fuzz.s");
  if (program.words.size() != 1 || program.words[0] != word) std::abort();
  if (isa::Decode(word, instruction).has_value()) return 0;
  isa::Word again{};
  if (isa::Encode(instruction, again).has_value() || again != word) std::abort();
  return 0;
}
