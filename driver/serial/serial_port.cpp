// serial://: Boost.Asio's serial_port (open() puts the line in raw mode), 8N1 without flow
// control, as the board's USB-serial chip and systole_uart_top expect. Every read and write is
// an asynchronous operation run on a private io_context for at most its timeout, then
// cancelled, so a silent or stuck board costs a clear error, never a hang.
#include "driver/serial/serial_port.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <termios.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/serial_port.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>

#include "systole/link.hpp"

namespace systole::serial {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

std::string OpenFailure(const std::string& path, const error_code& error) {
  switch (error.value()) {
    case ENOENT:
      return fmt::format("no such serial port {} (is the board plugged in? Its port is "
                         "usually /dev/ttyUSB* or /dev/ttyACM*)", path);
    case EACCES:
    case EPERM:
      return fmt::format("permission denied opening serial port {}: add your user to the group "
                         "that owns it (ls -l {}; usually dialout: sudo usermod -aG dialout "
                         "$USER, then log in again) or add a udev rule", path, path);
    case ENOTTY:
      return fmt::format("{} is not a serial port ({})", path, error.message());
    case EBUSY:
      return fmt::format("serial port {} is in use by another program", path);
    default:
      return fmt::format("cannot open serial port {}: {}", path, error.message());
  }
}

class SerialPortStream final : public usb::ByteStream {
 public:
  SerialPortStream(const SerialAddress& address, std::string_view uri)
      : uri_(uri), path_(address.path), timeout_(address.timeout), port_(io_) {
    error_code error;
    port_.open(path_, error);
    if (error) throw LinkError(uri_, OpenFailure(path_, error));
    port_.set_option(asio::serial_port::baud_rate(address.baud), error);
    if (error) {
      throw LinkError(uri_, fmt::format(
          "unsupported baud {} on serial port {}: {} (the port takes the standard rates, e.g. "
          "115200, 921600, 1000000, 2000000, 3000000)", address.baud, path_, error.message()));
    }
    Set(asio::serial_port::character_size(8), "8 data bits");
    Set(asio::serial_port::parity(asio::serial_port::parity::none), "no parity");
    Set(asio::serial_port::stop_bits(asio::serial_port::stop_bits::one), "one stop bit");
    Set(asio::serial_port::flow_control(asio::serial_port::flow_control::none), "no flow control");
    // One host per board: a second program's frames would interleave with ours. (Root may
    // still open it; that is the kernel's rule.)
    if (::ioctl(port_.native_handle(), TIOCEXCL) != 0) {
      throw LinkError(uri_, fmt::format("cannot take serial port {} for this program alone: {}",
                                        path_, error_code(errno, boost::system::system_category())
                                                   .message()));
    }
    // Bytes left from an earlier session would be read as the start of the first reply.
    ::tcflush(port_.native_handle(), TCIOFLUSH);
  }

  void Write(std::span<const std::uint8_t> bytes) override {
    error_code result = asio::error::would_block;
    std::size_t sent = 0;
    asio::async_write(port_, asio::buffer(bytes.data(), bytes.size()),
                      [&](const error_code& error, std::size_t n) {
                        result = error;
                        sent = n;
                      });
    if (!RunFor(timeout_)) {
      throw LinkError(uri_, fmt::format("timeout: {} of {} bytes of a request sent to serial "
                                        "port {} within {} ms (nothing is reading the line?)",
                                        sent, bytes.size(), path_, timeout_.count()));
    }
    if (result) throw LineError("writing to", result);
  }

  std::size_t Read(std::span<std::uint8_t> out, milliseconds timeout) override {
    error_code result = asio::error::would_block;
    std::size_t got = 0;
    port_.async_read_some(asio::buffer(out.data(), out.size()),
                          [&](const error_code& error, std::size_t n) {
                            result = error;
                            got = n;
                          });
    if (!RunFor(timeout)) return got;  // cancelled: nothing, or what arrived just before
    if (result) throw LineError("reading", result);
    return got;
  }

 private:
  template <class Option>
  void Set(const Option& option, std::string_view what) {
    error_code error;
    port_.set_option(option, error);
    if (error) {
      throw LinkError(uri_, fmt::format("serial port {} refuses {}: {}", path_, what,
                                        error.message()));
    }
  }

  // A failed read or write. A line that hung up (EIO from a tty, end of file) says so plainly.
  LinkError LineError(std::string_view doing, const error_code& error) const {
    if (error == asio::error::eof || error.value() == EIO) {
      return LinkError(uri_, fmt::format("serial port {} closed while {} it: the board (or its "
                                         "simulation) went away ({})", path_, doing,
                                         error.message()));
    }
    return LinkError(uri_, fmt::format("{} serial port {} failed: {}", doing, path_,
                                       error.message()));
  }

  // Runs the pending operation for at most `timeout`; returns whether it finished. On timeout
  // it is cancelled and its handler run, so nothing refers to the caller's buffer afterwards.
  bool RunFor(milliseconds timeout) {
    io_.restart();
    io_.run_for(timeout);
    if (io_.stopped()) return true;
    port_.cancel();
    io_.restart();
    io_.run();
    return false;
  }

  std::string uri_;
  std::string path_;
  milliseconds timeout_;
  asio::io_context io_;
  asio::serial_port port_;
};

}  // namespace

std::unique_ptr<usb::ByteStream> OpenSerialPort(const SerialAddress& address,
                                                std::string_view uri) {
  return std::make_unique<SerialPortStream>(address, uri);
}

}  // namespace systole::serial
