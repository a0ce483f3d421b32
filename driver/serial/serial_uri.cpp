// Parsing serial:// URIs: see serial_uri.hpp.
#include "driver/serial/serial_uri.hpp"

#include <fmt/format.h>

#include <charconv>

#include "systole/link.hpp"

namespace systole::serial {
namespace {

constexpr std::string_view kScheme = "serial://";
constexpr std::string_view kForm = "expected serial://PATH[?baud=N][&timeout_ms=M], e.g. "
                                   "serial:///dev/ttyUSB0?baud=3000000";

// A decimal number in [1, max], or a LinkError naming the parameter.
std::uint64_t Number(std::string_view uri, std::string_view name, std::string_view text,
                     std::uint64_t max) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value == 0 || value > max) {
    throw LinkError(uri, fmt::format("{}={} is not a whole number from 1 to {}", name, text, max));
  }
  return value;
}

}  // namespace

SerialAddress ParseSerialUri(std::string_view uri) {
  if (!uri.starts_with(kScheme)) throw LinkError(uri, std::string(kForm));
  std::string_view rest = uri.substr(kScheme.size());
  SerialAddress address;
  const auto query = rest.find('?');
  address.path = std::string(rest.substr(0, query));
  if (address.path.empty() || address.path.front() != '/') {
    throw LinkError(uri, fmt::format("'{}' is not an absolute device path ({})", address.path,
                                     kForm));
  }
  std::string_view parameters =
      query == std::string_view::npos ? std::string_view() : rest.substr(query + 1);
  while (!parameters.empty()) {
    const auto amp = parameters.find('&');
    const std::string_view pair = parameters.substr(0, amp);
    parameters = amp == std::string_view::npos ? std::string_view() : parameters.substr(amp + 1);
    const auto equals = pair.find('=');
    const std::string_view name = pair.substr(0, equals);
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1);
    if (name == "baud") {
      address.baud = static_cast<std::uint32_t>(Number(uri, name, value, 100'000'000));
    } else if (name == "timeout_ms") {
      address.timeout = std::chrono::milliseconds(Number(uri, name, value, 86'400'000));
    } else {
      throw LinkError(uri, fmt::format("unknown URI parameter '{}' (expected baud or timeout_ms)",
                                       name));
    }
  }
  return address;
}

}  // namespace systole::serial
