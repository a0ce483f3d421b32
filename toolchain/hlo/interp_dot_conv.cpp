// dot and convolution. Both canonicalize their operands with one permutation (dot to
// [batch, m, k] x [batch, k, n]; convolution to input [n, spatial…, c] and kernel
// [spatial…, i, o]) so that the innermost loop runs over contiguous output features.
// Products are accumulated in double and rounded to the result type once at the end.
#include <fmt/core.h>

#include <algorithm>

#include "toolchain/hlo/dims.hpp"
#include "toolchain/hlo/interp_kernels.hpp"

namespace systole::hlo::detail {

namespace {

std::int64_t Product(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& which) {
  std::int64_t product = 1;
  for (std::int64_t d : which) product *= dims[U(d)];
  return product;
}

}  // namespace

Literal EvalDot(const Instruction& instruction, const Operands& operands) {
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const DotDimensionNumbers& dn = instruction.dot_dims;
  std::vector<std::int64_t> lhs_free;
  std::vector<std::int64_t> rhs_free;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(lhs.shape.Rank()); ++d) {
    if (!Contains(dn.lhs_batch, d) && !Contains(dn.lhs_contracting, d)) lhs_free.push_back(d);
  }
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(rhs.shape.Rank()); ++d) {
    if (!Contains(dn.rhs_batch, d) && !Contains(dn.rhs_contracting, d)) rhs_free.push_back(d);
  }
  const std::int64_t batch = Product(lhs.shape.dims, dn.lhs_batch);
  const std::int64_t m = Product(lhs.shape.dims, lhs_free);
  const std::int64_t k = Product(lhs.shape.dims, dn.lhs_contracting);
  const std::int64_t n = Product(rhs.shape.dims, rhs_free);
  std::vector<std::int64_t> lhs_order = dn.lhs_batch;  // [batch, m, k]
  lhs_order.insert(lhs_order.end(), lhs_free.begin(), lhs_free.end());
  lhs_order.insert(lhs_order.end(), dn.lhs_contracting.begin(), dn.lhs_contracting.end());
  std::vector<std::int64_t> rhs_order = dn.rhs_batch;  // [batch, k, n]
  rhs_order.insert(rhs_order.end(), dn.rhs_contracting.begin(), dn.rhs_contracting.end());
  rhs_order.insert(rhs_order.end(), rhs_free.begin(), rhs_free.end());
  const std::vector<double> a = Permute(lhs, lhs_order);
  const std::vector<double> b = Permute(rhs, rhs_order);

  Literal result(instruction.shape);  // [batch, lhs free…, rhs free…] is [batch, m, n]
  std::vector<double>& c = result.values;
  for (std::int64_t p = 0; p < batch; ++p) {
    for (std::int64_t i = 0; i < m; ++i) {
      double* row = c.data() + (p * m + i) * n;
      for (std::int64_t q = 0; q < k; ++q) {
        const double x = a[U((p * m + i) * k + q)];
        const double* w = b.data() + (p * k + q) * n;
        for (std::int64_t j = 0; j < n; ++j) row[j] += x * w[j];
      }
    }
  }
  RoundAll(instruction.shape.type, c);
  return result;
}

