// The identity registers (ID_* and CFG_*) in both directions: what a device built from a
// configuration reports, and the configuration a driver reconstructs from those registers.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "arch/config/config.hpp"

namespace systole::regs {

// {offset, value} of every ID_* and CFG_* register for `config`.
std::vector<std::pair<std::uint32_t, std::uint32_t>> IdentityRegisters(const Config& config);

// Reads the identity registers through `read` and rebuilds the configuration (description
// excepted: it is not in the registers). Throws ConfigError if ID_MAGIC is wrong, the ISA major
// version differs from this build's, or the values do not form a valid configuration.
Config DecodeIdentity(const std::function<std::uint32_t(std::uint32_t offset)>& read);

}  // namespace systole::regs
