// BridgeModel: the C++ reference for rtl/host/systole_usb_bridge — what the bridge must answer
// to a burst of bytes, built on the driver's own codec (systole/protocol.hpp), so the RTL and
// the host agree on every frame by construction of the test.
//
// A burst is bytes followed by a pause longer than the bridge's RX timeout: a frame still
// unfinished at the end of a burst is answered MALFORMED. The device behind the bridge is a
// register array and a byte memory, which the test's bus stubs share with the model.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "systole/protocol.hpp"

namespace systole::rtl::test {

struct BridgeModelOptions {
  std::uint32_t max_payload = 256;
  std::uint64_t memory_bytes = 8192;
  std::uint32_t register_window = 512;  // REG_WINDOW_BYTES
  std::uint32_t status_offset = 0x44;   // STATUS: bit 0 BUSY, bits 15:8 CMDQ_LEVEL
};

class BridgeModel {
 public:
  BridgeModel(const BridgeModelOptions& options, std::vector<std::uint32_t>& registers,
              std::vector<std::uint8_t>& memory)
      : options_(options), registers_(registers), memory_(memory) {}

  // The reply bytes for one burst; `irq` is the interrupt line during it. Register writes and
  // memory writes are applied to the shared arrays.
  std::vector<std::uint8_t> Burst(std::span<const std::uint8_t> bytes, bool irq);
  // Bytes moved through the host memory port so far (PERF_BYTES_HOST's view).
  std::uint64_t host_bytes() const { return host_bytes_; }

 private:
  void Execute(const protocol::Frame& frame, bool irq, std::vector<std::uint8_t>& out);

  BridgeModelOptions options_;
  std::vector<std::uint32_t>& registers_;
  std::vector<std::uint8_t>& memory_;
  bool session_ = false;
  std::uint32_t last_id_ = 0;
  std::uint64_t host_bytes_ = 0;
};

}  // namespace systole::rtl::test
