// The serial:// URI: serial://PATH[?baud=N][&timeout_ms=M], PATH the port's device file
// (serial:///dev/ttyUSB0, serial:///dev/pts/5). docs/SERIAL.md. Internal to driver/serial.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "systole/usb_transport.hpp"

namespace systole::serial {

// systole_uart_top's default BAUD: 16 cycles per bit at tiny's 48 MHz, and a rate FT2232H,
// FT231X and BL616 chips all make.
inline constexpr std::uint32_t kDefaultBaud = 3'000'000;
struct SerialAddress {
  std::string path;  // the device file
  std::uint32_t baud = kDefaultBaud;
  // How long a reply may take (WAIT: its own timeout more); a board answers a 4 KiB frame in
  // about 15 ms at 3 Mbaud, the simulated board a thousand times slower.
  std::chrono::milliseconds timeout = usb::kDefaultReplyTimeout;
};

// Throws LinkError(uri, what is wrong): no path, a relative path, an unknown parameter, a baud
// or timeout that is not a positive number in range.
SerialAddress ParseSerialUri(std::string_view uri);

}  // namespace systole::serial
