// The transcendental step of VECTOR (`math=`) with the golden model's fp32 arithmetic: exp,
// reciprocal, rsqrt, tanh, sigmoid, the two GELU forms and log. The algorithms themselves, step by
// step as docs/NUMERICS.md specifies them, are written once in arch/numerics/transcendental.hpp
// and shared with the HLS kernels; here they run on numerics.hpp's AddF32 / SubF32 / MulF32 /
// MaxF32 / MinF32 (the host's IEEE operations, then flush to zero and a canonical NaN).
// Inputs and results are fp32 bit patterns.
#pragma once

#include <cstdint>

#include "arch/isa/isa.hpp"

namespace systole::model {

std::uint32_t ExpF32(std::uint32_t v);
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
