// systemc?model=rtl — the Verilated SoC behind the platform's sockets — on every HLO example and
// every corpus program but ResNet-50, against ref: bit-identical outputs, the same device steps,
// MACs and MXU busy cycles. Minutes on the RTL, so `long` (make test-long); programs/ runs two of
// them in make test. Skipped for a configuration whose SoC the build does not Verilate.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/rtl/rtl_device.hpp"
#include "tests/systemc/programs/compare.hpp"

namespace systole::systemc {
namespace {

using testing::Model;

class RtlPlatform : public ::testing::TestWithParam<Model> {};

TEST_P(RtlPlatform, MatchesRefBitForBit) {
  const auto built = rtl::BuiltRtlConfigs();
  if (std::find(built.begin(), built.end(), GetParam().config) == built.end()) {
    GTEST_SKIP() << "no Verilated SoC for " << GetParam().config << " in this build";
  }
  testing::ExpectMatchesRef(GetParam(), "systemc?model=rtl", false);
}

INSTANTIATE_TEST_SUITE_P(
    Programs, RtlPlatform,
    ::testing::ValuesIn(testing::AllPrograms()), testing::ProgramName);

}  // namespace
}  // namespace systole::systemc
