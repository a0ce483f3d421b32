// How a convolution is cut and scheduled: its buffer plan (by estimated time), the choice
// between packed taps and tap by tap, and the chunk loop both schemes share.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "toolchain/codegen/conv_internal.hpp"

namespace systole::codegen::conv {

void AddSegment(std::vector<RowSegment>& segments, RowSegment segment) {
  if (segment.rows == 0) return;
  if (segment.fill && !segments.empty() && segments.back().fill) {
    segments.back().rows += segment.rows;
    return;
  }
  segments.push_back(segment);
}

// Per chunk (S k-steps, T = ceil(n / C) N tiles): the MXU streams S·T·rows cycles, the WEIGHT
// unit needs about S·T·kWeightTile (one contiguous tile DMA each), and the next chunk's A rows
// take about S·(output rows)·(kLoadLatency + row width) cycles of LOADs, which overlap this
// chunk's MATMULs with two A slots and follow them with one. Longer chunks load each weight
// tile fewer times, double buffering hides the gathers; PlanGemmBuffers' rule of thumb (the
// first plan with 128-row chunks) weighs neither, which left 3x3 convolutions on 28x28 and
// 14x14 images (72-144 k-steps) with one A slot, waiting for every chunk's gathers. Chunking
// does not change the accumulation order (every k-step of every pixel, in one order), so the
// choice never changes a result.
std::vector<PlanChoice> RankConvBuffers(const Config& config, const Geometry& g,
                                        std::uint32_t steps, std::uint64_t n, bool raw) {
  constexpr double kWeightTile = 60, kLoadLatency = 40;
  const double s = steps, t = static_cast<double>((n + config.cols - 1) / config.cols);
  std::vector<PlanChoice> plans;
  for (const GemmBuffers& b : GemmBufferOptions(config, steps, g.oh * g.ow, raw)) {
    std::vector<std::pair<double, double>> chunks;  // (rows, LOADs per k-step), as EmitChunks cuts
    const std::uint64_t pieces = (g.ow + b.chunk_rows - 1) / b.chunk_rows;
    if (pieces > 1) {
      const std::uint64_t piece_w = (g.ow + pieces - 1) / pieces;
      for (std::uint64_t oy = 0; oy < g.oh; ++oy) {
        for (std::uint64_t ox0 = 0; ox0 < g.ow; ox0 += piece_w) chunks.push_back({double(std::min(piece_w, g.ow - ox0)), 1.0});
      }
    } else {
      const std::uint64_t per_chunk = std::max<std::uint64_t>(1, b.chunk_rows / g.ow);
      for (std::uint64_t oy0 = 0; oy0 < g.oh; oy0 += per_chunk) {
        const std::uint64_t count = std::min(per_chunk, g.oh - oy0);
        chunks.push_back({double(count * g.ow), double(count)});
      }
    }
    const auto gather = [&](std::size_t c) {
      return c < chunks.size() ? s * chunks[c].second * (kLoadLatency + chunks[c].first / chunks[c].second) : 0.0;
    };
    double cost = gather(0);
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const double busy = std::max(s * t * chunks[c].first, s * t * kWeightTile);
      cost += b.a_buffers > 1 ? std::max(busy, gather(c + 1)) : busy + gather(c + 1);
    }
    cost *= static_cast<double>(g.batch);
    plans.push_back({b, cost});
  }
  std::stable_sort(plans.begin(), plans.end(),
                   [](const PlanChoice& x, const PlanChoice& y) { return x.cycles < y.cycles; });
  return plans;
}

// Packing changes the fp32 accumulation order (docs/CODEGEN.md "Numerics"), so it is a
// candidate only where it has fewer k-steps (never for layers whose Cin is a multiple of R,
// which keep their results bit for bit), and it is taken only where it is faster.
std::vector<DenseScheme> DenseCandidates(const Config& config, const Geometry& g, std::uint64_t n,
                                         bool raw) {
  const std::uint32_t r = config.rows;
  std::vector<DenseScheme> schemes;
  const std::uint64_t packed_steps = PackedSteps(g, r);
  if (packed_steps != 0) {
    const double copy = PaddedCopyCycles(g, config.UbRowElems());
    for (const PlanChoice& p : RankConvBuffers(config, g, static_cast<std::uint32_t>(packed_steps), n, raw)) {
      schemes.push_back({true, p.buffers, p.cycles + copy});
    }
  }
  try {
    const auto tap_by_tap = static_cast<std::uint32_t>(g.kh * g.kw * ((g.cin + r - 1) / r));
    for (const PlanChoice& p : RankConvBuffers(config, g, tap_by_tap, n, raw)) {
      schemes.push_back({false, p.buffers, p.cycles});
    }
  } catch (const std::invalid_argument&) {
    if (schemes.empty()) throw;  // neither reduction fits the UB
  }
  std::stable_sort(schemes.begin(), schemes.end(),
                   [](const DenseScheme& x, const DenseScheme& y) { return x.cycles < y.cycles; });
  const double limit = schemes.front().cycles * kTrialMargin;
  std::erase_if(schemes, [&](const DenseScheme& s) { return s.cycles > limit; });
  return schemes;
}

