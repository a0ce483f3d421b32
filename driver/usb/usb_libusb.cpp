// usb://VID:PID[/SERIAL] on a real board: libusb-1.0 behind RAII owners (context, device list,
// handle, claimed interface), every failure turned into a LinkError that says what to do.
// The board exposes a vendor-specific interface 0 with one bulk OUT and one bulk IN endpoint
// that carry the byte stream to and from the FIFO in front of rtl/host/systole_usb_bridge.
#include <fmt/format.h>
#include <libusb.h>

#include <algorithm>
#include <vector>

#include "driver/usb/usb_libusb_errors.hpp"
#include "systole/usb_transport.hpp"

namespace systole::usb {
namespace detail {

std::string Describe(const UsbAddress& a) {
  return a.serial.empty() ? fmt::format("{:04x}:{:04x}", a.vendor, a.product)
                          : fmt::format("{:04x}:{:04x} with serial '{}'", a.vendor, a.product,
                                        a.serial);
}

void CheckLibusb(std::string_view uri, int rc, std::string_view what) {
  if (rc < 0) {
    throw LinkError(uri, fmt::format("cannot {}: {} ({})", what, libusb_strerror(rc),
                                     libusb_error_name(rc)));
  }
}

LinkError OpenFailure(std::string_view uri, const UsbAddress& address, bool refused, long seen) {
  return LinkError(uri, refused
      ? fmt::format("permission denied opening USB device {}: add a udev rule giving your "
                    "user access (docs/HOST_LINKS.md) or run as root", Describe(address))
      : fmt::format("no USB device {} is connected ({} USB devices seen)", Describe(address),
                    seen));
}

void CheckBulkWrite(std::string_view uri, int rc, int sent, std::size_t size,
                    unsigned timeout_ms) {
  if (rc == LIBUSB_ERROR_TIMEOUT) {
    throw LinkError(uri, fmt::format("USB write timed out after {} ms with {} of {} bytes sent",
                                     timeout_ms, sent, size));
  }
  CheckLibusb(uri, rc, "write to the bulk OUT endpoint");
  if (sent < 0 || static_cast<std::size_t>(sent) != size) {
    throw LinkError(uri, fmt::format("short USB write: {} of {} bytes sent", sent, size));
  }
}

std::size_t CheckBulkRead(std::string_view uri, int rc, int got) {
  // A timeout may still have delivered bytes (the transfer ended part-way): keep them.
  if (rc != LIBUSB_ERROR_TIMEOUT) CheckLibusb(uri, rc, "read from the bulk IN endpoint");
  return got > 0 ? static_cast<std::size_t>(got) : 0;
}

}  // namespace detail

namespace {

using detail::CheckLibusb;
using detail::Describe;

constexpr int kInterface = 0;

class LibusbStream final : public ByteStream {
 public:
  LibusbStream(const UsbAddress& address, std::string_view uri) : uri_(uri) {
    libusb_context* context = nullptr;
    Check(libusb_init(&context), "initialise libusb");
    context_.reset(context);
    libusb_device** list = nullptr;
    const ssize_t count = libusb_get_device_list(context, &list);
    if (count < 0) Check(static_cast<int>(count), "list USB devices");
    // The list owns a reference to each device until it is freed; Open takes its own.
    std::unique_ptr<libusb_device*, void (*)(libusb_device**)> owner(
        list, [](libusb_device** l) { libusb_free_device_list(l, 1); });
    bool refused = false;
    for (ssize_t i = 0; i < count && handle_ == nullptr; ++i) {
      libusb_device_descriptor descriptor{};
      if (libusb_get_device_descriptor(list[i], &descriptor) != 0) continue;
      if (descriptor.idVendor != address.vendor || descriptor.idProduct != address.product) {
        continue;
      }
      libusb_device_handle* handle = nullptr;
      const int rc = libusb_open(list[i], &handle);
      if (rc == LIBUSB_ERROR_ACCESS) {
        refused = true;
        continue;
      }
      Check(rc, "open " + Describe(address));
      if (!address.serial.empty() && SerialOf(handle, descriptor) != address.serial) {
        libusb_close(handle);
        continue;
      }
      handle_.reset(handle);
    }
    if (handle_ == nullptr) throw detail::OpenFailure(uri_, address, refused, count);
    libusb_set_auto_detach_kernel_driver(handle_.get(), 1);  // ftdi_sio and friends let go
    const int rc = libusb_claim_interface(handle_.get(), kInterface);
    if (rc == LIBUSB_ERROR_BUSY) {
      throw LinkError(uri_, fmt::format("USB device {}: interface {} is claimed by another "
                                        "program", Describe(address), kInterface));
    }
    Check(rc, "claim interface 0");
    claim_.handle = handle_.get();
    FindEndpoints();
  }

