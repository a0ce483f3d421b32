// `ref`: the golden model, in process. Launches run when the host waits, for as long as it waits.
#include "sim/model/golden_model.hpp"
#include "systole/link.hpp"

namespace systole {
namespace {

class RefLink final : public Link {
 public:
  explicit RefLink(const Config& config) : model_(config) {}

  std::string_view Uri() const override { return "ref"; }
  std::uint32_t ReadRegister(std::uint32_t offset) override { return model_.ReadRegister(offset); }
  void WriteRegister(std::uint32_t offset, std::uint32_t value) override {
    model_.WriteRegister(offset, value);
  }
  void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    model_.WriteMemory(address, bytes);
  }
  void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) override {
    model_.ReadMemory(address, bytes);
  }
  // The model is synchronous: waiting means running it, until the queue drains or the
  // timeout passes (the launch then pauses between two instructions and resumes next time).
  bool WaitForInterrupt(std::chrono::milliseconds timeout) override {
    const auto now = std::chrono::steady_clock::now();
    const bool forever = timeout >= std::chrono::hours(24 * 365);  // now + timeout would overflow
    return model_.RunUntil(forever ? std::chrono::steady_clock::time_point::max() : now + timeout);
  }
  void Record(trace::Timeline* timeline) override { model_.Record(timeline); }

 private:
  model::GoldenModel model_;
};

}  // namespace

std::unique_ptr<Link> OpenRefLink(const Config& config) { return std::make_unique<RefLink>(config); }

}  // namespace systole
