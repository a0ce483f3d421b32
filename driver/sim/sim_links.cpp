// Adds the simulated devices to OpenLink when this library is linked in (see sim_links.hpp).
// OpenLink has already checked the URI's grammar (rtl's ?memory= option), so the openers only
// build the device.
#include <string>

#include "driver/sim/sim_links.hpp"

namespace systole {
namespace {

std::unique_ptr<Link> OpenRtlUri(std::string_view uri, const Config& config) {
  constexpr std::string_view kMemory = "rtl?memory=";
  return OpenRtlLink(config, uri.starts_with(kMemory) ? uri.substr(kMemory.size()) : "hbm");
}

std::unique_ptr<Link> OpenUsbSimUri(std::string_view uri, const Config& config) {
  return usb::MakeUsbLink(usb::OpenSimUsbStream(config), uri);
}

std::unique_ptr<Link> OpenPcieSimUri(std::string_view uri, const Config& config) {
  return pcie::MakePcieLink(pcie::OpenSimFunction(config), uri);
}

std::unique_ptr<Link> OpenSerialSimUri(std::string_view uri, const Config& config) {
  return serial::OpenSerialSimLink(config, uri);
}

// Runs when a program that links systole_sim_links starts: an OBJECT library's object files
// are always linked, so this initialiser is never dropped the way an unreferenced member of a
// static archive would be.
[[maybe_unused]] const bool kRegistered = [] {
  RegisterLinkScheme("rtl", &OpenRtlUri);
  RegisterLinkScheme("usb+sim", &OpenUsbSimUri);
  RegisterLinkScheme("pcie+sim", &OpenPcieSimUri);
  RegisterLinkScheme("serial+sim", &OpenSerialSimUri);
  return true;
}();

}  // namespace
}  // namespace systole