  void Write(std::span<const std::uint8_t> bytes) override {
    int sent = 0;
    // libusb takes a non-const buffer for both directions; an OUT transfer only reads it.
    const int rc = libusb_bulk_transfer(handle_.get(), out_endpoint_,
                                        const_cast<std::uint8_t*>(bytes.data()),
                                        static_cast<int>(bytes.size()), &sent, kWriteTimeoutMs);
    detail::CheckBulkWrite(uri_, rc, sent, bytes.size(), kWriteTimeoutMs);
  }

  std::size_t Read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) override {
    if (pending_.empty()) {
      std::vector<std::uint8_t> buffer(std::max<std::size_t>(packet_bytes_, 16384));
      int got = 0;
      const auto ms = static_cast<unsigned>(std::max<long>(1, timeout.count()));
      const int rc = libusb_bulk_transfer(handle_.get(), in_endpoint_, buffer.data(),
                                          static_cast<int>(buffer.size()), &got, ms);
      const std::size_t received = detail::CheckBulkRead(uri_, rc, got);
      if (received == 0) return 0;
      pending_.assign(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(received));
    }
    const std::size_t n = std::min(out.size(), pending_.size());
    std::copy_n(pending_.begin(), n, out.begin());
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
    return n;
  }

 private:
  static constexpr unsigned kWriteTimeoutMs = 5000;

  void Check(int rc, std::string_view what) const { CheckLibusb(uri_, rc, what); }

  static std::string SerialOf(libusb_device_handle* handle, const libusb_device_descriptor& d) {
    if (d.iSerialNumber == 0) return "";
    unsigned char text[256] = {};
    const int n = libusb_get_string_descriptor_ascii(handle, d.iSerialNumber, text, sizeof text);
    return n > 0 ? std::string(reinterpret_cast<char*>(text), static_cast<std::size_t>(n)) : "";
  }

  void FindEndpoints() {
    libusb_config_descriptor* config = nullptr;
    Check(libusb_get_active_config_descriptor(libusb_get_device(handle_.get()), &config),
          "read the configuration descriptor");
    std::unique_ptr<libusb_config_descriptor, void (*)(libusb_config_descriptor*)> owner(
        config, libusb_free_config_descriptor);
    if (config->bNumInterfaces < 1 || config->interface[0].num_altsetting < 1) {
      throw LinkError(uri_, "the USB device has no interface 0");
    }
    const libusb_interface_descriptor& alt = config->interface[0].altsetting[0];
    for (int e = 0; e < alt.bNumEndpoints; ++e) {
      const libusb_endpoint_descriptor& ep = alt.endpoint[e];
      if ((ep.bmAttributes & LIBUSB_TRANSFER_TYPE_MASK) != LIBUSB_TRANSFER_TYPE_BULK) continue;
      if ((ep.bEndpointAddress & LIBUSB_ENDPOINT_DIR_MASK) == LIBUSB_ENDPOINT_IN) {
        if (in_endpoint_ == 0) in_endpoint_ = ep.bEndpointAddress;
        packet_bytes_ = ep.wMaxPacketSize;
      } else if (out_endpoint_ == 0) {
        out_endpoint_ = ep.bEndpointAddress;
      }
    }
    if (in_endpoint_ == 0 || out_endpoint_ == 0) {
      throw LinkError(uri_, "interface 0 of the USB device lacks a bulk IN or bulk OUT endpoint");
    }
  }

  // Released in reverse order: the interface, the handle, the context.
  struct Claim {
    libusb_device_handle* handle = nullptr;
    Claim() = default;
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    ~Claim() {
      if (handle != nullptr) libusb_release_interface(handle, kInterface);
    }
  };
  std::string uri_;
  std::unique_ptr<libusb_context, void (*)(libusb_context*)> context_{nullptr, libusb_exit};
  std::unique_ptr<libusb_device_handle, void (*)(libusb_device_handle*)> handle_{nullptr,
                                                                                 libusb_close};
  Claim claim_;
  unsigned char in_endpoint_ = 0;
  unsigned char out_endpoint_ = 0;
  std::size_t packet_bytes_ = 512;
  std::vector<std::uint8_t> pending_;  // received but not yet read
};

}  // namespace

std::unique_ptr<ByteStream> OpenLibusbStream(const UsbAddress& address, std::string_view uri) {
  return std::make_unique<LibusbStream>(address, uri);
}

}  // namespace systole::usb
