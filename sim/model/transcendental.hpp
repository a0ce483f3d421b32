// The transcendental step of VECTOR (`math=`): exp, reciprocal, rsqrt, tanh, sigmoid, the two
// GELU forms and log, each written as the exact sequence of fp32 operations and bit manipulations of
// docs/NUMERICS.md ("Transcendental functions"). The RTL (rtl/vector/systole_vector_math*.sv)
// performs the same sequence, so every function here is a specification, not an approximation
// of one: change a constant or the order of two operations and the RTL must change with it.
//
// Every arithmetic step is one of numerics.hpp's AddF32 / SubF32 / MulF32 / MaxF32 / MinF32
// (round to nearest even, flush to zero, canonical NaN); the rest is integer work on the
// exponent field. Inputs and results are fp32 bit patterns.
#pragma once

#include <array>
#include <cstdint>

#include "arch/isa/isa.hpp"

namespace systole::model {

// The constants of the algorithms, as fp32 bits (docs/NUMERICS.md lists the same values).
namespace math_constants {
inline constexpr std::uint32_t kOne = 0x3F800000;           // 1
inline constexpr std::uint32_t kTwo = 0x40000000;           // 2
inline constexpr std::uint32_t kHalf = 0x3F000000;          // 0.5
inline constexpr std::uint32_t kThreeHalves = 0x3FC00000;   // 1.5
// The argument clamp: e^x * 2^s for |s| <= 64 is 0 below -150 and infinite above 134.
inline constexpr std::uint32_t kExpLow = 0xC3160000;        // -150
inline constexpr std::uint32_t kExpHigh = 0x43060000;       // 134
inline constexpr std::uint32_t kLog2e = 0x3FB8AA3B;         // log2(e)
inline constexpr std::uint32_t kRoundMagic = 0x4B400000;    // 1.5 * 2^23: (t + M) - M = rint(t)
inline constexpr std::uint32_t kLn2Hi = 0x3F317200;         // ln 2, 15 significant bits
inline constexpr std::uint32_t kLn2Lo = 0x35BFBE8E;         // ln 2 - kLn2Hi
// (e^r - 1) / r = sum of r^i / (i+1)!, i = 0..6: kExpQ[i] = 1/(i+1)! rounded to fp32.
inline constexpr std::array<std::uint32_t, 7> kExpQ = {
    0x3F800000, 0x3F000000, 0x3E2AAAAB, 0x3D2AAAAB, 0x3C088889, 0x3AB60B61, 0x39500D01};
inline constexpr std::uint32_t kRecipSeedA = 0x3FB4B4B5;    // 24/17: 1/d ~ 24/17 - 8/17 d
inline constexpr std::uint32_t kRecipSeedB = 0x3EF0F0F1;    // 8/17 (error <= 1/17 on [1, 2))
inline constexpr unsigned kRecipNewtonSteps = 3;
inline constexpr std::uint32_t kRsqrtMagic = 0x5F3759DF;    // seed: magic - (bits >> 1)
inline constexpr unsigned kRsqrtNewtonSteps = 3;
inline constexpr std::uint32_t kTanhClamp = 0x41200000;     // 10: tanh(|x| >= 10) rounds to 1
inline constexpr std::uint32_t kGeluCubic = 0x3D372713;     // 0.044715
inline constexpr std::uint32_t kGeluTanhScale = 0x3FCC422A; // 2 * sqrt(2/pi)
inline constexpr std::uint32_t kInvSqrt2 = 0x3F3504F3;      // 1/sqrt(2)
// The GELUs of negative x carry their small factor (sigmoid, erfc) scaled by 2^64 and scale
// the product with x back at the end, so that the product flushes only when the result does.
inline constexpr std::int32_t kGeluShift = 64;
inline constexpr std::uint32_t kTwoToMinusGeluShift = 0x1F800000;  // 2^-64
// erfc(z) = t * exp(P(t) - z^2), t = 1 / (1 + z/2): kErfcP[i] is the coefficient of t^i, a
// least-squares fit at Chebyshev nodes of t in [1/6, 1] (z in [0, 10]) made for Systole
// (relative error 4.8e-8 in float64 before fp32 rounding).
inline constexpr std::array<std::uint32_t, 10> kErfcP = {
    0xBFA1FA33, 0x3F7FA666, 0x3EC5F5BB, 0x3D0DBBAA, 0x3AA62524,
    0xBDA46A11, 0xBF323D91, 0x3F940FDA, 0xBF2E4AB1, 0x3E146896};
// log(v) = k ln2 + log(m), v = m 2^k with m in [sqrt(1/2), sqrt 2): a fraction field at or above
// sqrt 2's takes m's exponent field 126 instead of 127.
inline constexpr std::uint32_t kSqrt2Fraction = 0x3504F3;   // fraction field of sqrt 2 (0x3FB504F3)
// log(m) = 2 atanh(s) = 2s (1 + s^2/3 + s^4/5 + ...), s = (m - 1) / (m + 1), |s| <= 0.1716:
// kLogQ[i] = 1/(2i+1) rounded to fp32; the first term left out, s^10/11, is below 2e-9.
inline constexpr std::array<std::uint32_t, 5> kLogQ = {0x3F800000, 0x3EAAAAAB, 0x3E4CCCCD, 0x3E124925, 0x3DE38E39};
}  // namespace math_constants

// p * 2^k on the exponent field: a result exponent field >= 255 is infinity, <= 0 is zero
// (flush to zero), both with p's sign; a zero, infinite or NaN p is returned unchanged (a NaN
// as the canonical NaN).
std::uint32_t ScaleByPowerOfTwo(std::uint32_t p, std::int32_t k);

std::uint32_t ExpF32(std::uint32_t v);
// e^v * 2^s, -64 <= s <= 64, with 2^s applied to the exponent field (exactly).
std::uint32_t ExpScaledF32(std::uint32_t v, std::int32_t s);
// e^v - 1 for 0 <= v <= 20, accurate near 0 (tanh's building block).
std::uint32_t Expm1F32(std::uint32_t v);
std::uint32_t ReciprocalF32(std::uint32_t v);
std::uint32_t RsqrtF32(std::uint32_t v);
std::uint32_t TanhF32(std::uint32_t v);
std::uint32_t SigmoidF32(std::uint32_t v);
std::uint32_t GeluTanhF32(std::uint32_t v);
std::uint32_t GeluErfF32(std::uint32_t v);
std::uint32_t LogF32(std::uint32_t v);

// VECTOR's math step: `v` unchanged for kNone.
std::uint32_t ApplyMathF32(isa::VecMath math, std::uint32_t v);

}  // namespace systole::model
