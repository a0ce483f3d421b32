// The transcendental functions of VECTOR, step by step as docs/NUMERICS.md specifies them.
#include "sim/model/transcendental.hpp"

#include "sim/model/numerics.hpp"

namespace systole::model {

using namespace math_constants;

namespace {

constexpr std::uint32_t kExponentShift = 23;
constexpr std::uint32_t kF32Infinity = 0x7F800000;

constexpr std::uint32_t ExponentField(std::uint32_t bits) { return (bits >> kExponentShift) & 0xFF; }
constexpr std::uint32_t WithExponent(std::uint32_t bits, std::uint32_t field) {
  return (bits & ~kF32ExponentMask) | (field << kExponentShift);
}
constexpr std::uint32_t Negate(std::uint32_t bits) { return bits ^ kF32SignBit; }
constexpr std::uint32_t Magnitude(std::uint32_t bits) { return bits & ~kF32SignBit; }
constexpr bool IsInfinity(std::uint32_t bits) { return Magnitude(bits) == kF32Infinity; }

// exp's argument reduction and polynomial: v = k ln2 + r, |r| <= ~ln2/2, and m = e^r - 1.
struct ExpReduced {
  std::int32_t k;
  std::uint32_t m;
};

ExpReduced ReduceExp(std::uint32_t v) {
  const std::uint32_t c = MinF32(MaxF32(v, kExpLow), kExpHigh);
  const std::uint32_t t = MulF32(c, kLog2e);
  const std::uint32_t kf = SubF32(AddF32(t, kRoundMagic), kRoundMagic);
  std::uint32_t r = SubF32(c, MulF32(kf, kLn2Hi));
  r = SubF32(r, MulF32(kf, kLn2Lo));
  std::uint32_t q = kExpQ.back();
  for (std::size_t i = kExpQ.size() - 1; i-- > 0;) q = AddF32(MulF32(q, r), kExpQ[i]);
  return {static_cast<std::int32_t>(FloatFromBits(kf)), MulF32(r, q)};
}

}  // namespace

std::uint32_t ScaleByPowerOfTwo(std::uint32_t p, std::int32_t k) {
  if (IsNanF32(p)) return kCanonicalNanF32;
  if (Magnitude(p) == 0 || IsInfinity(p)) return p;
  const std::int32_t field = static_cast<std::int32_t>(ExponentField(p)) + k;
  if (field >= 255) return (p & kF32SignBit) | kF32Infinity;
  if (field <= 0) return p & kF32SignBit;
  return WithExponent(p, static_cast<std::uint32_t>(field));
}

std::uint32_t ExpScaledF32(std::uint32_t v, std::int32_t s) {
  if (IsNanF32(v)) return kCanonicalNanF32;
  const ExpReduced reduced = ReduceExp(FlushF32(v));
  return ScaleByPowerOfTwo(AddF32(kOne, reduced.m), reduced.k + s);
}

std::uint32_t ExpF32(std::uint32_t v) { return ExpScaledF32(v, 0); }

std::uint32_t Expm1F32(std::uint32_t v) {
  const ExpReduced reduced = ReduceExp(FlushF32(v));
  if (reduced.k == 0) return reduced.m;
  return SubF32(ScaleByPowerOfTwo(AddF32(kOne, reduced.m), reduced.k), kOne);
}

std::uint32_t ReciprocalF32(std::uint32_t v) {
  if (IsNanF32(v)) return kCanonicalNanF32;
  v = FlushF32(v);
  const std::uint32_t sign = v & kF32SignBit;
  if (Magnitude(v) == 0) return sign | kF32Infinity;
  if (IsInfinity(v)) return sign;
  // 1/v = (1/d) * 2^(127 - e) with d = 1.fraction in [1, 2).
  const std::uint32_t d = WithExponent(Magnitude(v), 127);
  std::uint32_t y = SubF32(kRecipSeedA, MulF32(kRecipSeedB, d));
  for (unsigned step = 0; step < kRecipNewtonSteps; ++step) {
    const std::uint32_t error = SubF32(kOne, MulF32(d, y));
    y = AddF32(y, MulF32(y, error));
  }
  return sign | ScaleByPowerOfTwo(y, 127 - static_cast<std::int32_t>(ExponentField(v)));
}

std::uint32_t RsqrtF32(std::uint32_t v) {
  if (IsNanF32(v)) return kCanonicalNanF32;
  v = FlushF32(v);
  if (Magnitude(v) == 0) return (v & kF32SignBit) | kF32Infinity;  // 1/sqrt(-0) = -inf
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
    const std::uint32_t h = MulF32(MulF32(half_d, y), y);
    y = MulF32(y, SubF32(kThreeHalves, h));
  }
  return ScaleByPowerOfTwo(y, -half_power);
}

std::uint32_t TanhF32(std::uint32_t v) {
  if (IsNanF32(v)) return kCanonicalNanF32;
  v = FlushF32(v);
  // tanh(a) = (e^2a - 1) / (e^2a - 1 + 2), a = min(|v|, 10), and the sign of v.
  const std::uint32_t a = MinF32(Magnitude(v), kTanhClamp);
  const std::uint32_t em = Expm1F32(AddF32(a, a));
  const std::uint32_t t = MulF32(em, ReciprocalF32(AddF32(em, kTwo)));
  return t | (v & kF32SignBit);
}