Literal EvalConvolution(const Instruction& instruction, const Operands& operands) {
  if (instruction.batch_group_count != 1) Unsupported(instruction, "has batch_group_count != 1 (not supported)");
  const Literal& input = *operands[0];
  const Literal& kernel = *operands[1];
  const ConvDimensionNumbers& dn = instruction.conv_dims;
  const std::size_t spatial = dn.input_spatial.size();
  const auto dim = [](const Literal& l, std::int64_t d) { return l.shape.dims[U(d)]; };

  // Canonical operands: input [n, s0, s1, …, c] and kernel [k0, k1, …, i, o].
  std::vector<std::int64_t> input_order{dn.input_batch};
  input_order.insert(input_order.end(), dn.input_spatial.begin(), dn.input_spatial.end());
  input_order.push_back(dn.input_feature);
  std::vector<std::int64_t> kernel_order = dn.kernel_spatial;
  kernel_order.push_back(dn.kernel_input_feature);
  kernel_order.push_back(dn.kernel_output_feature);
  const std::vector<double> in = Permute(input, input_order);
  const std::vector<double> w = Permute(kernel, kernel_order);

  const std::int64_t batch = dim(input, dn.input_batch);
  const std::int64_t channels = dim(input, dn.input_feature);
  const std::int64_t groups = instruction.feature_group_count;
  const std::int64_t group_inputs = channels / groups;
  const std::int64_t outputs = dim(kernel, dn.kernel_output_feature);
  const std::int64_t group_outputs = outputs / groups;
  std::vector<std::int64_t> in_sizes;
  std::vector<std::int64_t> kernel_sizes;
  std::vector<std::int64_t> out_sizes;
  for (std::size_t s = 0; s < spatial; ++s) {
    in_sizes.push_back(dim(input, dn.input_spatial[s]));
    kernel_sizes.push_back(dim(kernel, dn.kernel_spatial[s]));
    out_sizes.push_back(instruction.shape.dims[U(dn.output_spatial[s])]);
  }
  const std::vector<std::int64_t> in_strides = RowMajorStrides(in_sizes);  // in pixels
  std::int64_t out_pixels = 1;
  std::int64_t kernel_pixels = 1;
  for (std::size_t s = 0; s < spatial; ++s) {
    out_pixels *= out_sizes[s];
    kernel_pixels *= kernel_sizes[s];
  }
  const std::int64_t in_pixels = in_sizes.empty() ? 1 : in_strides[0] * in_sizes[0];

  // Canonical output [n, out spatial…, o], permuted to the printed layout at the end.
  std::vector<double> out(U(batch * out_pixels * outputs), 0.0);
  std::vector<std::int64_t> out_index(spatial, 0);
  std::vector<std::int64_t> kernel_index(spatial, 0);
  for (std::int64_t b = 0; b < batch; ++b) {
    std::fill(out_index.begin(), out_index.end(), 0);
    for (std::int64_t p = 0; p < out_pixels; ++p) {
      double* acc = out.data() + (b * out_pixels + p) * outputs;
      std::fill(kernel_index.begin(), kernel_index.end(), 0);
      for (std::int64_t kp = 0; kp < kernel_pixels; ++kp) {
        // Where this kernel tap lands in the (dilated, padded) input, if on a real element.
        std::int64_t in_pixel = 0;
        bool valid = true;
        for (std::size_t s = 0; s < spatial && valid; ++s) {
          const WindowDim& wd = instruction.window[s];
          const std::int64_t tap = wd.reversal ? kernel_sizes[s] - 1 - kernel_index[s] : kernel_index[s];
          const std::int64_t dilated = out_index[s] * wd.stride - wd.pad_low + tap * wd.rhs_dilation;
          valid = dilated >= 0 && dilated % wd.lhs_dilation == 0 && dilated / wd.lhs_dilation < in_sizes[s];
          in_pixel += (valid ? dilated / wd.lhs_dilation : 0) * in_strides[s];
        }
        if (valid) {
          const double* x = in.data() + (b * in_pixels + in_pixel) * channels;
          const double* taps = w.data() + kp * group_inputs * outputs;
          for (std::int64_t g = 0; g < groups; ++g) {
            for (std::int64_t c = 0; c < group_inputs; ++c) {
              const double value = x[g * group_inputs + c];
              const double* row = taps + c * outputs + g * group_outputs;
              double* target = acc + g * group_outputs;
              for (std::int64_t o = 0; o < group_outputs; ++o) target[o] += value * row[o];
            }
          }
        }
        for (std::size_t s = spatial; s-- > 0;) {
          if (++kernel_index[s] < kernel_sizes[s]) break;
          kernel_index[s] = 0;
        }
      }
      for (std::size_t s = spatial; s-- > 0;) {
        if (++out_index[s] < out_sizes[s]) break;
        out_index[s] = 0;
      }
    }
  }
  RoundAll(instruction.shape.type, out);

  // Canonical [n, s…, o] -> printed dimension order.
  std::vector<std::int64_t> canonical_dims{batch};
  canonical_dims.insert(canonical_dims.end(), out_sizes.begin(), out_sizes.end());
  canonical_dims.push_back(outputs);
  const std::vector<std::int64_t> canonical_strides = RowMajorStrides(canonical_dims);
  std::vector<std::int64_t> strides(spatial + 2, 0);
  strides[U(dn.output_batch)] = canonical_strides[0];
  for (std::size_t s = 0; s < spatial; ++s) strides[U(dn.output_spatial[s])] = canonical_strides[s + 1];
  strides[U(dn.output_feature)] = canonical_strides[spatial + 1];
  Literal result;
  result.shape = instruction.shape;
  result.values = StridedGather(out, 0, instruction.shape.dims, strides);
  return result;
}

}  // namespace systole::hlo::detail
