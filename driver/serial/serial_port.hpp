// A serial port as the byte stream of the frame link (usb::ByteStream): Boost.Asio's
// serial_port, 8N1, no flow control, reads and writes bounded in time. Internal to
// driver/serial; docs/SERIAL.md.
#pragma once

#include <memory>
#include <string_view>

#include "driver/serial/serial_uri.hpp"
#include "systole/usb_transport.hpp"

namespace systole::serial {

// Opens and configures the port. Throws LinkError(uri, …) naming the port for: no such port,
// permission denied, not a serial port, in use, a baud the port's driver does not take (the
// value named), and later for a write that does not leave within the timeout and a line that
// closes (the board unplugged, the simulation gone).
std::unique_ptr<usb::ByteStream> OpenSerialPort(const SerialAddress& address, std::string_view uri);

}  // namespace systole::serial
