// libFuzzer target: the device server's request handling (driver/server/device_host*.cpp),
// behind the frame codec that fuzz_frame covers. The input is a sequence of requests, each
// `u8 type, u16 length (LE), length bytes of payload`; request ids increase by one, except that
// a type byte with its top bit set reuses the previous id. A device host without a worker
// thread (Poll) hosts `tiny` on `ref` for one session per input, so every run is deterministic.
//
// Checked after every input: each request got at most one reply and every reply but a WAIT's
// came; every reply is the request's reply type or an ERROR that decodes; after the session
// closes, the server holds no device memory but its own.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "driver/server/device_host.hpp"
#include "systole/link.hpp"

namespace {

using namespace systole;
using namespace systole::protocol;

struct Host {
  Host() {
    ServerOptions options;
    options.launch_timeout = std::chrono::milliseconds(50);
    options.auth_failure_delay = std::chrono::milliseconds(0);
    host = std::make_unique<server::DeviceHost>(OpenRefLink(LoadConfig("tiny")), options, false);
    host->Poll();
    baseline = host->allocations();  // the scrub program's memory
  }
  std::unique_ptr<server::DeviceHost> host;
  std::size_t baseline = 0;
};

[[noreturn]] void Fail(const char* why) {
  std::fprintf(stderr, "fuzz_server: %s\n", why);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Host host;
  static std::uint64_t session = 0;
  ++session;
  std::map<std::uint32_t, int> replies;        // request id -> replies seen
  std::map<std::uint32_t, std::uint16_t> asked;  // request id -> type
  host.host->Open(session, [&](Header header, std::vector<std::uint8_t> payload, bool) {
    HeaderFields fields;
    if (ParseHeader(header, ~0u, fields) || !PayloadMatches(header, payload)) Fail("bad reply frame");
    ++replies[fields.request_id];
    if (fields.type == static_cast<std::uint16_t>(MessageType::kError)) {
      DecodeErrorReply(payload);  // throws (and so crashes the fuzzer) if malformed
    } else if (const auto it = asked.find(fields.request_id);
               it == asked.end() || fields.type != (it->second | kReplyBit)) {
      Fail("a reply of the wrong type");
    }
  });
  std::uint32_t id = 0;
  for (std::size_t at = 0; at + 3 <= size;) {
    const std::uint8_t type = data[at];
    const std::size_t declared = std::size_t{data[at + 1]} | std::size_t{data[at + 2]} << 8;
    const std::size_t length = std::min(declared, size - at - 3);
    if ((type & 0x80) == 0 || id == 0) ++id;
    asked.emplace(id, type & 0x7F);  // a reused id keeps its first type: it gets an ERROR
    host.host->Deliver(session, Frame{static_cast<std::uint16_t>(type & 0x7F), id,
                                      std::vector<std::uint8_t>(data + at + 3, data + at + 3 + length)});
    at += 3 + length;
    host.host->Poll();
  }
  host.host->Poll();
  for (const auto& [request, type] : asked) {
    const int count = replies.count(request) ? replies[request] : 0;
    const bool wait = type == static_cast<std::uint16_t>(MessageType::kWait);
    // A reused id gets an OUT_OF_ORDER error of its own: up to one reply per delivery.
    if (count == 0 && !wait) Fail("a request got no reply");
  }
  host.host->Close(session);
  host.host->Poll();
  if (host.host->allocations() != host.baseline) Fail("a closed session kept device memory");
  return 0;
}
