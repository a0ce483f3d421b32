// A link: the small interface every Systole backend speaks — register read/write, device
// memory block read/write, and waiting for the interrupt. The driver (device.hpp) is written
// once on top of it, so adding a board means adding a link. docs/REGISTERS.md says what the
// registers mean; docs/DRIVER.md shows the layers.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "arch/config/config.hpp"
#include "systole/memory_allocator.hpp"

namespace systole {
namespace trace {
class Timeline;
}

// A link could not be opened or an access failed. what() is "device 'URI': CAUSE"; cause()
// is the part after the device, for callers that name the device themselves.
class LinkError : public std::runtime_error {
 public:
  LinkError(std::string_view uri, const std::string& cause);
  const std::string& cause() const { return cause_; }

 private:
  std::string cause_;
};

class Link {
 public:
  virtual ~Link();
  Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // The URI the link was opened with, for messages: "ref", "tcp://host:port", …
  virtual std::string_view Uri() const = 0;
  virtual std::uint32_t ReadRegister(std::uint32_t offset) = 0;
  virtual void WriteRegister(std::uint32_t offset, std::uint32_t value) = 0;
  virtual void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) = 0;
  virtual void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) = 0;
  // Waits until the device raises its interrupt line or has nothing left to run, at most
  // `timeout`. Returns false on timeout.
  virtual bool WaitForInterrupt(std::chrono::milliseconds timeout) = 0;

  // Device-memory allocation. A link that owns its device needs nothing more than these
  // defaults, which keep the books on the host (first fit over CFG_MEM_SIZE bytes). A link to
  // a shared device (tcp://) asks the device's owner, which also enforces isolation.
  // `at`: exactly this address (a multiple of kAllocationAlignment). Throws LinkError when
  // there is no room.
  virtual std::uint64_t Allocate(std::uint64_t bytes, std::uint64_t alignment,
                                 std::optional<std::uint64_t> at);
  // Releases the allocation starting at `address`. Throws LinkError if there is none.
  virtual void Free(std::uint64_t address);

  // Records what each unit does during the following launches into `timeline` (nullptr: stop).
  // Only the in-process simulators can (ref: the golden model's cycle estimate; rtl: the
  // Verilated core's trace ports); the default throws LinkError saying so.
  virtual void Record(trace::Timeline* timeline);
  // Writes the waveform of every signal, from now on, to `path` (FST; an empty path closes it).
  // Only rtl can; the default throws LinkError saying so.
  virtual void RecordWaveform(const std::filesystem::path& path);

 private:
  std::unique_ptr<MemoryAllocator> allocator_;  // the default books, made on first use
};

// `uri` fit to show: a token in it (tcp://HOST:PORT?token=…) replaced by "<hidden>". Links,
// Device and the CLI show URIs only through this, so a token never reaches a message or a log.
std::string RedactUri(std::string_view uri);

// Opens a link by URI. `config` selects the configuration for devices that are built on
// demand (the in-process models); hardware and servers report their own. Supported: "ref",
// "rtl[?memory=hbm|ideal]", "tcp://HOST:PORT[?token=TOKEN][&timeout_ms=N]" (the token may also come from $SYSTOLE_TOKEN
// or the file named by $SYSTOLE_TOKEN_FILE),
// "usb://VID:PID[/SERIAL]", "pcie://DDDD:BB:DD.F", the simulated USB and PCIe paths
// "usb+sim" and "pcie+sim" (docs/HOST_LINKS.md), and "systemc[?model=golden|hls|rtl]", a device in
// the SystemC/TLM platform (docs/SYSTEMC.md).
std::unique_ptr<Link> OpenLink(std::string_view uri, const Config& config);

// The backends OpenLink dispatches to, for code that builds links directly.
std::unique_ptr<Link> OpenRefLink(const Config& config);
std::unique_ptr<Link> OpenTcpLink(std::string_view uri);

// Schemes provided by libraries above the driver. The simulated devices (rtl, usb+sim,
// pcie+sim) need the Verilated RTL, so they live in driver/sim/ (library systole_sim_links,
// see driver/sim/sim_links.hpp), which registers them here when a program links it; systemc
// needs SystemC and is registered likewise by systole_systemc_link (driver/sim/systemc_link.cpp). OpenLink
// checks a URI's grammar itself, then calls the opener registered for its scheme (the part
// before any '?'); without one it throws a LinkError saying the program has no such device.
using LinkOpener = std::unique_ptr<Link> (*)(std::string_view uri, const Config& config);
void RegisterLinkScheme(std::string_view scheme, LinkOpener opener);

}  // namespace systole
