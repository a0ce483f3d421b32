// The parts of the GEMM engine that are not its schedule: OutputTransform's constructors and
// the buffer plans (how the UB and the accumulators are divided into slots).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "toolchain/codegen/implicit_gemm.hpp"

namespace systole::codegen {

OutputTransform OutputTransform::Float(isa::ActFunc func, float scale, float lo, float hi) {
  const auto bf16 = [](float v) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
    return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
  };
  OutputTransform t;
  t.func = func;
  t.scale_bits = std::bit_cast<std::uint32_t>(scale);
  t.lo_bits = bf16(lo);
  t.hi_bits = bf16(hi);
  return t;
}

OutputTransform OutputTransform::Quantized(std::int32_t multiplier, std::uint8_t shift,
                                           std::int8_t zero_point, isa::ActFunc func,
                                           std::int16_t lo, std::int16_t hi) {
  OutputTransform t;
  t.func = func;
  t.scale_bits = static_cast<std::uint32_t>(multiplier);
  t.shift = shift;
  t.zero_point = zero_point;
  t.lo_bits = static_cast<std::uint16_t>(lo);
  t.hi_bits = static_cast<std::uint16_t>(hi);
  return t;
}

namespace {

struct BufferOption {
  std::uint32_t a, acc, out;
};
constexpr BufferOption kBufferOptions[] = {{2, 3, 3}, {2, 2, 2}, {1, 3, 3}, {1, 2, 2}};

std::uint64_t OptionRows(const Config& config, const BufferOption& o, std::uint32_t max_steps,
                         std::uint64_t wanted_rows, bool raw_output) {
  const std::uint64_t acc_limit = config.AccRows() / o.acc;
  const std::uint64_t ub_per_row = std::uint64_t{o.a} * max_steps + (raw_output ? 0 : o.out);
  return std::min<std::uint64_t>(
      {acc_limit > 0 ? acc_limit - 1 : 0, config.UbRows() / ub_per_row, 65535, wanted_rows});
}

[[noreturn]] void NoPlanFits(const Config& config, std::uint32_t max_steps) {
  throw std::invalid_argument(fmt::format(
      "codegen: a reduction of {} k-steps does not fit the {} unified-buffer rows", max_steps,
      config.UbRows()));
}

}  // namespace

std::vector<GemmBuffers> GemmBufferOptions(const Config& config, std::uint32_t max_steps,
                                           std::uint64_t wanted_rows, bool raw_output) {
  if (max_steps == 0 || wanted_rows == 0) throw std::invalid_argument("codegen: empty GEMM");
  std::vector<GemmBuffers> options;
  for (const BufferOption& o : kBufferOptions) {
    const std::uint64_t rows = OptionRows(config, o, max_steps, wanted_rows, raw_output);
    if (rows > 0) options.push_back({static_cast<std::uint32_t>(rows), o.a, o.acc, o.out, max_steps});
  }
  if (options.empty()) NoPlanFits(config, max_steps);
  return options;
}

GemmBuffers PlanGemmBuffers(const Config& config, std::uint32_t max_steps,
                            std::uint64_t wanted_rows, bool raw_output) {
  if (max_steps == 0 || wanted_rows == 0) throw std::invalid_argument("codegen: empty GEMM");
  // Most buffering first; the first plan whose chunks are long enough to hide a weight tile's
  // DMA (about 128 rows) wins, otherwise the one with the longest chunks. With one A slot the
  // next chunk's rows load only after the current chunk's MATMULs (no overlap), which still
  // beats chunks too short to hide the weight DMA. The accumulators always have two or more
  // slots: an epilogue runs one tile behind the MATMULs.
  const std::uint64_t good_enough = std::min<std::uint64_t>(wanted_rows, 128);
  GemmBuffers best;
  for (const BufferOption& o : kBufferOptions) {
    const std::uint64_t rows = OptionRows(config, o, max_steps, wanted_rows, raw_output);
    if (rows > best.chunk_rows) {
      best = {static_cast<std::uint32_t>(rows), o.a, o.acc, o.out, max_steps};
    }
    if (rows >= good_enough) break;
  }
  if (best.chunk_rows == 0) NoPlanFits(config, max_steps);
  return best;
}

GemmBuffers PlanRingBuffers(const Config& config, std::uint32_t max_steps, std::uint32_t ring_steps,
                            std::uint64_t wanted_rows, bool raw_output) {
  if (max_steps == 0 || wanted_rows == 0) throw std::invalid_argument("codegen: empty GEMM");
  if (std::min(ring_steps, max_steps) < 2) throw std::invalid_argument("codegen: a ring needs two step slots or more");
  const BufferOption o{1, 2, 2};
  const std::uint64_t rows = OptionRows(config, o, std::min(ring_steps, max_steps), wanted_rows, raw_output);
  GemmBuffers plan{static_cast<std::uint32_t>(rows), o.a, o.acc, o.out, max_steps};
  plan.ring_steps = std::min(ring_steps, max_steps);
  return plan;
}

}  // namespace systole::codegen
