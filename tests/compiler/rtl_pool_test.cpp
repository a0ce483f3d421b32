// Max pools on the Verilated RTL (the `rtl` device, from driver/sim/); the placement tests that
// need no Verilated model are pool_placement_test.cpp.
#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

// The padded pool on the Verilated RTL: two bands per slot (the padding columns kept between
// them), channel chunks of 16 and 3, bit-identical to the golden model and the interpreter.
TEST(PoolPlacement, PaddedPoolOnRtlMatchesRefAndInterpreterBitForBit) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / ("h8c_pool_pad_" + std::to_string(::getpid()) + ".hlo");
  std::ofstream(path) << R"(HloModule pool_pad
max_fn {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
ENTRY e {
  x = bf16[1,112,112,19] parameter(0)
  ninf = bf16[] constant(-inf)
  ROOT p = bf16[1,56,56,19] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max_fn
})";
  testing::ExpectRtlMatchesRefAndInterpreter(path, "small", 1, 0.0);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace systole::compiler
