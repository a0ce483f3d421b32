// The kernel library: each function appends the instructions of one operation to a
// ProgramBuilder. Tensors are row-major in device memory; images are NHWC (one UB row per
// pixel, channels along the row, as POOL expects). Element types follow the configuration:
// bf16 configurations take bf16 operands and fp32 biases, int8 configurations int8 operands
// and int32 biases. docs/CODEGEN.md describes tiling, scheduling and numerics.
//
// Every kernel throws std::invalid_argument for shapes or types it cannot handle.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "toolchain/codegen/implicit_gemm.hpp"
#include "toolchain/codegen/program_builder.hpp"

namespace systole::codegen {

// out[M,N] = transform(A[M,K] · B[K,N] + bias[N]).
// B is row-major [K, N], or column-blocked [ceil(N/C), K, C]: block j holds columns
// j·C … j·C+C−1 (zero-padded), so each weight tile is one contiguous DMA burst. `out` may be
// column-blocked too ([ceil(N/C), M, C]: each tile's STORE one contiguous burst); when both
// are, `n_columns` gives N. The bias may be replicated, [ceil(N/C), min(M, accumulator rows), C]
// (every row the same vector): a raw output's starting values then load contiguously.
// A may be K-blocked, [ceil(K/R), M, R] (block s holds columns s·R … s·R+R−1 of every row,
// zero-padded): each k-step's gather is then one contiguous burst (the transposed weights of a
// single-row dot whose operands the compiler swaps, lower_dot_conv.cpp).
// `out` has the element type (ACTIVATE applies bias and transform) or the accumulator type
// fp32 / int32 (the accumulators are stored directly: the bias, if any, is their starting
// value and the transform must be the identity).
void Gemm(ProgramBuilder& builder, const Tensor& a, const Tensor& b,
          const std::optional<Tensor>& bias, const Tensor& out,
          const OutputTransform& transform = {}, std::uint64_t n_columns = 0);

struct ConvParams {
  std::uint32_t stride_h = 1, stride_w = 1;
  std::uint32_t dilation_h = 1, dilation_w = 1;
  std::uint32_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  std::uint32_t groups = 1;
  std::uint64_t out_channels = 0;  // Cout; needed only when weights and out are both column-blocked
  // The accumulators' starting values, laid out like `out` in the accumulator type (fp32 /
  // int32) or in the element type (bf16 / int8: `load mem=acc widen`, half or a quarter of the
  // bytes): out = transform(start + conv + bias), a residual added before the drain. Only with
  // an output of the element type (ACTIVATE).
  std::optional<Tensor> start = std::nullopt;
};

// out[N,OH,OW,Cout] = transform(conv(in[N,H,W,Cin], w[KH,KW,Cin/groups,Cout]) + bias[Cout]).
// The weights may instead be column-blocked [ceil(Cout/C), KH, KW, Cin, C] and out
// [ceil(Cout/C), N, OH, OW, C] (groups = 1), as for Gemm. Implicit GEMM: no im2col copy. Padding is written as zero UB rows; groups small enough to
// share the array are packed into block-diagonal weight tiles (depthwise included).
void Conv2D(ProgramBuilder& builder, const Tensor& input, const Tensor& weights,
            const std::optional<Tensor>& bias, const Tensor& out, const ConvParams& params,
            const OutputTransform& transform = {});

enum class PoolKind : std::uint8_t { kMax, kAverage };
struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  std::uint32_t window_h = 2, window_w = 2;
  std::uint32_t stride_h = 2, stride_w = 2;
  std::uint32_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  // Average: the POOL scale. 0 picks 1/(window_h·window_w) (bf16: fp32 bits; int8: the
  // multiplier round(2^16 / window size) with shift 16). Padding counts in the average.
  std::uint32_t scale_bits = 0;
  std::uint8_t shift = 0;
};
// The POOL scale and shift an average pool uses ({0, 0} for max).
std::pair<std::uint32_t, std::uint8_t> EffectivePoolScale(const Config& config,
                                                          const PoolParams& params);
// out[N,OH,OW,C] = pool(in[N,H,W,C]).
void Pool2D(ProgramBuilder& builder, const Tensor& input, const Tensor& out,
            const PoolParams& params);

struct ElementwiseParams {
  isa::VecOp op = isa::VecOp::kAdd;
  isa::VecMath math = isa::VecMath::kNone;  // bf16: exp, recip, rsqrt, … of (a op b), before func
  isa::ActFunc func = isa::ActFunc::kNone;
  std::uint16_t lo_bits = 0, hi_bits = 0;  // clamp bounds (bf16 bits / int16)
  std::uint8_t shift = 0;                  // int8 mul: right shift of the product
};
// out = func(a op b). `b` has a's shape, or is one row (shape [last dim of a]) broadcast to
// every row of a.
void Elementwise(ProgramBuilder& builder, const Tensor& a, const Tensor& b, const Tensor& out,
                 const ElementwiseParams& params);
struct RowReduceParams {
  isa::PoolOp op = isa::PoolOp::kSum;  // max, or sum then scale
  std::uint32_t scale_bits = 0;        // fp32 bits of the sum's scale (1/n for a mean); 0 means 1
};
// out[r] = scale · op(in[r, 0 … n−1]) over the last dimension n of `in` (bf16 configurations;
// any n ≥ 1: a last partial UB row is padded with op's identity). Sums add in fp32; each REDUCE
// rounds its results to bf16, so a row of n > W elements is summed as W partial sums (over
// rows, rounded) and then those.
void RowReduce(ProgramBuilder& builder, const Tensor& in, const Tensor& out, const RowReduceParams& params);
// out[o, c] = scale · op(in[o, 0 … m−1, c]) over the middle dimension of in[outer, m, n] (bf16
// configurations): an average pool over all pixels is in[N, H·W, C] with scale 1/(H·W). Each
// result is one REDUCE over=rows of m values, summed in fp32 and rounded to bf16 once.
void ColumnReduce(ProgramBuilder& builder, const Tensor& in, const Tensor& out, const RowReduceParams& params);

