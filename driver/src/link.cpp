// OpenLink's dispatch on the URI scheme (with the schemes other libraries register), and the
// default (host-side) allocation books.
#include <fmt/format.h>

#include <algorithm>
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
  LinkOpener opener = nullptr;
  {
    const std::lock_guard lock(SchemesMutex());
    const auto found = Schemes().find(scheme);
    if (found != Schemes().end()) opener = found->second;
  }
  if (opener == nullptr) {
    throw LinkError(uri, "this program has no simulated devices (they need the Verilated RTL: a "
                         "build with SYSTOLE_RTL=ON, and a program linked with systole_sim_links)");
  }
  return opener(uri, config);
}

// rtl[?memory=hbm|ideal]: the one option is checked here, so a bad URI gets the same answer in
// every program, with or without the simulated devices.
void CheckRtlUri(std::string_view uri) {
  if (uri == "rtl") return;
  constexpr std::string_view kMemory = "rtl?memory=";
  if (!uri.starts_with(kMemory)) {
    throw LinkError(uri, "unknown option (the rtl device takes ?memory=hbm or ?memory=ideal)");
  }
  const std::string_view memory = uri.substr(kMemory.size());
  if (memory != "hbm" && memory != "ideal") {
    throw LinkError(uri, fmt::format("unknown memory '{}' (expected hbm or ideal)", memory));
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
    CheckRtlUri(uri);
    return OpenRegistered("rtl", uri, config);
  }
  // USB: a board's bulk endpoints, or the Verilated USB top (bridge + core) in process.
  if (uri.starts_with("usb://")) {
    return usb::MakeUsbLink(usb::OpenLibusbStream(usb::ParseUsbUri(uri), uri), uri);
  }
  if (uri == "usb+sim") return OpenRegistered("usb+sim", uri, config);
  // A board's USB-serial chip: the same frames over a UART (docs/SERIAL.md).
  if (uri.starts_with("serial://")) return serial::OpenSerialLink(uri);
  // PCIe: a board's BARs through sysfs, or the MMIO shim onto the Verilated core.
  if (uri.starts_with("pcie://")) {
    return pcie::MakePcieLink(pcie::OpenSysfsFunction(pcie::ParsePcieUri(uri)), uri);
  }
  if (uri == "pcie+sim") return OpenRegistered("pcie+sim", uri, config);
  if (uri == "systemc") {
    throw LinkError(uri, "this backend is not built yet (available: ref, rtl[?memory=hbm|ideal], tcp://HOST:PORT, "
                         "usb://VID:PID[/SERIAL], usb+sim, serial://PATH?baud=N, pcie://DDDD:BB:DD.F, pcie+sim)");
  }
  throw LinkError(uri,
                  "unknown URI (expected ref, rtl[?memory=hbm|ideal], systemc, tcp://HOST:PORT, usb://VID:PID[/SERIAL], "
                  "usb+sim, serial://PATH?baud=N, pcie://DDDD:BB:DD.F, pcie+sim)");
}

}  // namespace systole
