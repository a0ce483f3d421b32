// The transcendental functions of VECTOR on the golden model's fp32 arithmetic
// (arch/numerics/transcendental.hpp holds the algorithms).
#include "sim/model/transcendental.hpp"

#include "arch/numerics/transcendental.hpp"
#include "sim/model/numerics.hpp"

namespace systole::model {
namespace {

// The golden model's fp32 operations as the algorithms' arithmetic.
struct ModelFp {
  static constexpr std::uint32_t Add(std::uint32_t a, std::uint32_t b) { return AddF32(a, b); }
  static constexpr std::uint32_t Sub(std::uint32_t a, std::uint32_t b) { return SubF32(a, b); }
  static constexpr std::uint32_t Mul(std::uint32_t a, std::uint32_t b) { return MulF32(a, b); }
  static constexpr std::uint32_t Max(std::uint32_t a, std::uint32_t b) { return MaxF32(a, b); }
  static constexpr std::uint32_t Min(std::uint32_t a, std::uint32_t b) { return MinF32(a, b); }
};
using Math = numerics::Transcendental<ModelFp>;

}  // namespace

std::uint32_t ExpF32(std::uint32_t v) { return Math::Exp(v); }
std::uint32_t ReciprocalF32(std::uint32_t v) { return Math::Reciprocal(v); }
std::uint32_t RsqrtF32(std::uint32_t v) { return Math::Rsqrt(v); }
std::uint32_t TanhF32(std::uint32_t v) { return Math::Tanh(v); }
std::uint32_t SigmoidF32(std::uint32_t v) { return Math::Sigmoid(v); }
std::uint32_t GeluTanhF32(std::uint32_t v) { return Math::GeluTanh(v); }
std::uint32_t GeluErfF32(std::uint32_t v) { return Math::GeluErf(v); }
std::uint32_t LogF32(std::uint32_t v) { return Math::Log(v); }
std::uint32_t ApplyMathF32(isa::VecMath math, std::uint32_t v) { return Math::Apply(math, v); }

}  // namespace systole::model
