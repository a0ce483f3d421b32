// Parsing tcp:// URIs: see tcp_uri.hpp.
#include "driver/tcp/tcp_uri.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "systole/link.hpp"

namespace systole {
namespace {

std::string ReadTokenFile(const std::string& path, std::string_view shown) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::string token = text.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (!file || token.empty()) {
    throw LinkError(shown, fmt::format("SYSTOLE_TOKEN_FILE {} is missing, unreadable or empty", path));
  }
  return token;
}

}  // namespace

TcpEndpoint ParseTcpUri(std::string_view uri) {
  TcpEndpoint endpoint;
  endpoint.shown = RedactUri(uri);
  std::string_view rest = uri.substr(6);  // after "tcp://"
  std::optional<std::string> token;
  if (const auto query = rest.find('?'); query != std::string_view::npos) {
    std::string_view parameters = rest.substr(query + 1);
    rest = rest.substr(0, query);
    while (!parameters.empty()) {
      const std::string_view parameter = parameters.substr(0, parameters.find('&'));
      parameters.remove_prefix(std::min(parameters.size(), parameter.size() + 1));
      const auto equals = parameter.find('=');
      const std::string_view name = parameter.substr(0, equals);
      const std::string_view value =
          equals == std::string_view::npos ? std::string_view() : parameter.substr(equals + 1);
      if (name == "token") {
        token = std::string(value);
      } else if (name == "timeout_ms") {
        unsigned long long ms = 0;
        const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (error != std::errc() || end != value.data() + value.size() || ms == 0 ||
            ms > 86'400'000) {
          throw LinkError(endpoint.shown, fmt::format("timeout_ms={} is not 1..86400000", value));
        }
        endpoint.timeout = std::chrono::milliseconds(ms);
      } else {
        throw LinkError(endpoint.shown, fmt::format("unknown URI parameter '{}' (expected token "
                                                    "or timeout_ms)", name));
      }
    }
  }
  if (token) {
    endpoint.token = *token;
  } else if (const char* from_environment = std::getenv("SYSTOLE_TOKEN")) {
    endpoint.token = from_environment;
  } else if (const char* path = std::getenv("SYSTOLE_TOKEN_FILE")) {
    endpoint.token = ReadTokenFile(path, endpoint.shown);
  }
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == rest.size() || colon == 0) {
    throw LinkError(endpoint.shown, "expected tcp://HOST:PORT");
  }
  std::string_view host = rest.substr(0, colon);
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  endpoint.host = std::string(host);
  endpoint.port = std::string(rest.substr(colon + 1));
  return endpoint;
}

}  // namespace systole
