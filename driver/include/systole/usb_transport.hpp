// The USB link's layers below Link: a byte stream that carries docs/PROTOCOL.md frames to the
// bridge in rtl/host/ (systole_usb_bridge), and the two streams that exist — a board's bulk
// endpoints through libusb, and the Verilated USB top clocked in process (usb+sim).
// docs/HOST_LINKS.md describes the whole path.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "arch/config/config.hpp"
#include "systole/link.hpp"

namespace systole::usb {

// A reliable, ordered byte stream to one device (a USB bulk pipe pair, a UART, a simulation).
// Errors throw LinkError naming the device and what failed.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  ByteStream() = default;
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  // Sends every byte (or throws).
  virtual void Write(std::span<const std::uint8_t> bytes) = 0;
  // Receives at least one and at most out.size() bytes; returns 0 if none came within
  // `timeout`.
  virtual std::size_t Read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) = 0;
};

// usb://VID:PID[/SERIAL], VID and PID four hex digits each.
struct UsbAddress {
  std::uint16_t vendor = 0;
  std::uint16_t product = 0;
  std::string serial;  // empty: the first device with VID:PID
};
// Throws LinkError(uri, what is wrong) for anything else.
UsbAddress ParseUsbUri(std::string_view uri);

// A board through libusb: interface 0 of the device, its first bulk OUT and bulk IN endpoints.
// Throws LinkError for no such device, no permission, an interface claimed by someone else, or
// missing endpoints; later, for timeouts and short transfers.
std::unique_ptr<ByteStream> OpenLibusbStream(const UsbAddress& address, std::string_view uri);

// The simulated end, usb+sim (the Verilated USB top): OpenSimUsbStream in driver/sim/sim_links.hpp.

// How long a request other than WAIT may take to be answered (WAIT: its own timeout more). A
// bridge answers within microseconds; the margin is for a simulated one, which runs a million
// times slower.
inline constexpr std::chrono::milliseconds kDefaultReplyTimeout{20000};

// A Link speaking the frame protocol over `stream`: HELLO on construction, then one request
// at a time; memory transfers cut to the bridge's payload limit. Allocation keeps the default
// host-side books (a USB device has one host). The serial link (driver/serial/) is this link
// over a serial port: the same frames reach the same bridge through a UART.
std::unique_ptr<Link> MakeUsbLink(std::unique_ptr<ByteStream> stream, std::string_view uri,
                                  std::chrono::milliseconds reply_timeout = kDefaultReplyTimeout);

}  // namespace systole::usb
