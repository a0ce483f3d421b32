// Shared by conv.cpp (the tap-by-tap implicit GEMM, groups) and conv_packed.cpp (taps packed
// into k-steps for convolutions with few input channels) and conv_plan.cpp (plans, the choice
// of scheme, the chunk loop). Not part of the kernel library's interface.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "toolchain/codegen/kernels.hpp"

namespace systole::codegen::conv {

struct Geometry {
  std::uint64_t batch, h, w, cin, kh, kw, cin_g, cout, oh, ow, groups;
  ConvParams p;
};

// The output pixels of one chunk: `oy_count` output rows from oy0 of image `img`, each the
// `width` columns from ox0 (a whole row, or a piece of one when a row is longer than a chunk).
struct ChunkSpan {
  std::uint64_t img, oy0, oy_count, ox0, width;
};

// A buffer plan and the estimated cycles of the whole convolution with it.
struct PlanChoice {
  GemmBuffers buffers;
  double cycles = 0;
};

// Every buffer plan that fits a convolution of `steps` k-steps and `n` output columns, with
// its estimated cycles (conv_plan.cpp explains the estimate), lowest estimate first.
std::vector<PlanChoice> RankConvBuffers(const Config& config, const Geometry& g,
                                        std::uint32_t steps, std::uint64_t n, bool raw);

// Appends a row segment, merging it into the previous one when both are zero fills.
void AddSegment(std::vector<RowSegment>& segments, RowSegment segment);

// Cuts the output into chunks as `buffers` allows, asks `steps_for` for each chunk's k-steps
// and emits the implicit GEMM. `problem` has everything but the chunks; `out_pitch` is the
// output's elements between pixels and `cout_base` the first output channel.
void EmitChunks(ProgramBuilder& builder, const Geometry& g, ImplicitGemm problem,
                const GemmBuffers& buffers, std::uint64_t out_pitch, std::uint64_t cout_base,
                const std::function<std::vector<KStep>(const ChunkSpan&)>& steps_for);

// ---- taps packed into k-steps (conv_packed.cpp) -------------------------------------------
//
// For a fixed ky, the KW taps × Cin channels an output pixel reads are KW·Cin contiguous
// elements of one input row when dilation_w is 1 (NHWC). A packed k-step is (ky, a slice of
// up to R of those elements), so one strided LOAD per output row still gathers it and the
// weight rows are the HWIO rows ky·KW·Cin + slice·R … in order: ⌈KW·Cin / R⌉ k-steps per ky
// instead of KW·⌈Cin / R⌉.

// The packed scheme's k-steps, or 0 where it does not apply (groups, dilation_w > 1) or would
// not have fewer k-steps than the tap-by-tap scheme.
std::uint64_t PackedSteps(const Geometry& g, std::uint32_t r);

// The estimated cycles of the prologue that copies the input into a zero-padded buffer (0
// when the convolution has no left or right padding).
double PaddedCopyCycles(const Geometry& g, std::uint32_t ub_row_elems);

// Emits the packed convolution (groups = 1). `blocked`: column-blocked weights.
void EmitPackedConv(ProgramBuilder& builder, const Geometry& g, const Tensor& input,
                    const Tensor& weights, const std::optional<Tensor>& bias, const Tensor& out,
                    const OutputTransform& transform, const GemmBuffers& buffers, bool blocked,
                    bool out_blocked);

// A way to run a dense (one-group) convolution: packed taps or tap by tap, a buffer plan, and
// its estimated cycles (the padded copy included).
struct DenseScheme {
  bool packed = false;
  GemmBuffers buffers;
  double cycles = 0;
};

// The schemes worth comparing, lowest estimate first: the best one and every other within
// kTrialMargin of it, where the estimate is too coarse to tell them apart (Conv2D then emits
// each into a scratch program and keeps the one the timing model finds fastest).
inline constexpr double kTrialMargin = 1.15;
std::vector<DenseScheme> DenseCandidates(const Config& config, const Geometry& g, std::uint64_t n,
                                         bool raw);

// Emits an ungrouped convolution with `scheme` (conv.cpp). Weights and out may be
// column-blocked.
void EmitDense(ProgramBuilder& builder, const Geometry& g, const Tensor& input,
               const Tensor& weights, const std::optional<Tensor>& bias, const Tensor& out,
               const OutputTransform& transform, const DenseScheme& scheme);

// The cycles the golden model's timing model gives `scheme` for this convolution alone, as a
// device step runs it: the same tensor shapes in a scratch program.
std::uint64_t TrialCycles(const Config& config, const Geometry& g, const Tensor& input,
                          const Tensor& weights, const std::optional<Tensor>& bias,
                          const Tensor& out, const OutputTransform& transform,
                          const DenseScheme& scheme);

// The scheme Conv2D runs an ungrouped convolution with: the only candidate, or the one of the
// candidates that TrialCycles finds fastest. The outcome depends only on the configuration,
// the geometry, the tensors' shapes and types and the transform, so it is remembered for
// them: ResNet-50's 53 convolutions have 20 distinct shapes.
DenseScheme PickDenseScheme(const Config& config, const Geometry& g, const Tensor& input,
                            const Tensor& weights, const std::optional<Tensor>& bias,
                            const Tensor& out, const OutputTransform& transform);

}  // namespace systole::codegen::conv
