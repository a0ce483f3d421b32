// libFuzzer: any text parses as a configuration or throws ConfigError; what parses validates.
#include <cstdint>
#include <string_view>

#include "arch/config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    systole::ParseConfig(text, "fuzz.toml").Validate();
  } catch (const systole::ConfigError&) {
  }
  return 0;
}
