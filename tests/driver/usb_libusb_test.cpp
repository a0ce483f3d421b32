// usb:// on a board fails in ways this machine cannot provoke (no board is attached): a device
// that refuses to open, a write that times out or ends short, a device unplugged mid-read. The
// libusb layer turns each libusb outcome into its error through driver/usb/usb_libusb_errors.hpp;
// these tests feed it libusb's own result codes and check the message names the link, the
// failure and what to do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libusb.h>

#include <string>

#include "driver/usb/usb_libusb_errors.hpp"

namespace systole::usb {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr std::string_view kUri = "usb://1d50:6018/BOARD";

template <class F>
std::string ErrorOf(F&& call) {
  try {
    call();
  } catch (const LinkError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no LinkError";
  return "";
}

TEST(UsbLibusbErrors, PermissionAndAbsenceSayWhichAndWhatToDo) {
  const UsbAddress board{0x1d50, 0x6018, "BOARD"};
  EXPECT_THAT(detail::OpenFailure(kUri, board, /*refused=*/true, 7).what(),
              AllOf(HasSubstr(kUri), HasSubstr("permission denied opening USB device 1d50:6018 "
                                               "with serial 'BOARD'"),
                    HasSubstr("udev rule")));
  EXPECT_THAT(detail::OpenFailure(kUri, {0x1d50, 0x6018, ""}, /*refused=*/false, 7).what(),
              HasSubstr("no USB device 1d50:6018 is connected (7 USB devices seen)"));
}

TEST(UsbLibusbErrors, LibusbFailuresCarryItsMessageAndCodeName) {
  EXPECT_NO_THROW(detail::CheckLibusb(kUri, 0, "claim interface 0"));
  EXPECT_THAT(ErrorOf([] { detail::CheckLibusb(kUri, LIBUSB_ERROR_BUSY, "claim interface 0"); }),
              AllOf(HasSubstr(kUri), HasSubstr("cannot claim interface 0"),
                    HasSubstr("LIBUSB_ERROR_BUSY")));
}

TEST(UsbLibusbErrors, WritesThatTimeOutOrEndShortAreErrors) {
  EXPECT_NO_THROW(detail::CheckBulkWrite(kUri, 0, 64, 64, 5000));
  EXPECT_THAT(ErrorOf([] { detail::CheckBulkWrite(kUri, LIBUSB_ERROR_TIMEOUT, 512, 4096, 5000); }),
              AllOf(HasSubstr(kUri), HasSubstr("timed out after 5000 ms with 512 of 4096 bytes")));
  EXPECT_THAT(ErrorOf([] { detail::CheckBulkWrite(kUri, 0, 60, 64, 5000); }),
              HasSubstr("short USB write: 60 of 64 bytes sent"));
  EXPECT_THAT(ErrorOf([] { detail::CheckBulkWrite(kUri, LIBUSB_ERROR_NO_DEVICE, 0, 64, 5000); }),
              AllOf(HasSubstr("cannot write to the bulk OUT endpoint"),
                    HasSubstr("LIBUSB_ERROR_NO_DEVICE")));
  EXPECT_THAT(ErrorOf([] { detail::CheckBulkWrite(kUri, LIBUSB_ERROR_PIPE, 0, 64, 5000); }),
              HasSubstr("LIBUSB_ERROR_PIPE"));
}

TEST(UsbLibusbErrors, ReadsKeepWhatArrivedAndFailOnAnythingButATimeout) {
  EXPECT_EQ(detail::CheckBulkRead(kUri, 0, 37), 37u);
  EXPECT_EQ(detail::CheckBulkRead(kUri, LIBUSB_ERROR_TIMEOUT, 0), 0u) << "nothing yet: not an error";
  EXPECT_EQ(detail::CheckBulkRead(kUri, LIBUSB_ERROR_TIMEOUT, 12), 12u) << "part of a transfer";
  EXPECT_THAT(ErrorOf([] { detail::CheckBulkRead(kUri, LIBUSB_ERROR_NO_DEVICE, 0); }),
              AllOf(HasSubstr(kUri), HasSubstr("cannot read from the bulk IN endpoint"),
                    HasSubstr("LIBUSB_ERROR_NO_DEVICE")));
  EXPECT_THAT(ErrorOf([] { detail::CheckBulkRead(kUri, LIBUSB_ERROR_OVERFLOW, 0); }),
              HasSubstr("LIBUSB_ERROR_OVERFLOW"));
}

}  // namespace
}  // namespace systole::usb
