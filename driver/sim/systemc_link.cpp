// `systemc`: a Systole device in the process's SystemC/TLM-2.0 platform (sim/systemc/,
// docs/SYSTEMC.md). Every access is a TLM transaction from the platform's host initiator through
// its interconnect to the device's sockets, so the driver exercises the same sockets an
// embedding platform uses; the platform's kernel runs on a thread of its own (platform.hpp says
// why), and each call here is one job on it. Waiting for the device runs the simulation.
//
// This library (systole_systemc_link) registers the scheme with OpenLink when a program links
// it, as systole_sim_links does for the Verilated devices; it needs SystemC, not Verilator.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <string>

#include "sim/systemc/device_model.hpp"
#include "sim/systemc/platform.hpp"
#include "systole/link.hpp"

namespace systole {
namespace {

using systemc::Host;
using systemc::Platform;

// One TLM transaction carries at most this many bytes (its length is 32 bits wide).
constexpr std::size_t kMaxTransactionBytes = std::size_t{1} << 30;
// A wait runs the simulation in slices of this much wall-clock time, so the jobs of other
// threads' devices interleave with a long wait.
constexpr std::chrono::milliseconds kWaitSlice{50};

std::string_view ResponseName(tlm::tlm_response_status status) {
  switch (status) {
    case tlm::TLM_ADDRESS_ERROR_RESPONSE: return "TLM_ADDRESS_ERROR_RESPONSE";
    case tlm::TLM_BURST_ERROR_RESPONSE: return "TLM_BURST_ERROR_RESPONSE";
    case tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE: return "TLM_BYTE_ENABLE_ERROR_RESPONSE";
    case tlm::TLM_COMMAND_ERROR_RESPONSE: return "TLM_COMMAND_ERROR_RESPONSE";
    case tlm::TLM_INCOMPLETE_RESPONSE: return "TLM_INCOMPLETE_RESPONSE";
    default: return "TLM_GENERIC_ERROR_RESPONSE";
  }
}

class SystemcLink final : public Link {
 public:
  // Builds the model on the kernel thread, which is the only one to touch it (a Verilated
  // model must stay on one thread).
  SystemcLink(std::string uri, std::string_view model, const Config& config)
      : uri_(std::move(uri)), platform_(Platform::Get()), memory_bytes_(config.memory_bytes) {
    try {
      platform_.Run([&](Host&) { slot_ = platform_.Insert(systemc::MakeDeviceModel(model, config)); });
    } catch (const std::exception& error) {  // no such model or slot, an invalid configuration
      throw LinkError(uri_, error.what());
    }
  }
  ~SystemcLink() override {
    try {
      platform_.Run([&](Host&) { platform_.Remove(slot_); });
    } catch (...) {  // NOLINT(bugprone-empty-catch): nothing to tell from a destructor
    }
  }

  std::string_view Uri() const override { return uri_; }

  std::uint32_t ReadRegister(std::uint32_t offset) override {
    std::array<std::uint8_t, 4> bytes{};
    Access(tlm::TLM_READ_COMMAND, Platform::RegisterBase(slot_) + offset, bytes,
           fmt::format("read register 0x{:x}", offset));
    return bytes[0] | std::uint32_t{bytes[1]} << 8 | std::uint32_t{bytes[2]} << 16 |
           std::uint32_t{bytes[3]} << 24;
  }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    std::array<std::uint8_t, 4> bytes{};
    for (unsigned i = 0; i < 4; ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
    Access(tlm::TLM_WRITE_COMMAND, Platform::RegisterBase(slot_) + offset, bytes,
           fmt::format("write register 0x{:x}", offset));
  }
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    CheckMemoryRange("write", address, bytes.size());
    // TLM's data pointer is not const; a write only reads through it.
    std::span<std::uint8_t> data(const_cast<std::uint8_t*>(bytes.data()), bytes.size());
    Chunked(tlm::TLM_WRITE_COMMAND, address, data, "write");
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    CheckMemoryRange("read", address, bytes.size());
    Chunked(tlm::TLM_READ_COMMAND, address, bytes, "read");
  }
  bool WaitForInterrupt(std::chrono::milliseconds timeout) override {
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = timeout >= std::chrono::hours(24 * 365) ? std::chrono::steady_clock::time_point::max()
                                                                  : start + timeout;
    for (;;) {
      const auto slice_end = std::min(deadline, std::chrono::steady_clock::now() + kWaitSlice);
      bool done = false;
      platform_.Run([&](Host&) { done = platform_.WaitForDevice(slot_, slice_end); });
      if (done) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
    }
  }
  // Timelines come from the golden model's cycle estimate, as on `ref`.
  void Record(trace::Timeline* timeline) override {
    bool recorded = false;
    platform_.Run([&](Host&) {
      auto* golden = dynamic_cast<systemc::GoldenDeviceModel*>(platform_.device(slot_).model());
      if (golden != nullptr) golden->golden().Record(timeline);
      recorded = golden != nullptr;
    });
    if (!recorded && timeline != nullptr) Link::Record(timeline);  // refuses, saying so
  }

 private:
  // Checked here as the golden model checks it, so that the message names the memory, not
  // only the TLM response.
  void CheckMemoryRange(std::string_view what, std::uint64_t address, std::uint64_t length) const {
    if (length > memory_bytes_ || address > memory_bytes_ - length) {
      throw LinkError(uri_, fmt::format("device memory {}: address 0x{:x} length {} is outside the "
                                        "{}-byte memory",
                                        what, address, length, memory_bytes_));
    }
  }
  void Chunked(tlm::tlm_command command, std::uint64_t address, std::span<std::uint8_t> bytes,
               std::string_view what) {
    std::size_t done = 0;
    do {
      const std::size_t length = std::min(kMaxTransactionBytes, bytes.size() - done);
      Access(command, Platform::MemoryBase(slot_) + address + done, bytes.subspan(done, length),
             fmt::format("{} {} bytes of device memory at 0x{:x}", what, length, address + done));
      done += length;
    } while (done < bytes.size());
  }
  void Access(tlm::tlm_command command, std::uint64_t address, std::span<std::uint8_t> bytes,
              const std::string& what) {
    tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
    std::string failure;
    platform_.Run([&](Host& host) {
      status = host.Transport(command, address, bytes);
      if (status != tlm::TLM_OK_RESPONSE) failure = platform_.device(slot_).failure();
    });
    if (status != tlm::TLM_OK_RESPONSE) {
      throw LinkError(uri_, fmt::format("{}: {}{}", what, ResponseName(status),
                                        failure.empty() ? "" : " (the device model failed: " + failure + ")"));
    }
  }

  std::string uri_;
  Platform& platform_;
  std::uint64_t memory_bytes_;
  unsigned slot_ = 0;
};

std::unique_ptr<Link> OpenSystemcUri(std::string_view uri, const Config& config) {
  // OpenLink has checked the option: systemc, or systemc?model= golden, hls or rtl.
  constexpr std::string_view kModel = "systemc?model=";
  const std::string_view model = uri.starts_with(kModel) ? uri.substr(kModel.size()) : "golden";
  try {
    config.Validate("systemc device");
  } catch (const std::exception& error) {
    throw LinkError(uri, error.what());
  }
  return std::make_unique<SystemcLink>(std::string(uri), model, config);
}

// Runs when a program that links systole_systemc_link starts (an OBJECT library: never dropped).
[[maybe_unused]] const bool kRegistered = [] {
  RegisterLinkScheme("systemc", &OpenSystemcUri);
  return true;
}();

}  // namespace
}  // namespace systole
