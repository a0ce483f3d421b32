// What a libusb call's outcome means for usb://: the LinkError (or the byte count) for each
// result code. Kept apart from the libusb calls themselves so that the failures a board can cause
// (permission, timeout, short transfer, a vanished device) are tested without a board
// (tests/driver/usb_libusb_test.cpp), with libusb's own codes and messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "systole/usb_transport.hpp"

namespace systole::usb::detail {

// "1d50:6018" or "1d50:6018 with serial 'X'".
std::string Describe(const UsbAddress& address);

// Throws LinkError(uri, "cannot WHAT: libusb's message (ERROR_NAME)") when `rc` < 0.
void CheckLibusb(std::string_view uri, int rc, std::string_view what);

// Nothing matched: the error says whether a matching device refused to open (permission) or
// none was connected, out of `seen` devices.
LinkError OpenFailure(std::string_view uri, const UsbAddress& address, bool refused, long seen);

// A bulk OUT transfer of `size` bytes returned `rc` with `sent` bytes gone: throws for a
// timeout, any other failure, or a short write.
void CheckBulkWrite(std::string_view uri, int rc, int sent, std::size_t size,
                    unsigned timeout_ms);

// A bulk IN transfer returned `rc` with `got` bytes: the bytes received (0 when it timed out
// with nothing), or throws for any other failure.
std::size_t CheckBulkRead(std::string_view uri, int rc, int got);

}  // namespace systole::usb::detail
