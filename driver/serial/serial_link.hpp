// serial://PATH[?baud=N][&timeout_ms=M]: a board through its USB-serial chip (docs/SERIAL.md).
#pragma once

#include <memory>
#include <string_view>

#include "systole/link.hpp"

namespace systole::serial {

// Opens the port, says HELLO and returns the link; every failure is a LinkError naming the URI
// (and so the port) and the cause.
std::unique_ptr<Link> OpenSerialLink(std::string_view uri);

}  // namespace systole::serial
