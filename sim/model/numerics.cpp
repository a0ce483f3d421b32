// Compile-time pins of docs/NUMERICS.md: a few cases the rest of the model depends on, checked
// whenever the library builds (the unit tests cover the corner cases in depth).
#include "sim/model/numerics.hpp"

namespace systole::model {
namespace {

static_assert(F32ToBf16(0x3F808000) == 0x3F80, "tie rounds to even (down)");
static_assert(F32ToBf16(0x3F818000) == 0x3F82, "tie rounds to even (up)");
static_assert(F32ToBf16(0x7F7FFFFF) == 0x7F80, "overflow becomes infinity");
static_assert(F32ToBf16(0x7F800001) == kCanonicalNanBf16, "NaN becomes canonical");
static_assert(F32ToBf16(0x80000001) == 0x8000, "subnormal input flushes to a signed zero");
static_assert(Bf16ToF32(0x0001) == 0 && Bf16ToF32(0x8001) == kF32SignBit, "bf16 FTZ");
static_assert(AddF32(0x00000000, 0x80000000) == 0, "(+0) + (-0) = +0");
static_assert(MaxF32(0x80000000, 0x00000000) == 0 && MinF32(0x80000000, 0) == kF32SignBit,
              "signed zeros in max/min");
static_assert(Requantize(-3, 1, 1) == -1 && Requantize(3, 1, 1) == 2, "half rounds up");
static_assert(SaturateInt8(200) == 127 && SaturateInt8(-200) == -128, "int8 saturation");

}  // namespace
}  // namespace systole::model
