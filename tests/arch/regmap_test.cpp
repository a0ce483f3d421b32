// The register map: lookups, field helpers, counters, and identity registers that round-trip
// every shipped configuration.
#include <gtest/gtest.h>

#include <map>

#include "arch/config/config.hpp"
#include "arch/regs/identity.hpp"
#include "arch/regs/regmap.hpp"

namespace systole::regs {
namespace {

TEST(RegMap, NamedOffsetsAreCompileTimeConstants) {
  static_assert(OffsetOf("ID_MAGIC") == 0x000);
  static_assert(OffsetOf("DOORBELL") == 0x06C);
  static_assert(Mask(FieldOf("STATUS", "CMDQ_LEVEL")) == 0xFF00u);
  EXPECT_EQ(FindRegister("STATUS")->offset, OffsetOf("STATUS"));
  EXPECT_EQ(FindRegister(0x044)->name, "STATUS");
  EXPECT_EQ(FindRegister(0x1FC), nullptr);
}

TEST(RegMap, FieldHelpers) {
  constexpr BitField level = FieldOf("STATUS", "CMDQ_LEVEL");
  EXPECT_EQ(Place(3, level), 0x300u);
  EXPECT_EQ(Extract(0xAB01u, level), 0xABu);
  EXPECT_EQ(Place(0x1FF, level), 0xFF00u) << "Place truncates to the field";
}

TEST(RegMap, CountersArePairsInOrder) {
  const auto counters = Counters();
  ASSERT_GE(counters.size(), 12u);
  EXPECT_EQ(counters.front().name, "CYCLES");
  for (const Counter& counter : counters) {
    const Register* hi = FindRegister(counter.lo + 4);
    ASSERT_NE(hi, nullptr) << counter.name;
    EXPECT_EQ(hi->name, "PERF_" + std::string(counter.name) + "_HI");
  }
}

TEST(RegMap, EveryErrorCodeHasANameAndDescription) {
  for (std::uint32_t code = 0; code < kNumErrorCodes; ++code) {
    EXPECT_NE(ErrorName(static_cast<ErrorCode>(code)), "UNKNOWN") << code;
    EXPECT_FALSE(ErrorDescription(static_cast<ErrorCode>(code)).empty()) << code;
  }
  EXPECT_EQ(ErrorName(static_cast<ErrorCode>(999)), "UNKNOWN");
}

TEST(Identity, EveryShippedConfigurationRoundTripsThroughTheRegisters) {
  for (const std::string& name : ListConfigs()) {
    const Config config = LoadConfig(name);
    std::map<std::uint32_t, std::uint32_t> window;
    for (const auto& [offset, value] : IdentityRegisters(config)) window[offset] = value;
    Config decoded = DecodeIdentity([&window](std::uint32_t offset) { return window[offset]; });
    decoded.description = config.description;
    EXPECT_EQ(decoded, config) << name;
  }
}

TEST(Identity, RejectsWrongMagicAndVersion) {
  std::map<std::uint32_t, std::uint32_t> window;
  for (const auto& [offset, value] : IdentityRegisters(LoadConfig("tiny"))) window[offset] = value;
  auto read = [&window](std::uint32_t offset) { return window[offset]; };
  window[OffsetOf("ID_MAGIC")] = 0xDEADBEEF;
  EXPECT_THROW(DecodeIdentity(read), ConfigError);
  window[OffsetOf("ID_MAGIC")] = kMagic;
  window[OffsetOf("ID_VERSION")] = Place(99, FieldOf("ID_VERSION", "MAJOR"));
  EXPECT_THROW(DecodeIdentity(read), ConfigError);
}

}  // namespace
}  // namespace systole::regs