// out[r, j] = e^(in[r,j] − max_j in[r,j]) / Σ_j e^(in[r,j] − max_j in[r,j]) along the last
// dimension (bf16 configurations), every intermediate in the unified buffer: REDUCE max, one
// VECTOR sub+exp (the subtraction in fp32, one rounding), REDUCE sum, VECTOR recip and mul, as
// RowReduce and Elementwise would round them but without their device-memory round trips.
// `round_difference`: x − max is rounded to bf16 before the exponential (VECTOR sub, then
// VECTOR exp), as a bf16 program computes it: then the result equals those kernels' bit for bit.
void Softmax(ProgramBuilder& builder, const Tensor& in, const Tensor& out, bool round_difference = false);
// Rows of n elements one Softmax block holds (two blocks fit the unified buffer); 0 when a row
// does not fit.
std::uint64_t SoftmaxRowsPerBlock(const Config& config, std::uint64_t n);

struct LayerNormParams {
  std::uint32_t inverse_n_bits = 0;  // fp32 bits of 1/n, REDUCE's scale for both means
  std::uint16_t epsilon_bits = 0;    // bf16 bits of ε
  std::optional<Tensor> gamma, beta;  // [n] each, or none
};
// out[r, :] = (in[r, :] − mean) · rsqrt(var + ε) [· γ] [+ β] along the last dimension (bf16
// configurations), mean and var REDUCE sums scaled by 1/n, every intermediate in the unified
// buffer, with the roundings RowReduce and Elementwise give step by step (bit for bit).
void LayerNorm(ProgramBuilder& builder, const Tensor& in, const Tensor& out, const LayerNormParams& params);
// Rows of n elements one LayerNorm block holds (two blocks and γ, β fit the unified buffer); 0
// when a row does not fit.
std::uint64_t LayerNormRowsPerBlock(const Config& config, std::uint64_t n);

// out = func(math(a)): VECTOR op=pass with a transcendental function (bf16 configurations).
void Unary(ProgramBuilder& builder, const Tensor& a, const Tensor& out, isa::VecMath math,
           isa::ActFunc func = isa::ActFunc::kNone, std::uint16_t lo_bits = 0, std::uint16_t hi_bits = 0);

// out = func(a) (relu, relu6, clamp), as VECTOR max(a, a) with the function.
void Activation(ProgramBuilder& builder, const Tensor& a, const Tensor& out, isa::ActFunc func,
                std::uint16_t lo_bits = 0, std::uint16_t hi_bits = 0);

// What an optimizer update writes from the new parameters besides its fp32 state: the
// element-type copy the next step's dots load as weight tiles, and fp32 copies with every
// parameter row replicated — a bias, [ceil(N/C), rows, C], as the next step's drains start from
// it (lower_dot_conv.cpp). A replica's rows all equal their parameter row, so the update
// subtracts the same step from each of them (ACCVEC with b broadcast) and they stay equal to the
// new parameters bit for bit, without a row copy the ISA does not have.
struct UpdateCopies {
  UpdateCopies(std::optional<Tensor> weights_copy = std::nullopt, std::vector<Tensor> replicas = {})  // NOLINT: `{w}` reads as "the weights"
      : weights(std::move(weights_copy)), replicated(std::move(replicas)) {}
  std::optional<Tensor> weights;
  std::vector<Tensor> replicated;
};

// One step of SGD with momentum on the accumulators, in place, for tensors of rows of C elements
// (the column-blocked weight layout, [ceil(N/C), K, C]): m' = m·mu + g and p' = p − m'·lr in
// IEEE binary32 (ACCVEC, the host interpreter's f32 arithmetic bit for bit), p' and m' stored
// over p and m, and p' rounded to the element type (ACTIVATE) into `copies.weights`: the tiles
// the next step's dots load; each of `copies.replicated` updated likewise (above).
// bf16 configurations only. Rows go through the accumulators `rows_per_chunk`
// at a time (0: 32), two chunks in flight (at most an eighth of the accumulators each).
void SgdMomentumUpdate(ProgramBuilder& builder, const Tensor& parameters, const Tensor& momentum,
                       const Tensor& gradient, const UpdateCopies& copies, float mu, float learning_rate,
                       std::uint64_t rows_per_chunk = 0);

// Adam's constants, each an fp32 immediate (optax writes 1 − b1 and 1 − b2 as constants of
// their own, rounded to f32 apart from b1 and b2).
struct AdamParams {
  float b1 = 0.9f, one_minus_b1 = 0.1f, b2 = 0.999f, one_minus_b2 = 0.001f, epsilon = 1e-8f;
};
// One Adam step on the accumulators, like SgdMomentumUpdate: m' = m·b1 + g·(1−b1),
// v' = v·b2 + (g·(1−b2))·g, p' = p − (s·m') / (sqrt(v') + eps), with `step_size` s (one fp32
// value: the learning rate and both bias corrections, which the host computes from the step
// count) loaded into an accumulator row of its own; p', m', v' over p, m, v, and `copies` as
// SgdMomentumUpdate writes them.
void AdamUpdate(ProgramBuilder& builder, const Tensor& parameters, const Tensor& first_moment,
                const Tensor& second_moment, const Tensor& gradient, const Tensor& step_size,
                const UpdateCopies& copies, const AdamParams& params, std::uint64_t rows_per_chunk = 0);

}  // namespace systole::codegen
