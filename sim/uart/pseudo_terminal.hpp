// PseudoTerminal: a pty pair (posix_openpt, grantpt, unlockpt) standing in for a board's
// USB-serial port. The driver opens the slave end (/dev/pts/N) as it would /dev/ttyUSB0; the
// simulation or a test holds the master end and plays the board. The slave is put in raw mode
// and kept open here, so bytes the board writes are never echoed or translated even before the
// driver configures the line, and the master keeps working between two host sessions (with no
// slave open, reading the master fails with EIO).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

namespace systole::uart {

class PseudoTerminal {
 public:
  PseudoTerminal() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0) Fail("posix_openpt");
    if (::grantpt(master_) != 0 || ::unlockpt(master_) != 0) Fail("grantpt/unlockpt");
    char name[128];
    if (::ptsname_r(master_, name, sizeof name) != 0) Fail("ptsname_r");
    slave_path_ = name;
    slave_ = ::open(name, O_RDWR | O_NOCTTY);
    if (slave_ < 0) Fail("open " + slave_path_);
    termios raw{};
    if (::tcgetattr(slave_, &raw) != 0) Fail("tcgetattr");
    ::cfmakeraw(&raw);
    if (::tcsetattr(slave_, TCSANOW, &raw) != 0) Fail("tcsetattr");
    ::fcntl(master_, F_SETFL, ::fcntl(master_, F_GETFL) | O_NONBLOCK);
  }
  ~PseudoTerminal() {
    CloseMaster();
    if (slave_ >= 0) ::close(slave_);
  }
  PseudoTerminal(const PseudoTerminal&) = delete;
  PseudoTerminal& operator=(const PseudoTerminal&) = delete;

  const std::string& slave_path() const { return slave_path_; }
  int master() const { return master_; }
  // Hangs up the board's end: the host's next read fails as if the board were unplugged.
  void CloseMaster() {
    if (master_ >= 0) ::close(master_);
    master_ = -1;
  }

  // Whatever the host has written, without waiting (0 when nothing is there).
  std::size_t ReadSome(std::span<std::uint8_t> out) {
    const ssize_t n = ::read(master_, out.data(), out.size());
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  // Waits up to `timeout_ms` for the host to write something; returns whether it did.
  bool WaitReadable(int timeout_ms) {
    pollfd fd{.fd = master_, .events = POLLIN, .revents = 0};
    return ::poll(&fd, 1, timeout_ms) > 0 && (fd.revents & POLLIN) != 0;
  }
  // Writes as much as the pty takes now; returns how much that was.
  std::size_t WriteSome(std::span<const std::uint8_t> bytes) {
    const ssize_t n = ::write(master_, bytes.data(), bytes.size());
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }

 private:
  [[noreturn]] static void Fail(const std::string& what) {
    throw std::runtime_error("pseudo-terminal: " + what + ": " + std::strerror(errno));
  }

  int master_ = -1;
  int slave_ = -1;
  std::string slave_path_;
};

}  // namespace systole::uart
