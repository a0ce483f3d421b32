// Dots and convolutions as Systole programs. Canonicalization happens here, as bindings: a dot
// becomes a batched GEMM a[B,M,K] · b[B,K,N] by transposing its operands to (batch, free,
// contracting) and (batch, contracting, free) order; a convolution with any dim_labels becomes
// the kernel's NHWC input, [KH,KW,Cin/g,Cout] weights and NHWC output. The host applies the
// transposes when it moves values in and out (execute.cpp).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/compiler/lowering.hpp"

namespace systole::compiler::detail {
namespace {

using image::DataType;
using codegen::Tensor;
using hlo::Instruction;

std::vector<std::uint64_t> Dims(const hlo::Shape& shape, const std::vector<std::int64_t>& permutation) {
  std::vector<std::uint64_t> dims;
  for (std::int64_t p : permutation) dims.push_back(static_cast<std::uint64_t>(shape.dims.at(static_cast<std::size_t>(p))));
  return dims;
}

std::uint64_t Product(const std::vector<std::uint64_t>& dims, std::size_t begin, std::size_t end) {
  std::uint64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// The dimensions of `rank` not in `a` or `b`, in order.
std::vector<std::int64_t> FreeDims(std::size_t rank, const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::vector<std::int64_t> free;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(rank); ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) free.push_back(d);
  }
  return free;
}

std::vector<std::int64_t> Concat(std::initializer_list<std::vector<std::int64_t>> parts) {
  std::vector<std::int64_t> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

std::vector<std::int64_t> Identity(std::size_t rank) {
  std::vector<std::int64_t> p(rank);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

Tensor View(const Tensor& t, std::uint64_t index, std::vector<std::uint64_t> shape) {
  Tensor view{0, std::move(shape), t.dtype};
  view.address = t.address + index * view.Bytes();
  return view;
}

// Whether the swapped form of a single-row dot (LowerGroup) is estimated faster than the form
// as written: each is built alone in a trial program and the golden model's estimate (the
// shared schedule, docs/MODEL.md) compares them, as Conv2D picks among its schemes.
template <class EmitSwapped, class EmitAsWritten>
bool SwapPays(const Config& config, const EmitSwapped& emit_swapped, const EmitAsWritten& emit_as_written) {
  const auto cycles = [&](const auto& emit) {
    codegen::ProgramBuilder trial(config);
    emit(trial);
    trial.Finish();
    return trial.Estimates().back().cycles;
  };
  return cycles(emit_swapped) < cycles(emit_as_written);
}

// The starting tensor's type in device memory: the element type when the residual already is
// (the LOAD widens it exactly), else the accumulator type.
image::DataType StartType(const Group& group, const codegen::ProgramBuilder& builder) {
  return group.residual_in_element_type ? builder.ElementType() : builder.AccumulatorType();
}

}  // namespace

DeviceStep LowerGroup(const Group& group, const Config& config) {
  codegen::ProgramBuilder builder(config);
  const Instruction& anchor = *group.anchor;
  const Instruction& result = *group.Result();
  const DataType element = builder.ElementType();
  bool scaled = false, biased = false;
  for (const EpilogueTerm& term : group.epilogue) {
    (term.op == EpilogueTerm::Op::kMultiply ? scaled : biased) = true;
  }
  const bool narrow = group.narrow_output || group.requantize;
  const DataType out_type = narrow ? element : builder.AccumulatorType();
  codegen::OutputTransform transform;
  if (group.requantize) {
    transform = codegen::OutputTransform::Quantized(group.multiplier, group.shift, group.zero_point, group.func,
                                                    group.int_lo, group.int_hi);
  } else if (group.narrow_output) {
    transform = codegen::OutputTransform::Float(group.func, 1.0f, group.lo, group.hi);
  }

  DeviceStep step;
  if (group.input != anchor.operands.at(0)) step.covers.push_back(anchor.operands[0]->name);  // an absorbed pad
  step.covers.push_back(anchor.name);
  for (const Instruction* i : group.chain) step.covers.push_back(i->name);
  step.epilogue = group.epilogue;
  const hlo::Shape& lhs = group.input->shape;
  const hlo::Shape& rhs = anchor.operands.at(1)->shape;
  std::vector<std::int64_t> lhs_perm, rhs_perm, out_perm;
  std::vector<std::uint64_t> lhs_dims, rhs_dims, out_dims;
  std::optional<Tensor> bias;
  // Weights are column-blocked (each weight tile one contiguous burst: a strided tile costs
  // the weight DMA ~1.6x longer with DRAM timing), except for grouped convolutions, whose
  // tiles a prologue packs, and dots whose right operand has several free dimensions.
  const std::uint64_t cols = config.cols;
  std::uint64_t block_columns = 0;
  std::size_t block_outer = 0;
  std::vector<std::uint64_t> weight_shape;
  std::uint64_t out_block_columns = 0;  // the output likewise ([..., N/C, rows, C])
  std::vector<std::uint64_t> output_shape;
  // A raw (fp32 / int32) output starts from the bias in every accumulator row: replicated
  // ([N/C, rows, C]) it loads contiguously instead of by a stride-0 LOAD (4 DRAM cycles a row).
  std::vector<std::uint64_t> bias_shape;
  const auto replicated_bias = [&](std::uint64_t n_out, std::uint64_t rows) -> std::vector<std::uint64_t> {
    if (narrow || block_columns == 0) return {n_out};  // the output is blocked exactly when the weights are
    return {(n_out + cols - 1) / cols, std::min<std::uint64_t>(rows, config.AccRows()), cols};
  };

  if (anchor.opcode == hlo::Opcode::kConvolution) {
    const hlo::ConvDimensionNumbers& d = anchor.conv_dims;
    lhs_perm = {d.input_batch, d.input_spatial[0], d.input_spatial[1], d.input_feature};
    rhs_perm = {d.kernel_spatial[0], d.kernel_spatial[1], d.kernel_input_feature, d.kernel_output_feature};
    out_perm = {d.output_batch, d.output_spatial[0], d.output_spatial[1], d.output_feature};
    lhs_dims = Dims(lhs, lhs_perm);
    rhs_dims = Dims(rhs, rhs_perm);
    out_dims = Dims(anchor.shape, out_perm);
    const Tensor x = builder.AddInput("x", element, lhs_dims);
    weight_shape = rhs_dims;
    if (anchor.feature_group_count == 1) {
      block_columns = cols;
      weight_shape = {(rhs_dims[3] + cols - 1) / cols, rhs_dims[0], rhs_dims[1], rhs_dims[2], cols};
    }
    const Tensor w = builder.AddInput("w", element, weight_shape);
    bias_shape = replicated_bias(out_dims[3], out_dims[1] * out_dims[2]);
    if (biased) bias = builder.AddInput("bias", builder.AccumulatorType(), bias_shape);
    std::vector<std::uint64_t> y_shape = out_dims;
    if (anchor.feature_group_count == 1) {
      out_block_columns = cols;
      y_shape = {(out_dims[3] + cols - 1) / cols, out_dims[0], out_dims[1], out_dims[2], cols};
    }
    codegen::ConvParams params;
    // A residual add in the drain: the shortcut, laid out like the output (in fp32, or in bf16
    // when a device step stored it so, widened by the LOAD), is the accumulators' starting tensor.
    if (group.residual != nullptr) params.start = builder.AddInput("start", StartType(group, builder), y_shape);
    const Tensor y = builder.AddOutput("y", out_type, y_shape);
    output_shape = y_shape;
    params.out_channels = out_dims[3];
    const hlo::WindowDim& wh = anchor.window.at(0);
    const hlo::WindowDim& ww = anchor.window.at(1);
    params.stride_h = static_cast<std::uint32_t>(wh.stride);
    params.stride_w = static_cast<std::uint32_t>(ww.stride);
    params.dilation_h = static_cast<std::uint32_t>(wh.rhs_dilation);
    params.dilation_w = static_cast<std::uint32_t>(ww.rhs_dilation);
    params.pad_top = static_cast<std::uint32_t>(wh.pad_low + group.extra_padding[0]);
    params.pad_bottom = static_cast<std::uint32_t>(wh.pad_high + group.extra_padding[1]);
    params.pad_left = static_cast<std::uint32_t>(ww.pad_low + group.extra_padding[2]);
    params.pad_right = static_cast<std::uint32_t>(ww.pad_high + group.extra_padding[3]);
    params.groups = static_cast<std::uint32_t>(anchor.feature_group_count);
    step.kernel = fmt::format("conv {}x{}/{} {}x{}x{} -> {}{}", rhs_dims[0], rhs_dims[1], params.stride_h, lhs_dims[1],
                              lhs_dims[2], lhs_dims[3], out_dims[3],
                              params.groups > 1 ? fmt::format(" groups={}", params.groups) : "");
    builder.BeginKernel(step.kernel);
    codegen::Conv2D(builder, x, w, bias, y, params, transform);
  } else {
    const hlo::DotDimensionNumbers& d = anchor.dot_dims;
    lhs_perm = Concat({d.lhs_batch, FreeDims(lhs.Rank(), d.lhs_batch, d.lhs_contracting), d.lhs_contracting});
    rhs_perm = Concat({d.rhs_batch, d.rhs_contracting, FreeDims(rhs.Rank(), d.rhs_batch, d.rhs_contracting)});
    out_perm = Identity(anchor.shape.Rank());
    const std::vector<std::uint64_t> l = Dims(lhs, lhs_perm), r = Dims(rhs, rhs_perm);
    const std::size_t nb = d.lhs_batch.size(), nk = d.lhs_contracting.size();
    const std::uint64_t batch = Product(l, 0, nb), k = Product(l, l.size() - nk, l.size());
    const std::uint64_t m = Product(l, nb, l.size() - nk), n = Product(r, nb + nk, r.size());
    lhs_dims = {batch, m, k};
    rhs_dims = {batch, k, n};
    out_dims = {batch, m, n};
    // A single-row dot (a classifier at batch 1) may run with its operands swapped,
    // out^T[N, 1] = b^T[N, K] · a^T[K, 1]: the weights stream as N rows of A from a K-blocked
    // layout ([K/R, N, R]) instead of filling one weight tile per output row (ResNet-50's
    // classifier: WeightBound.ClassifierWithSwappedOperandsStreamsTheWeights times both forms
    // on small and small-int8). Each output element sums the same products
    // over the same K indices in the same order (k-steps in turn, each in array-row order), so
    // the result is bit-identical; only for a raw output without epilogue (a bias or scale
    // would be per row of the swapped output). Which form is faster depends on the
    // configuration (small-int8's 16-byte weight rows make a tile per output row cheap), so
    // both are built and the estimate chooses (SwapPays).
    const std::uint64_t rows = config.rows;
    const std::string swapped_kernel = fmt::format("gemm {}x{}x{} (swapped: {}x{}x1)", m, k, n, n, k);
    const auto emit_swapped = [&](codegen::ProgramBuilder& into) {
      const Tensor x = into.AddInput("x", element, {k, 1});
      const Tensor w = into.AddInput("w", element, {(k + rows - 1) / rows, n, rows});
      const Tensor y = into.AddOutput("y", out_type, {n, 1});
      into.BeginKernel(swapped_kernel);
      codegen::Gemm(into, w, x, std::nullopt, y, transform, 1);
    };
    // As written: weights and output column-blocked where the right operand has one free
    // dimension, N (each tile's LOAD_WEIGHTS and STORE one contiguous burst: a row stride of 512
    // bytes or more costs the DRAM 2-4 cycles a row instead of 1-2).
    const bool one_free = rhs_perm.size() == nb + nk + 1;
    const std::uint64_t n_blocks = (n + cols - 1) / cols;
    const std::vector<std::uint64_t> b_view = one_free ? std::vector<std::uint64_t>{n_blocks, k, cols}
                                                       : std::vector<std::uint64_t>{k, n};
    const std::vector<std::uint64_t> y_view = one_free ? std::vector<std::uint64_t>{n_blocks, m, cols}
                                                       : std::vector<std::uint64_t>{m, n};
    const std::vector<std::uint64_t> b_shape =
        one_free ? std::vector<std::uint64_t>{batch, n_blocks, k, cols} : rhs_dims;
    const std::vector<std::uint64_t> y_shape =
        one_free ? std::vector<std::uint64_t>{batch, n_blocks, m, cols} : out_dims;
    if (one_free) block_columns = cols;  // before replicated_bias, which follows the blocking
    const std::vector<std::uint64_t> b_bias_shape = replicated_bias(n, m);
    const std::string kernel = fmt::format("gemm {}{}x{}x{}", batch > 1 ? fmt::format("{} x ", batch) : "", m, k, n);
    const auto emit_as_written = [&](codegen::ProgramBuilder& into) {
      const Tensor a = into.AddInput("a", element, lhs_dims);
      const Tensor b = into.AddInput("b", element, b_shape);
      std::optional<Tensor> b_bias;
      if (biased) b_bias = into.AddInput("bias", into.AccumulatorType(), b_bias_shape);
      const Tensor y = into.AddOutput("y", out_type, y_shape);
      into.BeginKernel(kernel);
      for (std::uint64_t i = 0; i < batch; ++i) {
        codegen::Gemm(into, View(a, i, {m, k}), View(b, i, b_view), b_bias, View(y, i, y_view), transform, n);
      }
    };
    const bool swappable = batch == 1 && nb == 0 && nk == 1 && m == 1 && one_free && group.epilogue.empty() &&
                           !narrow && group.func == isa::ActFunc::kNone;
    if (swappable && SwapPays(config, emit_swapped, emit_as_written)) {
      lhs_perm = Concat({d.lhs_contracting, FreeDims(lhs.Rank(), d.lhs_batch, d.lhs_contracting)});
      lhs_dims = {k, 1};
      rhs_perm = Concat({FreeDims(rhs.Rank(), d.rhs_batch, d.rhs_contracting), d.rhs_contracting});
      block_columns = rows;  // the transposed weights [N, K] blocked along K
      weight_shape = {(k + rows - 1) / rows, n, rows};
      out_perm = Identity(anchor.shape.Rank());
      std::rotate(out_perm.rbegin(), out_perm.rbegin() + 1, out_perm.rend());  // N first
      output_shape = {n, 1};
      step.kernel = swapped_kernel;
      emit_swapped(builder);
    } else {
      if (one_free) {
        block_outer = nb;
        out_block_columns = cols;
      }
      weight_shape = b_shape;
      bias_shape = b_bias_shape;
      output_shape = y_shape;
      step.kernel = kernel;
      emit_as_written(builder);
    }
  }
  step.inputs.push_back({Binding::Kind::kValue, group.input->name, lhs_perm, element, lhs_dims});
  step.inputs.push_back({scaled ? Binding::Kind::kWeights : Binding::Kind::kValue, anchor.operands[1]->name, rhs_perm,
                         element, weight_shape, block_columns, block_outer});
  if (biased) step.inputs.push_back({Binding::Kind::kBias, "", {}, builder.AccumulatorType(), bias_shape});
  if (group.residual != nullptr) {
    if (anchor.opcode != hlo::Opcode::kConvolution) throw std::logic_error("a residual start tensor needs a convolution");
    step.inputs.push_back({Binding::Kind::kValue, group.residual->name, out_perm, StartType(group, builder),
                           output_shape, out_block_columns, block_outer});
  }
  step.output = {Binding::Kind::kValue, result.name, out_perm, out_type, output_shape, out_block_columns,
                 block_outer};
  FinishStep(step, builder, config);
  return step;
}

}  // namespace systole::compiler::detail
