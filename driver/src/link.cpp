// OpenLink's dispatch on the URI scheme (with the schemes other libraries register), and the
// default (host-side) allocation books.
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>

#include "arch/regs/regmap.hpp"
#include "driver/serial/serial_link.hpp"
#include "systole/link.hpp"
#include "systole/pcie_transport.hpp"
#include "systole/usb_transport.hpp"

namespace systole {

LinkError::LinkError(std::string_view uri, const std::string& cause)
    : std::runtime_error(fmt::format("device '{}': {}", uri, cause)), cause_(cause) {}

std::string RedactUri(std::string_view uri) {
  const auto query = uri.find('?');
  if (!uri.starts_with("tcp://") || query == std::string_view::npos) return std::string(uri);
  std::string shown(uri.substr(0, query + 1));
  std::string_view parameters = uri.substr(query + 1);
  bool first = true;
  while (!parameters.empty()) {
    const std::string_view parameter = parameters.substr(0, parameters.find('&'));
    parameters.remove_prefix(std::min(parameters.size(), parameter.size() + 1));
    if (!first) shown += '&';
    first = false;
    shown += parameter.starts_with("token=") ? std::string_view("token=<hidden>") : parameter;
  }
  return shown;
}

Link::Link() = default;
Link::~Link() = default;

std::uint64_t Link::Allocate(std::uint64_t bytes, std::uint64_t alignment,
                             std::optional<std::uint64_t> at) {
  if (!allocator_) {
    const std::uint64_t memory_bytes =
        ReadRegister(regs::OffsetOf("CFG_MEM_SIZE_LO")) |
        (std::uint64_t{ReadRegister(regs::OffsetOf("CFG_MEM_SIZE_HI"))} << 32);
    allocator_ = std::make_unique<MemoryAllocator>(memory_bytes);
  }
  if (at) {
    if (!allocator_->AllocateAt(*at, bytes)) {
      throw LinkError(Uri(), fmt::format("cannot allocate {} bytes at 0x{:x}: taken, misaligned "
                                         "or outside the {} bytes of device memory",
                                         bytes, *at, allocator_->memory_bytes()));
    }
    return *at;
  }
  if (auto address = allocator_->Allocate(bytes, alignment)) return *address;
  throw LinkError(Uri(), fmt::format("no room for {} bytes in the {} bytes of device memory", bytes,
                                     allocator_->memory_bytes()));
}

void Link::Record(trace::Timeline* timeline) {
  if (timeline != nullptr) {
    throw LinkError(Uri(), "this device cannot record a timeline (the simulators ref and rtl can)");
  }
}

void Link::RecordWaveform(const std::filesystem::path& path) {
  if (!path.empty()) throw LinkError(Uri(), "this device has no waveform (the Verilated rtl device has)");
}

void Link::Free(std::uint64_t address) {
  if (!allocator_ || !allocator_->Free(address)) {
    throw LinkError(Uri(), fmt::format("no allocation starts at 0x{:x}", address));
  }
}

namespace {

std::mutex& SchemesMutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, LinkOpener, std::less<>>& Schemes() {
  static std::map<std::string, LinkOpener, std::less<>> schemes;
  return schemes;
}

std::unique_ptr<Link> OpenRegistered(std::string_view scheme, std::string_view uri,
                                     const Config& config) {
  // What a program without the scheme's library lacks, for the message.
  const std::string_view missing =
      scheme == "systemc"
          ? "this program has no SystemC platform (a build with SYSTOLE_SYSTEMC=ON, and a program "
            "linked with systole_systemc_link)"
          : "this program has no simulated devices (they need the Verilated RTL: a build with "
            "SYSTOLE_RTL=ON, and a program linked with systole_sim_links)";
  LinkOpener opener = nullptr;
  {
    const std::lock_guard lock(SchemesMutex());
    const auto found = Schemes().find(scheme);
    if (found != Schemes().end()) opener = found->second;
  }
  if (opener == nullptr) {
    throw LinkError(uri, std::string(missing));
  }
  return opener(uri, config);
}

// SCHEME[?OPTION=VALUE]: a simulated device's one option, checked here so that a bad URI gets
// the same answer in every program, with or without the library that provides the device.
//   rtl[?memory=hbm|ideal]          the core behind the HBM controller (default) or an ideal memory
//   systemc[?model=golden|hls|rtl]  the golden model (default), the golden model computing its
//                                   MATMULs with the HLS kernel, or the Verilated SoC behind the sockets
void CheckOption(std::string_view uri, std::string_view scheme, std::string_view option,
                 std::initializer_list<std::string_view> values) {
  if (uri == scheme) return;
  std::string expected;
  for (std::size_t i = 0; i < values.size(); ++i) {
    expected += fmt::format("{}{}", i == 0 ? "" : i + 1 == values.size() ? " or " : ", ", values.begin()[i]);
  }
  const std::string prefix = fmt::format("{}?{}=", scheme, option);
  if (!uri.starts_with(prefix)) {
    throw LinkError(uri, fmt::format("unknown option (the {} device takes ?{}=, one of {})", scheme, option, expected));
  }
  const std::string_view value = uri.substr(prefix.size());
  if (std::find(values.begin(), values.end(), value) == values.end()) {
    throw LinkError(uri, fmt::format("unknown {} '{}' (expected {})", option, value, expected));
  }
}

}  // namespace

void RegisterLinkScheme(std::string_view scheme, LinkOpener opener) {
  const std::lock_guard lock(SchemesMutex());
  Schemes().insert_or_assign(std::string(scheme), opener);
}

std::unique_ptr<Link> OpenLink(std::string_view uri, const Config& config) {
  if (uri == "ref") return OpenRefLink(config);
  if (uri.starts_with("tcp://")) return OpenTcpLink(uri);
  if (uri == "rtl" || uri.starts_with("rtl?")) {
    CheckOption(uri, "rtl", "memory", {"hbm", "ideal"});
    return OpenRegistered("rtl", uri, config);
  }
  // USB: a board's bulk endpoints, or the Verilated USB top (bridge + core) in process.
  if (uri.starts_with("usb://")) {
    return usb::MakeUsbLink(usb::OpenLibusbStream(usb::ParseUsbUri(uri), uri), uri);
  }
  if (uri == "usb+sim") return OpenRegistered("usb+sim", uri, config);
  // A board's USB-serial chip: the same frames over a UART (docs/SERIAL.md).
  if (uri.starts_with("serial://")) return serial::OpenSerialLink(uri);
  if (uri == "serial+sim") return OpenRegistered("serial+sim", uri, config);
  // PCIe: a board's BARs through sysfs, or the MMIO shim onto the Verilated core.
  if (uri.starts_with("pcie://")) {
    return pcie::MakePcieLink(pcie::OpenSysfsFunction(pcie::ParsePcieUri(uri)), uri);
  }
  if (uri == "pcie+sim") return OpenRegistered("pcie+sim", uri, config);
  if (uri == "systemc" || uri.starts_with("systemc?")) {
    CheckOption(uri, "systemc", "model", {"golden", "hls", "rtl"});
    return OpenRegistered("systemc", uri, config);
  }
  throw LinkError(uri,
                  "unknown URI (expected ref, rtl[?memory=hbm|ideal], systemc[?model=golden|hls|rtl], tcp://HOST:PORT, "
                  "usb://VID:PID[/SERIAL], usb+sim, serial://PATH?baud=N, serial+sim, pcie://DDDD:BB:DD.F, pcie+sim)");
}

}  // namespace systole
