// The HLS top functions (systole_kernels.hpp): the interfaces a Vitis HLS user sees, and the
// loops around the row kernels of hls/kernels/. hls/README.md explains each pragma.
//
// Interfaces: every array is an AXI4 master port (m_axi) into the host's or the device's
// memory, every scalar and the start/done handshake an AXI4-Lite register (s_axilite), which
// is how a kernel is placed beside a processor or an XRT host. `depth` tells C/RTL
// co-simulation how many elements a port may touch. The row loops are pipelined (II=1 is the
// aim: one row per clock); the m_axi ports move one element per beat here, so HLS will report a
// longer interval unless the ports are widened to whole rows — hls/README.md says how.
#include "hls/tops/systole_kernels.hpp"

#include "hls/kernels/activate.hpp"
#include "hls/kernels/mxu_tile.hpp"
#include "hls/kernels/reduce.hpp"
#include "hls/kernels/vector_ops.hpp"

using systole::hls::Accumulator;
using systole::hls::Element;
namespace config = systole::hls::config;

namespace {
constexpr unsigned R = config::kRows, C = config::kCols, W = config::kUbRowElems;
constexpr unsigned kMaxRows = config::kAccRows;  // one MATMUL or ACTIVATE touches at most these
}  // namespace

void systole_mxu(const Element* inputs, const Element* weights, Accumulator* acc, unsigned rows, unsigned k,
                 bool accumulate) {
#pragma HLS INTERFACE mode=m_axi port=inputs bundle=gmem0 depth=kMaxRows*R
#pragma HLS INTERFACE mode=m_axi port=weights bundle=gmem1 depth=R*C
#pragma HLS INTERFACE mode=m_axi port=acc bundle=gmem2 depth=kMaxRows*C
#pragma HLS INTERFACE mode=s_axilite port=rows
#pragma HLS INTERFACE mode=s_axilite port=k
#pragma HLS INTERFACE mode=s_axilite port=accumulate
#pragma HLS INTERFACE mode=s_axilite port=return
  // The stationary tile lives in registers: every processing element reads its weight at once.
  Element tile[R][C];
#pragma HLS ARRAY_PARTITION variable=tile type=complete dim=0
load_tile:
  for (unsigned t = 0; t < R; ++t) {
    for (unsigned j = 0; j < C; ++j) {
#pragma HLS PIPELINE II=1
      tile[t][j] = weights[t * C + j];
    }
  }
stream_rows:
  for (unsigned i = 0; i < rows; ++i) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=kMaxRows
#pragma HLS PIPELINE II=1
    Element x[R];
    Accumulator sums[C];
#pragma HLS ARRAY_PARTITION variable=x type=complete
#pragma HLS ARRAY_PARTITION variable=sums type=complete
    for (unsigned t = 0; t < R; ++t) x[t] = inputs[i * R + t];
    for (unsigned j = 0; j < C; ++j) sums[j] = accumulate ? acc[i * C + j] : Accumulator{0};
    systole::hls::MxuRow<R, C>(x, tile, k, accumulate, sums);
    for (unsigned j = 0; j < C; ++j) acc[i * C + j] = sums[j];
  }
}

void systole_activate(const Accumulator* acc, const Accumulator* bias, bool use_bias, unsigned rows,
                      std::uint8_t function, std::uint32_t scale, std::uint8_t shift,
                      std::int8_t zero_point, std::uint16_t lo, std::uint16_t hi, Element* out) {
#pragma HLS INTERFACE mode=m_axi port=acc bundle=gmem0 depth=kMaxRows*C
#pragma HLS INTERFACE mode=m_axi port=bias bundle=gmem1 depth=C
#pragma HLS INTERFACE mode=m_axi port=out bundle=gmem2 depth=kMaxRows*C
#pragma HLS INTERFACE mode=s_axilite port=use_bias
#pragma HLS INTERFACE mode=s_axilite port=rows
#pragma HLS INTERFACE mode=s_axilite port=function
#pragma HLS INTERFACE mode=s_axilite port=scale
#pragma HLS INTERFACE mode=s_axilite port=shift
#pragma HLS INTERFACE mode=s_axilite port=zero_point
#pragma HLS INTERFACE mode=s_axilite port=lo
#pragma HLS INTERFACE mode=s_axilite port=hi
#pragma HLS INTERFACE mode=s_axilite port=return
  const systole::hls::ActivateParams params{static_cast<systole::hls::Function>(function & 3u),
                                            scale, shift, zero_point, lo, hi};
  Accumulator bias_row[C];
#pragma HLS ARRAY_PARTITION variable=bias_row type=complete
  for (unsigned j = 0; j < C; ++j) bias_row[j] = use_bias ? bias[j] : Accumulator{0};
rows_loop:
  for (unsigned i = 0; i < rows; ++i) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=kMaxRows
#pragma HLS PIPELINE II=1
    Accumulator in[C];
    Element result[C];
#pragma HLS ARRAY_PARTITION variable=in type=complete
#pragma HLS ARRAY_PARTITION variable=result type=complete
    for (unsigned j = 0; j < C; ++j) in[j] = acc[i * C + j];
    systole::hls::ActivateRow<C>(in, use_bias ? bias_row : nullptr, params, result);
    for (unsigned j = 0; j < C; ++j) out[i * C + j] = result[j];
  }
}

