// libFuzzer: any bytes parse as a program bundle or throw BundleError — never a crash, never
// a huge allocation.
#include <cstdint>
#include <span>

#include "toolchain/asm/bundle.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    systole::assembly::ParseBundle(std::span<const std::uint8_t>(data, size), "fuzz.sbin");
  } catch (const systole::assembly::BundleError&) {
  }
  return 0;
}
