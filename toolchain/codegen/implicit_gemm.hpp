// The engine behind GEMM and convolution: a GEMM whose left operand rows are gathered by
// LOADs that the caller describes (plain row blocks for GEMM, strided pixel gathers with zero
// padding for convolution), tiled to the array and scheduled with double buffering.
//
// Problem: out[m, n] = epilogue(sum over k-steps s of A_s[m, 0:k_s] · W_s[0:k_s, n]) for the
// rows m of each chunk and n < N. A chunk is a block of output rows that is computed together
// (M rows of a GEMM, or a few output-image rows of a convolution); a k-step is one R-deep slice
// of the reduction (a K tile of a GEMM, or one (tap, input-channel tile) of a convolution).
// docs/CODEGEN.md explains the schedule; the accumulation order is:
//   ACC = psum(step 0); ACC += psum(step 1); ... in step order (each psum in array row order);
//   then ACTIVATE: + bias, × scale, function, convert   (or STORE of the raw accumulators).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "toolchain/codegen/program_builder.hpp"

namespace systole::codegen {

// What ACTIVATE does to an accumulator row, as raw ISA field values (docs/ISA.md).
struct OutputTransform {
  isa::ActFunc func = isa::ActFunc::kNone;
  std::uint32_t scale_bits = 0;  // fp32 bits (bf16) or int32 multiplier (int8); 0 means 1
  std::uint8_t shift = 0;        // int8: right shift after the multiply
  std::int8_t zero_point = 0;    // int8: added before saturation
  std::uint16_t lo_bits = 0;     // clamp bounds: bf16 bits (bf16) or int16 (int8)
  std::uint16_t hi_bits = 0;

