// The tcp:// URI: tcp://HOST:PORT[?PARAM=VALUE[&...]], HOST a name, an IPv4 address or [v6].
// Parameters: token (else $SYSTOLE_TOKEN, else the file named by $SYSTOLE_TOKEN_FILE) and
// timeout_ms (connecting, sending a request and receiving a reply; a WAIT's reply may take its
// own timeout more). Internal to driver/tcp.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace systole {

// How long a reply (and connecting, and sending a request) may take unless the URI says
// otherwise. Requests wait at most a few milliseconds for another client's launch (the server
// runs launches in slices), so only a slow network or a stuck server comes near this.
inline constexpr std::chrono::milliseconds kDefaultTcpReplyTimeout{60000};

struct TcpEndpoint {
  std::string host;
  std::string port;
  std::string token;
  std::chrono::milliseconds timeout = kDefaultTcpReplyTimeout;
  std::string shown;  // the URI as messages show it: the token hidden (RedactUri)
};

// Throws LinkError (naming the URI with its token hidden) for a malformed URI, an unknown
// parameter, a bad timeout or an unreadable SYSTOLE_TOKEN_FILE.
TcpEndpoint ParseTcpUri(std::string_view uri);

}  // namespace systole
