// GEMM as an implicit GEMM whose row gathers are plain blocks of A.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/codegen/require.hpp"

namespace systole::codegen {

namespace {
// Step slots of a ring plan (PlanRingBuffers): three k-steps' rows load while one is read.
constexpr std::uint32_t kRingSteps = 4;
}  // namespace

void Gemm(ProgramBuilder& builder, const Tensor& a, const Tensor& b,
          const std::optional<Tensor>& bias, const Tensor& out,
          const OutputTransform& transform, std::uint64_t n_columns) {
  Require("gemm", (a.shape.size() == 2 || a.shape.size() == 3) && (b.shape.size() == 2 || b.shape.size() == 3) &&
              (out.shape.size() == 2 || out.shape.size() == 3),
          "A must be a matrix or K-blocked [K/R, M, R], B and out matrices or column-blocked [N/C, rows, C]");
  const bool blocked = b.shape.size() == 3, out_blocked = out.shape.size() == 3;
  // A K-blocked A ([ceil(K/R)][M][R], padding zero): each k-step's rows are one contiguous
  // block, so a gather streams instead of striding K elements a row (a GEMM whose A is a
  // transposed weight matrix, lower_dot_conv.cpp). K is then b's row count.
  const bool a_blocked = a.shape.size() == 3;
  const std::uint64_t cols = builder.C();
  const std::uint64_t n = n_columns != 0 ? n_columns : !out_blocked ? out.Dim(1) : !blocked ? b.Dim(1) : 0;
  Require("gemm", n != 0, "N must be given when B and out are both column-blocked");
  const std::uint64_t m = a.Dim(a_blocked ? 1 : 0), k = a_blocked ? b.Dim(blocked ? 1 : 0) : a.Dim(1),
                      blocks = (n + cols - 1) / cols;
  Require("gemm", !a_blocked || (a.Dim(0) == (k + builder.R() - 1) / builder.R() && a.Dim(2) == builder.R()),
          fmt::format("K-blocked A is {}, not [ceil({} / R), M, R]", fmt::join(a.shape, "x"), k));
  Require("gemm", blocked ? (b.Dim(0) == blocks && b.Dim(1) == k && b.Dim(2) == cols)
                  : (b.Dim(0) == k && b.Dim(1) == n),
          fmt::format("shapes {}x{} · {} -> N = {} do not agree", m, k, fmt::join(b.shape, "x"), n));
  Require("gemm", out_blocked ? (out.Dim(0) == blocks && out.Dim(1) == m && out.Dim(2) == cols)
                      : (out.Dim(0) == m && out.Dim(1) == n),
          fmt::format("out is {}, not {}x{}", fmt::join(out.shape, "x"), m, n));
  Require("gemm", m > 0 && k > 0 && n > 0, "empty matrix");
  Require("gemm", a.dtype == builder.ElementType() && b.dtype == builder.ElementType(),
          "A and B must have the configuration's element type");
  const bool raw = out.dtype == builder.AccumulatorType();
  Require("gemm", raw || out.dtype == builder.ElementType(), "out must be the element or accumulator type");
  Require("gemm", !raw || (transform.func == isa::ActFunc::kNone &&
                   (transform.scale_bits == 0 || transform.scale_bits == 0x3F800000 ||
                    (!builder.IsBf16() && transform.scale_bits == 1)) &&
                   transform.shift == 0 && transform.zero_point == 0),
          "a raw (accumulator-type) output takes no activation or scale");
  // A replicated bias [N/C, rows, C] (rows >= min(M, accumulator rows)) loads contiguously.
  const bool replicated_bias = bias && bias->shape.size() == 3;
  if (bias) {
    Require("gemm", bias->dtype == builder.AccumulatorType() &&
                (replicated_bias ? bias->Dim(0) == blocks && bias->Dim(2) == cols &&
                                       bias->Dim(1) >= std::min<std::uint64_t>(m, builder.config().AccRows())
                                 : bias->Elements() == n),
            "bias must be N accumulator-type elements or replicated [N/C, min(M, accumulator rows), C]");
  }

  const std::uint32_t r = builder.R();
  const std::uint64_t e = a.ElementBytes();
  const auto k_steps = static_cast<std::uint32_t>((k + r - 1) / r);
  GemmBuffers buffers = PlanGemmBuffers(builder.config(), k_steps, m, raw);
  // One N tile and chunks cut short by K (a GEMV with swapped operands, the classifier): a
  // ring of step slots makes the chunks as long as the accumulators allow.
  if (blocks == 1 && buffers.chunk_rows < m && k_steps > kRingSteps) {
    const GemmBuffers ring = PlanRingBuffers(builder.config(), k_steps, kRingSteps, m, raw);
    if (ring.chunk_rows > buffers.chunk_rows) buffers = ring;
  }
  // A GEMM's chunks keep first groups of half the accumulator slots (GemmBuffers): the wider
  // groups convolutions take cost the corpus's dense layers (s8_dense_bias.hlo 2 299 -> 2 410
  // cycles, 07_mha_softmax_attention_bf16.hlo 782 167 -> 786 662), and no trial chooses here.
  buffers.first_group_eighths = 4;
  buffers.cap_last_group = false;

  ImplicitGemm problem;
  problem.n = static_cast<std::uint32_t>(n);
  problem.a = a;
  problem.weights = b;
  problem.out = out;
  problem.bias = bias;
  problem.bias_dram = bias ? bias->address : 0;
  problem.bias_block_bytes = replicated_bias ? bias->Dim(1) * cols * 4 : 0;
  problem.transform = transform;
  problem.raw_output = raw;
  problem.weight_block_bytes = blocked ? k * cols * e : 0;
  const std::uint64_t out_pitch = (out_blocked ? cols : n) * out.ElementBytes();  // bytes per output row
  problem.out_block_bytes = out_blocked ? m * out_pitch : 0;
  // Equal chunks (the last one at most one row shorter) rather than a short tail.
  const std::uint64_t chunks = (m + buffers.chunk_rows - 1) / buffers.chunk_rows;
  std::uint64_t m0 = 0;
  for (std::uint64_t c = 0; c < chunks; ++c) {
    const std::uint64_t rows = (m - m0) / (chunks - c) + ((m - m0) % (chunks - c) != 0 ? 1 : 0);
    Chunk chunk;
    chunk.rows = static_cast<std::uint32_t>(rows);
    chunk.out_dram = out.address + m0 * out_pitch;
    chunk.out_stride = out_pitch;
    for (std::uint32_t s = 0; s < k_steps; ++s) {
      const std::uint64_t k0 = std::uint64_t{s} * r;
      KStep step;
      step.k = static_cast<std::uint32_t>(std::min<std::uint64_t>(r, k - k0));
      step.weight_dram = b.address + k0 * (blocked ? cols : n) * e;
      step.weight_stride = (blocked ? cols : n) * e;
      if (a_blocked) {
        step.segments.push_back({0, chunk.rows, false, a.address + (s * m + m0) * r * e, r * e});
      } else {
        step.segments.push_back({0, chunk.rows, false, a.address + (m0 * k + k0) * e, k * e});
      }
      chunk.steps.push_back(std::move(step));
    }
    problem.chunks.push_back(std::move(chunk));
    m0 += rows;
  }
  builder.BeginKernel(fmt::format("gemm {}x{}x{}", m, k, n));
  EmitImplicitGemm(builder, problem, buffers);
}

}  // namespace systole::codegen