  static OutputTransform Float(isa::ActFunc func = isa::ActFunc::kNone, float scale = 1.0f,
                               float lo = 0.0f, float hi = 0.0f);
  static OutputTransform Quantized(std::int32_t multiplier, std::uint8_t shift,
                                   std::int8_t zero_point, isa::ActFunc func = isa::ActFunc::kNone,
                                   std::int16_t lo = 0, std::int16_t hi = 0);
};

// Consecutive rows of one k-step's UB slot: gathered from device memory, or filled from a
// constant row (padding).
struct RowSegment {
  std::uint32_t first_row = 0;   // within the chunk
  std::uint32_t rows = 0;
  bool fill = false;             // true: rows of zeros
  std::uint64_t dram = 0;        // gathered: element 0 of the first row
  std::uint64_t stride = 0;      // gathered: bytes between rows
};

struct KStep {
  std::uint32_t k = 0;                  // elements per row, <= R
  std::uint64_t weight_dram = 0;        // W_s[0][0]
  std::uint64_t weight_stride = 0;      // bytes between W_s rows
  std::vector<RowSegment> segments;     // cover rows [0, chunk rows) in order
};

struct Chunk {
  std::uint32_t rows = 0;
  std::vector<KStep> steps;
  std::uint64_t out_dram = 0;    // out[row 0][n = 0]
  std::uint64_t out_stride = 0;  // bytes between output rows
};

struct ImplicitGemm {
  std::uint32_t n = 0;                 // output columns
  std::vector<Chunk> chunks;
  Tensor a, weights, out;              // for dependency tracking (whole tensors)
  // Where N tile j of a k-step's weights starts: 0 means row-major weights ([K, N]: n0 elements
  // to the right of the k-step's address); otherwise column-blocked weights ([N/C][K][C]: each
  // tile one contiguous block, j * weight_block_bytes further on), which a DMA reads as one
  // burst instead of R strided rows (docs/CODEGEN.md, "Weight layout").
  std::uint64_t weight_block_bytes = 0;
  // The same for the output: 0 means N tile j is stored n0 elements to the right of the
  // chunk's out_dram; otherwise (column-blocked out) j * out_block_bytes further on.
  std::uint64_t out_block_bytes = 0;
  // 0: the bias is a vector (a raw output's starting values repeat it with a stride-0 LOAD,
  // which the DRAM serves at 4 cycles a row). Otherwise it is replicated ([N/C][rows][C]):
  // tile j's rows start j * bias_block_bytes on and are read as one contiguous burst.
  std::uint64_t bias_block_bytes = 0;
  std::optional<Tensor> bias;          // fp32 / int32, indexed from bias_dram
  std::uint64_t bias_dram = 0;         // bias[n = 0]
  // The accumulators' starting values (a residual added before the drain): laid out like `out`
  // (the same shape, column-blocked when it is) in the accumulator type, each tile's rows
  // loaded into its slot before the first MATMUL accumulates onto them; ACTIVATE then adds the
  // bias row and applies the transform. Not with a raw output (its bias is the starting value).
  std::optional<Tensor> start;
  OutputTransform transform;           // ignored when the output is raw
  bool raw_output = false;             // STORE the accumulators (fp32 / int32) directly
};

// How the UB and the accumulators are divided: `chunk_rows` is the most rows a chunk may have.
// acc_buffers / out_buffers are the least the plan needs; EmitImplicitGemm also uses every
// further accumulator and output slot that fits (for its groups of N tiles).
struct GemmBuffers {
  std::uint32_t chunk_rows = 0;
  std::uint32_t a_buffers = 0;    // UB slots of (k-steps x chunk_rows) rows: 2 = double-buffered
  std::uint32_t acc_buffers = 0;  // accumulator slots of chunk_rows + 1 (bias) rows
  std::uint32_t out_buffers = 0;  // UB slots of chunk_rows rows for ACTIVATE results
  std::uint32_t max_steps = 0;
  // 0: a chunk's A slot holds all its k-steps. Otherwise it holds `ring_steps` of them, reused
  // in turn: step s goes to step slot s mod ring_steps, loaded once the MATMUL of step
  // s - ring_steps has read the slot. Only for one N tile and one A slot (each step's rows are
  // read by one MATMUL), where it lets a chunk be as long as an accumulator slot whatever K is:
  // a GEMV with swapped operands (the classifier) then loads each k-step's rows as one long
  // DMA and pops each weight tile once instead of once per short chunk (docs/CODEGEN.md).
  std::uint32_t ring_steps = 0;
  // The first N-tile group of a chunk that loads its own A rows: this many eighths of the
  // accumulator slots, and in the last chunk, with cap_last_group, at most 7/8 of the N tiles
  // (implicit_gemm.cpp, BuildGroups). One-chunk convolutions also try 4 without the cap, the
  // rule before 2026-11-27 (conv_plan.cpp).
  std::uint32_t first_group_eighths = 7;
  bool cap_last_group = true;
};

// The largest chunk that fits with the most buffering, for chunks of at most `max_steps`
// k-steps and `wanted_rows` rows. Throws std::invalid_argument if not even one row fits.
GemmBuffers PlanGemmBuffers(const Config& config, std::uint32_t max_steps,
                            std::uint64_t wanted_rows, bool raw_output);

// A plan with a ring of `ring_steps` step slots (GemmBuffers::ring_steps) and one A slot, for a
// problem of one N tile: chunks as long as `wanted_rows`, an accumulator slot (two slots: the
// epilogue runs behind) and the UB allow. Returns chunk_rows 0 when not one row fits.
GemmBuffers PlanRingBuffers(const Config& config, std::uint32_t max_steps, std::uint32_t ring_steps,
                            std::uint64_t wanted_rows, bool raw_output);

// Every buffer plan that fits (most buffering first), for callers that pick by their own cost
// estimate (conv.cpp). Throws std::invalid_argument like PlanGemmBuffers when none does.
std::vector<GemmBuffers> GemmBufferOptions(const Config& config, std::uint32_t max_steps,
                                           std::uint64_t wanted_rows, bool raw_output);

// Emits the whole problem. Every chunk must have at most buffers.max_steps steps and
// buffers.chunk_rows rows.
void EmitImplicitGemm(ProgramBuilder& builder, const ImplicitGemm& problem,
                      const GemmBuffers& buffers);

}  // namespace systole::codegen