namespace {

struct RememberedPick {
  Config config;
  std::string key;
  DenseScheme scheme;
};

std::string PickKey(const Geometry& g, const Tensor& input, const Tensor& weights,
                    const std::optional<Tensor>& bias, const Tensor& out,
                    const OutputTransform& t) {
  const auto shape = [](const Tensor& x) {
    return fmt::format("{}:{}", static_cast<int>(x.dtype), fmt::join(x.shape, "x"));
  };
  const ConvParams& p = g.p;
  return fmt::format("{} {} {} {} {} | {} {} {} {} {} {} {} {} {} {} | {} {} {} {} {} {}", shape(input),
                     shape(weights), bias ? shape(*bias) : "-", shape(out), p.start ? "start" : "-", g.kh, g.kw, g.cout,
                     p.stride_h, p.stride_w, p.dilation_h, p.dilation_w,
                     fmt::format("{},{},{},{}", p.pad_top, p.pad_bottom, p.pad_left, p.pad_right),
                     p.groups, p.out_channels, static_cast<int>(t.func), t.scale_bits, t.shift,
                     t.zero_point, t.lo_bits, t.hi_bits);
}

}  // namespace

DenseScheme PickDenseScheme(const Config& config, const Geometry& g, const Tensor& input,
                            const Tensor& weights, const std::optional<Tensor>& bias,
                            const Tensor& out, const OutputTransform& transform) {
  const bool raw = out.dtype == (config.dtype == DType::kBf16 ? DataType::kFp32 : DataType::kInt32);
  // A plan whose one chunk holds the whole output is tried with its first group at 7/8 of the
  // accumulator slots and at most 7/8 of the N tiles, and as before 2026-11-27 (half the slots,
  // any number of tiles; BuildGroups in implicit_gemm.cpp): the wider group hides more of the
  // chunk's own gathers, the narrower lets more epilogues overlap MATMULs (ResNet-50's 1×1
  // 7×7×2048 -> 512: 3 979 cycles fewer the old way, its 3×3 7×7 layers 1 887 more), and a
  // chunk of 2 N tiles loses its one group to the cap (examples/hlo/bf16_residual_block.hlo's
  // conv: 8 707 cycles with it). Where later chunks follow, the new rule measured better on
  // every ResNet-50 layer, so only it is tried.
  std::vector<DenseScheme> candidates;
  for (const DenseScheme& scheme : DenseCandidates(config, g, g.cout, raw)) {
    candidates.push_back(scheme);
    if (g.batch * g.oh * g.ow <= scheme.buffers.chunk_rows) {
      candidates.push_back(scheme);
      candidates.back().buffers.first_group_eighths = 4;
      candidates.back().buffers.cap_last_group = false;
    }
  }
  if (candidates.size() == 1) return candidates.front();
  static std::mutex mutex;
  static std::vector<RememberedPick> remembered;
  const std::string key = PickKey(g, input, weights, bias, out, transform);
  {
    const std::lock_guard lock(mutex);
    for (const RememberedPick& r : remembered) {
      if (r.key == key && r.config == config) return r.scheme;
    }
  }
  const DenseScheme* pick = nullptr;
  std::uint64_t best = 0;
  for (const DenseScheme& scheme : candidates) {
    const std::uint64_t cycles = TrialCycles(config, g, input, weights, bias, out, transform, scheme);
    if (pick == nullptr || cycles < best) {
      best = cycles;
      pick = &scheme;
    }
  }
  const std::lock_guard lock(mutex);
  if (remembered.size() >= 256) remembered.clear();  // a bound, not a policy: shapes repeat
  remembered.push_back({config, key, *pick});
  return *pick;
}

void EmitChunks(ProgramBuilder& builder, const Geometry& g, ImplicitGemm problem,
                const GemmBuffers& buffers, std::uint64_t out_pitch, std::uint64_t cout_base,
                const std::function<std::vector<KStep>(const ChunkSpan&)>& steps_for) {
  const std::uint64_t out_e = problem.out.ElementBytes();
  // Output rows per chunk, or pieces of one row when a row does not fit.
  const std::uint64_t rows_per_chunk = std::max<std::uint64_t>(1, buffers.chunk_rows / g.ow);
  const std::uint64_t pieces = (g.ow + buffers.chunk_rows - 1) / buffers.chunk_rows;
  const std::uint64_t piece_w = (g.ow + pieces - 1) / pieces;
  for (std::uint64_t img = 0; img < g.batch; ++img) {
    for (std::uint64_t oy0 = 0; oy0 < g.oh; oy0 += pieces > 1 ? 1 : rows_per_chunk) {
      const std::uint64_t oy_count = pieces > 1 ? 1 : std::min(rows_per_chunk, g.oh - oy0);
      for (std::uint64_t ox0 = 0; ox0 < g.ow; ox0 += piece_w) {
        const std::uint64_t width = pieces > 1 ? std::min(piece_w, g.ow - ox0) : g.ow;
        Chunk chunk;
        chunk.rows = static_cast<std::uint32_t>(oy_count * width);
        chunk.out_dram = problem.out.address +
                         (((img * g.oh + oy0) * g.ow + ox0) * out_pitch + cout_base) * out_e;
        chunk.out_stride = out_pitch * out_e;
        chunk.steps = steps_for({img, oy0, oy_count, ox0, width});
        problem.chunks.push_back(std::move(chunk));
      }
    }
  }
  problem.start = g.p.start;
  EmitImplicitGemm(builder, problem, buffers);
}

}  // namespace systole::codegen::conv