void systole_vector(const Element* a, const Element* b, bool broadcast, bool bcol, unsigned rows,
                    std::uint8_t op, std::uint8_t math, std::uint8_t function, std::uint8_t shift,
                    std::uint16_t lo, std::uint16_t hi, Element* out) {
#pragma HLS INTERFACE mode=m_axi port=a bundle=gmem0 depth=kMaxRows*W
#pragma HLS INTERFACE mode=m_axi port=b bundle=gmem1 depth=kMaxRows*W
#pragma HLS INTERFACE mode=m_axi port=out bundle=gmem2 depth=kMaxRows*W
#pragma HLS INTERFACE mode=s_axilite port=broadcast
#pragma HLS INTERFACE mode=s_axilite port=bcol
#pragma HLS INTERFACE mode=s_axilite port=rows
#pragma HLS INTERFACE mode=s_axilite port=op
#pragma HLS INTERFACE mode=s_axilite port=math
#pragma HLS INTERFACE mode=s_axilite port=function
#pragma HLS INTERFACE mode=s_axilite port=shift
#pragma HLS INTERFACE mode=s_axilite port=lo
#pragma HLS INTERFACE mode=s_axilite port=hi
#pragma HLS INTERFACE mode=s_axilite port=return
  const systole::hls::VectorParams params{static_cast<systole::hls::VectorOp>(op),
                                          static_cast<systole::hls::Function>(function & 3u),
                                          shift, lo, hi, bcol,
                                          static_cast<systole::hls::MathFunction>(math)};
rows_loop:
  for (unsigned i = 0; i < rows; ++i) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=kMaxRows
#pragma HLS PIPELINE II=1
    Element x[W], y[W], result[W];
#pragma HLS ARRAY_PARTITION variable=x type=complete
#pragma HLS ARRAY_PARTITION variable=y type=complete
#pragma HLS ARRAY_PARTITION variable=result type=complete
    const unsigned b_row = broadcast ? 0 : i;
    for (unsigned j = 0; j < W; ++j) {
      x[j] = a[i * W + j];
      y[j] = b[b_row * W + j];  // op=pass never looks at y; the kernel reads it anyway (a fixed pipeline)
    }
    systole::hls::VectorRow<W>(x, y, params, result);
    for (unsigned j = 0; j < W; ++j) out[i * W + j] = result[j];
  }
}

void systole_reduce(const Element* src, unsigned rows, unsigned elems, bool over_rows, std::uint8_t op,
                    std::uint32_t scale, std::uint8_t shift, Element* out) {
#pragma HLS INTERFACE mode=m_axi port=src bundle=gmem0 depth=kMaxRows*W
#pragma HLS INTERFACE mode=m_axi port=out bundle=gmem1 depth=kMaxRows*W
#pragma HLS INTERFACE mode=s_axilite port=rows
#pragma HLS INTERFACE mode=s_axilite port=elems
#pragma HLS INTERFACE mode=s_axilite port=over_rows
#pragma HLS INTERFACE mode=s_axilite port=op
#pragma HLS INTERFACE mode=s_axilite port=scale
#pragma HLS INTERFACE mode=s_axilite port=shift
#pragma HLS INTERFACE mode=s_axilite port=return
  const systole::hls::ReduceParams params{static_cast<systole::hls::ReduceOp>(op & 1u), scale, shift};
  systole::hls::ReductionOf<Element> lanes[W];
#pragma HLS ARRAY_PARTITION variable=lanes type=complete
  Element row[W], result[W];
#pragma HLS ARRAY_PARTITION variable=row type=complete
#pragma HLS ARRAY_PARTITION variable=result type=complete
rows_loop:
  for (unsigned i = 0; i < rows; ++i) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=kMaxRows
#pragma HLS PIPELINE II=1
    for (unsigned j = 0; j < W; ++j) row[j] = src[i * W + j];
    if (over_rows) {
      systole::hls::ReduceAcrossRowsStep<W>(row, params, lanes);
    } else {
      systole::hls::ReduceRowElems<W>(row, elems, params, result);
      for (unsigned j = 0; j < W; ++j) out[i * W + j] = result[j];
    }
  }
  if (over_rows) {
    systole::hls::ReduceAcrossRowsResult<W, Element>(lanes, elems, params, result);
    for (unsigned j = 0; j < W; ++j) out[j] = result[j];
  }
}
