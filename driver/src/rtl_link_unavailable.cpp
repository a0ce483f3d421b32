// `rtl` in a build without the Verilated core (SYSTOLE_RTL=OFF: the sanitizer and fuzz builds).
#include "systole/link.hpp"

namespace systole {

std::unique_ptr<Link> OpenRtlLink(const Config& /*config*/, std::string_view /*memory*/) {
  throw LinkError("rtl", "this build has no Verilated core (configured with SYSTOLE_RTL=OFF)");
}

}  // namespace systole
