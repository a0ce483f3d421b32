// The transcendental step of VECTOR (`math=`): exp, reciprocal, rsqrt, tanh, sigmoid, the two
// GELU forms and log, each written once as the exact sequence of fp32 operations and bit manipulations of
// docs/NUMERICS.md ("Transcendental functions"). Two implementations of fp32 arithmetic run it:
//  * the golden model's (sim/model/numerics.hpp: the host's IEEE operations, then flush to zero
//    and a canonical NaN), in sim/model/transcendental.cpp;
//  * the HLS kernels' (hls/numerics/fp32_bits.hpp: the same rounding spelled out on integers),
//    in hls/kernels/vector_ops.hpp.
// The RTL (rtl/vector/systole_vector_math*.sv) performs the same sequence, so every function here
// is a specification, not an approximation of one: change a constant or the order of two
// operations and the RTL must change with it.
//
// `Fp` is a class with static Add, Sub, Mul, Max and Min on fp32 bit patterns (round to nearest
// even, flush to zero, canonical NaN). Everything else is integer work on the exponent field.
// Header-only C++17 (the Vitis testbench's dialect), constexpr, fixed-width integers and loops
// of constant trip count, so that Vitis HLS can synthesize it.
#pragma once

#include <array>
#include <cstdint>

#include "arch/numerics/bf16.hpp"

namespace systole::numerics {

// VECTOR's `math` field, defined here so that the HLS kernels can name it without the ISA's
// C++20 header; arch/isa/isa.hpp makes it isa::VecMath.
enum class MathFunction : std::uint8_t {
  kNone = 0,
  kExp = 1,
  kRecip = 2,
  kRsqrt = 3,
  kTanh = 4,
  kSigmoid = 5,
  kGeluTanh = 6,  // x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))): jax.nn.gelu's default
  kGeluErf = 7,   // x * 0.5 * (1 + erf(x / sqrt(2))): jax.nn.gelu(approximate=False)
  kLog = 8,       // natural logarithm: jax.nn.log_softmax's log of the row sums
};

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

namespace transcendental_detail {
inline constexpr std::uint32_t kExponentShift = 23;
inline constexpr std::uint32_t kInfinity = 0x7F800000;
constexpr std::uint32_t ExponentField(std::uint32_t bits) { return (bits >> kExponentShift) & 0xFF; }
constexpr std::uint32_t WithExponent(std::uint32_t bits, std::uint32_t field) {
  return (bits & ~kF32ExponentMask) | (field << kExponentShift);
}
constexpr std::uint32_t Negate(std::uint32_t bits) { return bits ^ kF32SignBit; }
constexpr std::uint32_t Magnitude(std::uint32_t bits) { return bits & ~kF32SignBit; }
constexpr bool IsInfinity(std::uint32_t bits) { return Magnitude(bits) == kInfinity; }
}  // namespace transcendental_detail

// p * 2^k on the exponent field: a result exponent field >= 255 is infinity, <= 0 is zero
// (flush to zero), both with p's sign; a zero, infinite or NaN p is returned unchanged (a NaN
// as the canonical NaN).
constexpr std::uint32_t ScaleByPowerOfTwo(std::uint32_t p, std::int32_t k) {
  using namespace transcendental_detail;
  if (IsNanF32(p)) return kCanonicalNanF32;
  if (Magnitude(p) == 0 || IsInfinity(p)) return p;
  const std::int32_t field = static_cast<std::int32_t>(ExponentField(p)) + k;
  if (field >= 255) return (p & kF32SignBit) | kInfinity;
  if (field <= 0) return p & kF32SignBit;
  return WithExponent(p, static_cast<std::uint32_t>(field));
}

// The integer an integer-valued fp32 of magnitude below 2^23 holds (exp's k, |k| <= 217), read
// off its bits.
constexpr std::int32_t SmallIntegerOf(std::uint32_t bits) {
  using namespace transcendental_detail;
  const std::uint32_t field = ExponentField(bits);
  if (field < 127) return 0;  // |x| < 1: only zero is an integer there
  const std::uint32_t significand = (bits & 0x007FFFFFu) | 0x00800000u;
  const auto magnitude = static_cast<std::int32_t>(significand >> (150 - field));
  return (bits & kF32SignBit) != 0 ? -magnitude : magnitude;
}

template <class Fp>
struct Transcendental {
  // exp's argument reduction and polynomial: v = k ln2 + r, |r| <= ~ln2/2, and m = e^r - 1.
  struct ExpReduced {
    std::int32_t k;
    std::uint32_t m;
  };
  static constexpr ExpReduced ReduceExp(std::uint32_t v) {
    using namespace math_constants;
    const std::uint32_t c = Fp::Min(Fp::Max(v, kExpLow), kExpHigh);
    const std::uint32_t t = Fp::Mul(c, kLog2e);
    const std::uint32_t kf = Fp::Sub(Fp::Add(t, kRoundMagic), kRoundMagic);
    std::uint32_t r = Fp::Sub(c, Fp::Mul(kf, kLn2Hi));
    r = Fp::Sub(r, Fp::Mul(kf, kLn2Lo));
    std::uint32_t q = kExpQ[kExpQ.size() - 1];
    for (unsigned i = kExpQ.size() - 1; i-- > 0;) q = Fp::Add(Fp::Mul(q, r), kExpQ[i]);
    return {SmallIntegerOf(kf), Fp::Mul(r, q)};
  }

