// The HLS top functions: what a Vitis HLS project synthesizes (hls/vitis/*.tcl), for one
// configuration chosen at compile time with -DSYSTOLE_HLS_CONFIG=NAME (default tiny; the
// names are those of configs/, '-' written '_'). Sizes come from hls/generated/configs.hpp,
// which `systole gen` writes from configs/*.toml — the same source as the RTL's parameters.
//
// Memory layout of every array argument: rows one after another, no padding.
//   systole_mxu       inputs  rows x R elements     weights R x C     acc  rows x C accumulators
//   systole_activate  acc     rows x C accumulators bias    1 x C     out  rows x C elements
//   systole_vector    a, out  rows x W elements     b  rows x W (or 1 x W with broadcast)
//   systole_reduce    src     rows x W elements     out rows x W (over elements) or 1 x W (over rows)
// Element is int8 or bf16 bits (uint16), Accumulator int32 or fp32 bits (uint32), as the
// configuration's dtype says; R, C, W = rows, cols, max(rows, cols) of the array.
#pragma once

#include <cstdint>
#include <type_traits>

#include "hls/generated/configs.hpp"

#ifndef SYSTOLE_HLS_CONFIG
#define SYSTOLE_HLS_CONFIG tiny
#endif

namespace systole::hls {
namespace config = configs::SYSTOLE_HLS_CONFIG;
using Element = std::conditional_t<config::kBf16, std::uint16_t, std::int8_t>;
using Accumulator = std::conditional_t<config::kBf16, std::uint32_t, std::int32_t>;
}  // namespace systole::hls

// MATMUL: acc[i] (+)= inputs[i] · weights for i < rows, using the first k rows of the tile.
// rows <= the configuration's accumulator rows, k <= R.
void systole_mxu(const systole::hls::Element* inputs, const systole::hls::Element* weights,
                 systole::hls::Accumulator* acc, unsigned rows, unsigned k, bool accumulate);

// ACTIVATE: out[i] = narrow(function(scale(acc[i] (+ bias)))) for i < rows; the fields as
// docs/ISA.md gives them (function 0..3 = none, relu, relu6, clamp).
void systole_activate(const systole::hls::Accumulator* acc, const systole::hls::Accumulator* bias,
                      bool use_bias, unsigned rows, std::uint8_t function, std::uint32_t scale,
                      std::uint8_t shift, std::int8_t zero_point, std::uint16_t lo,
                      std::uint16_t hi, systole::hls::Element* out);

// VECTOR: out[i] = function(math(a[i] op b[i])) (b[0] for every row with broadcast; element 0
// of b's row for every element with bcol); op 0..5 = add, sub, mul, max, min, pass (a alone);
// math 0..8 = none, exp, recip, rsqrt, tanh, sigmoid, gelu_tanh, gelu_erf, log (bf16 only).
void systole_vector(const systole::hls::Element* a, const systole::hls::Element* b, bool broadcast,
                    bool bcol, unsigned rows, std::uint8_t op, std::uint8_t math,
                    std::uint8_t function, std::uint8_t shift, std::uint16_t lo, std::uint16_t hi,
                    systole::hls::Element* out);

// REDUCE: op 0 = max, 1 = sum (then scaled: fp32 `scale`, or int8 requantization by scale and
// shift). over_rows = false: out[i][0] = the reduction of src[i][0..elems-1], the rest of out[i]
// zero, for i < rows; over_rows = true: out[0][j] = the reduction of src[0..rows-1][j] for
// j < elems, the rest zero.
void systole_reduce(const systole::hls::Element* src, unsigned rows, unsigned elems, bool over_rows,
                    std::uint8_t op, std::uint32_t scale, std::uint8_t shift,
                    systole::hls::Element* out);