std::uint32_t SigmoidF32(std::uint32_t v) {
  if (IsNanF32(v)) return kCanonicalNanF32;
  return ReciprocalF32(AddF32(kOne, ExpF32(Negate(FlushF32(v)))));
}

std::uint32_t GeluTanhF32(std::uint32_t v) {
  if (IsNanF32(v)) return kCanonicalNanF32;
  v = FlushF32(v);
  // 0.5 (1 + tanh(z)) = sigmoid(2z) = 1 / (1 + e^-2z): x / (1 + e^-u) with
  // u = 2 sqrt(2/pi) x (1 + 0.044715 x^2); for x < 0 the denominator is scaled by 2^-64.
  const bool negative = (v & kF32SignBit) != 0;
  const std::int32_t shift = negative ? kGeluShift : 0;
  const std::uint32_t inner = MulF32(v, AddF32(kOne, MulF32(kGeluCubic, MulF32(v, v))));
  const std::uint32_t u = MulF32(kGeluTanhScale, inner);
  const std::uint32_t denominator =
      AddF32(negative ? kTwoToMinusGeluShift : kOne, ExpScaledF32(Negate(u), -shift));
  return ScaleByPowerOfTwo(MulF32(v, ReciprocalF32(denominator)), -shift);
}

std::uint32_t GeluErfF32(std::uint32_t v) {
  if (IsNanF32(v)) return kCanonicalNanF32;
  v = FlushF32(v);
  // Phi(x) = erfc(-x / sqrt 2) / 2, with erfc of z = |x| / sqrt 2 >= 0 and
  // erfc(-z) = 2 - erfc(z).
  const std::uint32_t z = MulF32(Magnitude(v), kInvSqrt2);
  const std::uint32_t t = ReciprocalF32(AddF32(kOne, MulF32(kHalf, z)));
  std::uint32_t p = kErfcP.back();
  for (std::size_t i = kErfcP.size() - 1; i-- > 0;) p = AddF32(MulF32(p, t), kErfcP[i]);
  // For x < 0, Phi(x) = erfc(z) / 2 is carried scaled by 2^64.
  const bool negative = (v & kF32SignBit) != 0;
  const std::int32_t shift = negative ? kGeluShift : 0;
  const std::uint32_t erfc = MulF32(t, ExpScaledF32(SubF32(p, MulF32(z, z)), shift));
  const std::uint32_t half_erfc = MulF32(kHalf, erfc);
  const std::uint32_t phi = negative ? half_erfc : SubF32(kOne, half_erfc);
  return ScaleByPowerOfTwo(MulF32(v, phi), -shift);
}

std::uint32_t LogF32(std::uint32_t v) {
  if (IsNanF32(v)) return kCanonicalNanF32;
  v = FlushF32(v);
  if (Magnitude(v) == 0) return kF32SignBit | kF32Infinity;  // log(+-0) = -inf
  if ((v & kF32SignBit) != 0) return kCanonicalNanF32;
  if (IsInfinity(v)) return v;
  // v = m * 2^k with m in [sqrt(1/2), sqrt 2): exponent field 127 (k = e - 127), or 126 (k = e - 126)
  // when the fraction is at or above sqrt 2's.
  const bool high = (v & ~(kF32SignBit | kF32ExponentMask)) >= kSqrt2Fraction;
  const std::uint32_t m = WithExponent(v, high ? 126 : 127);
  const std::int32_t k = static_cast<std::int32_t>(ExponentField(v)) - (high ? 126 : 127);
  // float(k), exactly: the bits of 1.5 * 2^23 + k, less 1.5 * 2^23 (exp's rounding trick reversed).
  const std::uint32_t kf = SubF32(kRoundMagic + static_cast<std::uint32_t>(k), kRoundMagic);
  const std::uint32_t s = MulF32(SubF32(m, kOne), ReciprocalF32(AddF32(m, kOne)));  // m - 1 is exact
  const std::uint32_t w = MulF32(s, s);
  std::uint32_t q = kLogQ.back();
  for (std::size_t i = kLogQ.size() - 1; i-- > 0;) q = AddF32(MulF32(q, w), kLogQ[i]);
  const std::uint32_t log_m = MulF32(AddF32(s, s), q);
  return AddF32(MulF32(kf, kLn2Hi), AddF32(MulF32(kf, kLn2Lo), log_m));  // k ln2: the high part exact
}

std::uint32_t ApplyMathF32(isa::VecMath math, std::uint32_t v) {
  switch (math) {
    case isa::VecMath::kNone: return v;
    case isa::VecMath::kExp: return ExpF32(v);
    case isa::VecMath::kRecip: return ReciprocalF32(v);
    case isa::VecMath::kRsqrt: return RsqrtF32(v);
    case isa::VecMath::kTanh: return TanhF32(v);
    case isa::VecMath::kSigmoid: return SigmoidF32(v);
    case isa::VecMath::kGeluTanh: return GeluTanhF32(v);
    case isa::VecMath::kGeluErf: return GeluErfF32(v);
    case isa::VecMath::kLog: return LogF32(v);
  }
  return v;
}

}  // namespace systole::model