  // e^v * 2^s, -64 <= s <= 64, with 2^s applied to the exponent field (exactly).
  static constexpr std::uint32_t ExpScaled(std::uint32_t v, std::int32_t s) {
    if (IsNanF32(v)) return kCanonicalNanF32;
    const ExpReduced reduced = ReduceExp(FlushF32(v));
    return ScaleByPowerOfTwo(Fp::Add(math_constants::kOne, reduced.m), reduced.k + s);
  }
  static constexpr std::uint32_t Exp(std::uint32_t v) { return ExpScaled(v, 0); }

  // e^v - 1 for 0 <= v <= 20, accurate near 0 (tanh's building block).
  static constexpr std::uint32_t Expm1(std::uint32_t v) {
    using math_constants::kOne;
    const ExpReduced reduced = ReduceExp(FlushF32(v));
    if (reduced.k == 0) return reduced.m;
    return Fp::Sub(ScaleByPowerOfTwo(Fp::Add(kOne, reduced.m), reduced.k), kOne);
  }

  static constexpr std::uint32_t Reciprocal(std::uint32_t v) {
    using namespace math_constants;
    using namespace transcendental_detail;
    if (IsNanF32(v)) return kCanonicalNanF32;
    v = FlushF32(v);
    const std::uint32_t sign = v & kF32SignBit;
    if (Magnitude(v) == 0) return sign | kInfinity;
    if (IsInfinity(v)) return sign;
    // 1/v = (1/d) * 2^(127 - e) with d = 1.fraction in [1, 2).
    const std::uint32_t d = WithExponent(Magnitude(v), 127);
    std::uint32_t y = Fp::Sub(kRecipSeedA, Fp::Mul(kRecipSeedB, d));
    for (unsigned step = 0; step < kRecipNewtonSteps; ++step) {
      const std::uint32_t error = Fp::Sub(kOne, Fp::Mul(d, y));
      y = Fp::Add(y, Fp::Mul(y, error));
    }
    return sign | ScaleByPowerOfTwo(y, 127 - static_cast<std::int32_t>(ExponentField(v)));
  }

  static constexpr std::uint32_t Rsqrt(std::uint32_t v) {
    using namespace math_constants;
    using namespace transcendental_detail;
    if (IsNanF32(v)) return kCanonicalNanF32;
    v = FlushF32(v);
    if (Magnitude(v) == 0) return (v & kF32SignBit) | kInfinity;  // 1/sqrt(-0) = -inf
    if ((v & kF32SignBit) != 0) return kCanonicalNanF32;
    if (IsInfinity(v)) return kF32PositiveZero;
    // v = d * 2^E2 with d in [1, 4) and E2 even: 1/sqrt(v) = (1/sqrt(d)) * 2^(-E2/2).
    const auto e = static_cast<std::int32_t>(ExponentField(v));
    const bool odd_power = (e & 1) == 0;  // e - 127 odd: d takes the extra factor 2
    const std::uint32_t d = WithExponent(v, odd_power ? 128 : 127);
    const std::int32_t half_power = (e - 127 - (odd_power ? 1 : 0)) / 2;  // exact: even
    const std::uint32_t half_d = WithExponent(d, ExponentField(d) - 1);
    std::uint32_t y = kRsqrtMagic - (d >> 1);
    for (unsigned step = 0; step < kRsqrtNewtonSteps; ++step) {
      const std::uint32_t h = Fp::Mul(Fp::Mul(half_d, y), y);
      y = Fp::Mul(y, Fp::Sub(kThreeHalves, h));
    }
    return ScaleByPowerOfTwo(y, -half_power);
  }

  static constexpr std::uint32_t Tanh(std::uint32_t v) {
    using namespace math_constants;
    using namespace transcendental_detail;
    if (IsNanF32(v)) return kCanonicalNanF32;
    v = FlushF32(v);
    // tanh(a) = (e^2a - 1) / (e^2a - 1 + 2), a = min(|v|, 10), and the sign of v.
    const std::uint32_t a = Fp::Min(Magnitude(v), kTanhClamp);
    const std::uint32_t em = Expm1(Fp::Add(a, a));
    const std::uint32_t t = Fp::Mul(em, Reciprocal(Fp::Add(em, kTwo)));
    return t | (v & kF32SignBit);
  }

  static constexpr std::uint32_t Sigmoid(std::uint32_t v) {
    if (IsNanF32(v)) return kCanonicalNanF32;
    return Reciprocal(Fp::Add(math_constants::kOne, Exp(transcendental_detail::Negate(FlushF32(v)))));
  }

