// libFuzzer: any text assembles or throws AssemblyError; whatever assembles disassembles to
// text that assembles to the same program.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "toolchain/asm/assembler.hpp"
#include "toolchain/asm/disassembler.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace systole::assembly;
  using systole::image::Program;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Program program;
  try {
    program = Assemble(text, "fuzz.s");
  } catch (const AssemblyError&) {
    return 0;
  }
  DisassemblyOptions options;
  options.element_type = systole::DType::kBf16;
  const Program again = Assemble(Disassemble(program, options), "again.s");
  if (!(again == program)) std::abort();
  return 0;
}
