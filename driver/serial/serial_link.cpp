// serial://PATH?baud=N: the frame link of usb_link.cpp over a serial port. The board's
// USB-serial chip carries the same frames to the same bridge (rtl/host/systole_uart_top: a UART
// in front of systole_usb_bridge), so only the byte stream differs. docs/SERIAL.md.
#include "driver/serial/serial_link.hpp"

#include "driver/serial/serial_port.hpp"
#include "driver/serial/serial_uri.hpp"
#include "systole/usb_transport.hpp"

namespace systole::serial {

std::unique_ptr<Link> OpenSerialLink(std::string_view uri) {
  const SerialAddress address = ParseSerialUri(uri);
  return usb::MakeUsbLink(OpenSerialPort(address, uri), uri, address.timeout);
}

}  // namespace systole::serial