  static constexpr std::uint32_t GeluTanh(std::uint32_t v) {
    using namespace math_constants;
    using namespace transcendental_detail;
    if (IsNanF32(v)) return kCanonicalNanF32;
    v = FlushF32(v);
    // 0.5 (1 + tanh(z)) = sigmoid(2z) = 1 / (1 + e^-2z): x / (1 + e^-u) with
    // u = 2 sqrt(2/pi) x (1 + 0.044715 x^2); for x < 0 the denominator is scaled by 2^-64.
    const bool negative = (v & kF32SignBit) != 0;
    const std::int32_t shift = negative ? kGeluShift : 0;
    const std::uint32_t inner = Fp::Mul(v, Fp::Add(kOne, Fp::Mul(kGeluCubic, Fp::Mul(v, v))));
    const std::uint32_t u = Fp::Mul(kGeluTanhScale, inner);
    const std::uint32_t denominator =
        Fp::Add(negative ? kTwoToMinusGeluShift : kOne, ExpScaled(Negate(u), -shift));
    return ScaleByPowerOfTwo(Fp::Mul(v, Reciprocal(denominator)), -shift);
  }

  static constexpr std::uint32_t GeluErf(std::uint32_t v) {
    using namespace math_constants;
    using namespace transcendental_detail;
    if (IsNanF32(v)) return kCanonicalNanF32;
    v = FlushF32(v);
    // Phi(x) = erfc(-x / sqrt 2) / 2, with erfc of z = |x| / sqrt 2 >= 0 and
    // erfc(-z) = 2 - erfc(z).
    const std::uint32_t z = Fp::Mul(Magnitude(v), kInvSqrt2);
    const std::uint32_t t = Reciprocal(Fp::Add(kOne, Fp::Mul(kHalf, z)));
    std::uint32_t p = kErfcP[kErfcP.size() - 1];
    for (unsigned i = kErfcP.size() - 1; i-- > 0;) p = Fp::Add(Fp::Mul(p, t), kErfcP[i]);
    // For x < 0, Phi(x) = erfc(z) / 2 is carried scaled by 2^64.
    const bool negative = (v & kF32SignBit) != 0;
    const std::int32_t shift = negative ? kGeluShift : 0;
    const std::uint32_t erfc = Fp::Mul(t, ExpScaled(Fp::Sub(p, Fp::Mul(z, z)), shift));
    const std::uint32_t half_erfc = Fp::Mul(kHalf, erfc);
    const std::uint32_t phi = negative ? half_erfc : Fp::Sub(kOne, half_erfc);
    return ScaleByPowerOfTwo(Fp::Mul(v, phi), -shift);
  }

  static constexpr std::uint32_t Log(std::uint32_t v) {
    using namespace math_constants;
    using namespace transcendental_detail;
    if (IsNanF32(v)) return kCanonicalNanF32;
    v = FlushF32(v);
    if (Magnitude(v) == 0) return kF32SignBit | kInfinity;  // log(+-0) = -inf
    if ((v & kF32SignBit) != 0) return kCanonicalNanF32;
    if (IsInfinity(v)) return v;
    // v = m * 2^k with m in [sqrt(1/2), sqrt 2): exponent field 127 (k = e - 127), or 126
    // (k = e - 126) when the fraction is at or above sqrt 2's.
    const bool high = (v & ~(kF32SignBit | kF32ExponentMask)) >= kSqrt2Fraction;
    const std::uint32_t m = WithExponent(v, high ? 126 : 127);
    const std::int32_t k = static_cast<std::int32_t>(ExponentField(v)) - (high ? 126 : 127);
    // float(k), exactly: the bits of 1.5 * 2^23 + k, less 1.5 * 2^23 (exp's rounding trick reversed).
    const std::uint32_t kf = Fp::Sub(kRoundMagic + static_cast<std::uint32_t>(k), kRoundMagic);
    const std::uint32_t s = Fp::Mul(Fp::Sub(m, kOne), Reciprocal(Fp::Add(m, kOne)));  // m - 1 is exact
    const std::uint32_t w = Fp::Mul(s, s);
    std::uint32_t q = kLogQ[kLogQ.size() - 1];
    for (unsigned i = kLogQ.size() - 1; i-- > 0;) q = Fp::Add(Fp::Mul(q, w), kLogQ[i]);
    const std::uint32_t log_m = Fp::Mul(Fp::Add(s, s), q);
    // k ln2 with its high part exact.
    return Fp::Add(Fp::Mul(kf, kLn2Hi), Fp::Add(Fp::Mul(kf, kLn2Lo), log_m));
  }

  // VECTOR's math step: `v` unchanged for kNone.
  static constexpr std::uint32_t Apply(MathFunction math, std::uint32_t v) {
    switch (math) {
      case MathFunction::kNone: return v;
      case MathFunction::kExp: return Exp(v);
      case MathFunction::kRecip: return Reciprocal(v);
      case MathFunction::kRsqrt: return Rsqrt(v);
      case MathFunction::kTanh: return Tanh(v);
      case MathFunction::kSigmoid: return Sigmoid(v);
      case MathFunction::kGeluTanh: return GeluTanh(v);
      case MathFunction::kGeluErf: return GeluErf(v);
      case MathFunction::kLog: return Log(v);
    }
    return v;
  }
};

}  // namespace systole::numerics
