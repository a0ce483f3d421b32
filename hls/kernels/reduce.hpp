// REDUCE as an HLS kernel: a running max or sum per lane, in the fixed order of docs/ISA.md —
// over the elements of a row (one lane, the elements in order) or across rows (W lanes, the rows
// in order). A max starts from the first element; a sum starts from +0 and adds every element,
// then is scaled: fp32 `scale` for bf16, requantization `(v·scale + 2^(shift−1)) >> shift` and
// saturation for int8. The top function (hls/tops) streams one row per clock through it.
#pragma once

#include <cstdint>
#include <type_traits>

#include "arch/numerics/bf16.hpp"
#include "hls/kernels/activate.hpp"
#include "hls/numerics/fp32_bits.hpp"

namespace systole::hls {

// The op field of REDUCE and POOL (arch/isa: PoolOp; tests/hls/enums_test.cpp checks the values).
enum class ReduceOp : std::uint8_t { kMax = 0, kSum = 1 };

struct ReduceParams {
  ReduceOp op = ReduceOp::kMax;
  std::uint32_t scale = 0;  // sum only: int32 multiplier (int8) or fp32 bits (bf16); 0 means 1
  std::uint8_t shift = 0;   // sum only, int8: right shift after the multiply, rounding half up
};

// One lane's running value for int8 elements: sums stay below 2^63 for any REDUCE the ISA allows.
struct Int8Reduction {
  std::int64_t value = 0;
  bool first = true;
  void Add(std::int8_t x, const ReduceParams& p) {
    if (p.op == ReduceOp::kMax) {
      value = first || x > value ? x : value;
    } else {
      value += x;
    }
    first = false;
  }
  std::int8_t Result(const ReduceParams& p) const {
    if (p.op == ReduceOp::kMax) return static_cast<std::int8_t>(value);
    const auto scale = static_cast<std::int32_t>(p.scale != 0 ? p.scale : 1u);
    return SaturateToInt8(RequantizeBits(value, scale, p.shift));
  }
};

// One lane's running value for bf16 elements, in fp32.
struct Bf16Reduction {
  std::uint32_t value = 0;  // +0
  bool first = true;
  void Add(std::uint16_t element, const ReduceParams& p) {
    const std::uint32_t x = numerics::Bf16ToF32(element);
    value = p.op == ReduceOp::kMax ? (first ? x : MaxF32Bits(value, x)) : AddF32Bits(value, x);
    first = false;
  }
  std::uint16_t Result(const ReduceParams& p) const {
    if (p.op == ReduceOp::kMax) return numerics::F32ToBf16(value);
    return numerics::F32ToBf16(MulF32Bits(value, p.scale != 0 ? p.scale : kF32One));
  }
};

template <class Element>
using ReductionOf = std::conditional_t<sizeof(Element) == 1, Int8Reduction, Bf16Reduction>;

// over=elems: elements 0..elems-1 of `row` in order -> out[0]; out[1..W-1] = 0. The elements
// depend on each other, so this loop does not unroll into a tree (the order is the ISA's).
template <unsigned kWidth, class Element>
void ReduceRowElems(const Element row[kWidth], unsigned elems, const ReduceParams& params,
                    Element out[kWidth]) {
  ReductionOf<Element> lane;
  for (unsigned j = 0; j < kWidth; ++j) {
    if (j < elems) lane.Add(row[j], params);
  }
  for (unsigned j = 0; j < kWidth; ++j) {
#pragma HLS UNROLL
    out[j] = j == 0 ? lane.Result(params) : Element{0};
  }
}

// over=rows: one row more into the W lanes.
template <unsigned kWidth, class Element>
void ReduceAcrossRowsStep(const Element row[kWidth], const ReduceParams& params,
                          ReductionOf<Element> lanes[kWidth]) {
  for (unsigned j = 0; j < kWidth; ++j) {
#pragma HLS UNROLL
    lanes[j].Add(row[j], params);
  }
}

// over=rows: the lanes' results; elements elems..W-1 are zero.
template <unsigned kWidth, class Element>
void ReduceAcrossRowsResult(const ReductionOf<Element> lanes[kWidth], unsigned elems,
                            const ReduceParams& params, Element out[kWidth]) {
  for (unsigned j = 0; j < kWidth; ++j) {
#pragma HLS UNROLL
    out[j] = j < elems ? lanes[j].Result(params) : Element{0};
  }
}

}  // namespace systole::hls
