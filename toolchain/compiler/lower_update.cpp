// The update steps of training state in device memory (lower_update.hpp).
#include "toolchain/compiler/lower_update.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <optional>

#include "toolchain/codegen/kernels.hpp"

namespace systole::compiler::detail {

using hlo::Instruction;

namespace {

// The step's covers after what the caller put there (the gradient's dot, if any): the chain and
// last the new parameter, the step's name in listings and messages; the new state it leaves in
// device memory.
void FinishUpdateStep(const Update& u, DeviceStep& step, codegen::ProgramBuilder& builder, const Config& config) {
  for (const Instruction* i : u.chain) {
    if (i != u.new_parameter) step.covers.push_back(i->name);
  }
  step.covers.push_back(u.new_parameter->name);
  step.resident_outputs = {u.new_parameter->name};
  for (const Instruction* i : u.new_moments) step.resident_outputs.push_back(i->name);
  FinishStep(step, builder, config);
}

}  // namespace

std::string StateName(const Instruction& parameter, std::string_view what, const std::vector<std::int64_t>& permutation,
                      const std::vector<std::int64_t>& reversed) {
  if (!reversed.empty()) {
    return fmt::format("{} {} [{}] reversed [{}]", parameter.name, what, fmt::join(permutation, ","), fmt::join(reversed, ","));
  }
  return fmt::format("{} {} [{}]", parameter.name, what, fmt::join(permutation, ","));
}

std::string ReplicaName(const Instruction& parameter, const std::vector<std::uint64_t>& shape) {
  return fmt::format("{} bias [{}]", parameter.name, fmt::join(shape, ","));
}

// The update step of one weight layout: the gradient in that layout (rows·cols over the
// batch, raw fp32, into scratch, zero-padded where n is not whole blocks), then the update.
DeviceStep LowerUpdate(const Update& u, const std::vector<std::int64_t>& permutation, const StateScope& scope,
                       const Config& config) {
  const bool transposed = permutation == std::vector<std::int64_t>{1, 0};
  const bool adam = u.kind == Update::Kind::kAdam;
  const Instruction& rows = transposed ? *u.cols : *u.rows;
  const Instruction& cols = transposed ? *u.rows : *u.cols;
  const auto batch = static_cast<std::uint64_t>(rows.shape.dims[0]);
  const auto k = static_cast<std::uint64_t>(rows.shape.dims[1]), n = static_cast<std::uint64_t>(cols.shape.dims[1]);
  const std::uint64_t c = config.cols, blocks = (n + c - 1) / c;
  const char* name = adam ? "adam" : "sgd-momentum";
  // The chunk of rows the update moves through the accumulators at a time: each candidate is
  // built in a trial program and the golden model's estimate chooses (as SwapPays does for dots).
  const auto emit = [&](codegen::ProgramBuilder& builder, std::uint64_t chunk) {
    const image::DataType element = builder.ElementType();
    const codegen::Tensor a = builder.AddInput("a", element, {k, batch});
    const codegen::Tensor b = builder.AddInput("b", element, {blocks, batch, c});
    const codegen::Tensor p = builder.AddInput("p", image::DataType::kFp32, {blocks, k, c});
    const codegen::Tensor m = builder.AddInput("m", image::DataType::kFp32, {blocks, k, c});
    const std::optional<codegen::Tensor> v =
        adam ? std::optional(builder.AddInput("v", image::DataType::kFp32, {blocks, k, c})) : std::nullopt;
    const std::optional<codegen::Tensor> step_size =
        adam ? std::optional(builder.AddInput("s", image::DataType::kFp32, {1})) : std::nullopt;
    const codegen::Tensor w = builder.AddInput("w", element, {blocks, k, c});
    // The GEMM stores only the real columns, so where n is padded to whole blocks the gradient
    // is constant zeros the program carries, its padding stays zero and the padding of p, its
    // moments and w with it; unpadded, it is scratch the GEMM fills entirely.
    const codegen::Tensor g = n % c != 0 ? builder.AddConstant("g", image::DataType::kFp32, {blocks, k, c})
                                         : builder.AddScratch(image::DataType::kFp32, {blocks, k, c});
    builder.BeginKernel(fmt::format("gradient {}x{}x{}", k, batch, n));
    codegen::Gemm(builder, a, b, std::nullopt, g, {}, n);
    builder.BeginKernel(fmt::format("{} update {} rows", name, blocks * k));
    if (adam) {
      codegen::AdamUpdate(builder, p, m, *v, g, *step_size, {w}, u.adam, chunk);
    } else {
      codegen::SgdMomentumUpdate(builder, p, m, g, {w}, static_cast<float>(u.mu), static_cast<float>(u.learning_rate), chunk);
    }
  };
  std::uint64_t best_chunk = 0, best_cycles = UINT64_MAX;
  for (const std::uint64_t chunk : {16u, 32u, 64u, 128u, 256u}) {
    codegen::ProgramBuilder trial(config);
    emit(trial, chunk);
    trial.Finish();
    if (trial.Estimates().back().cycles < best_cycles) {
      best_cycles = trial.Estimates().back().cycles;
      best_chunk = chunk;
    }
  }
  codegen::ProgramBuilder builder(config);
  emit(builder, best_chunk);
  const image::DataType element = builder.ElementType();
  const std::vector<std::uint64_t> state_shape{blocks, k, c};
  DeviceStep step;
  step.kernel = fmt::format("{} update {} {}x{} (gradient {}x{}x{})", name, scope.Parameter(u.parameter).name, transposed ? n : k,
                            transposed ? k : n, k, batch, n);
  using K = Binding::Kind;
  // In the program's input order: a, b, p, m, [v, s,] w.
  step.inputs.push_back({K::kValue, rows.name, {1, 0}, element, {k, batch}});
  step.inputs.push_back({K::kValue, cols.name, {0, 1}, element, {blocks, batch, c}, c, 0});
  step.inputs.push_back({K::kState, StateName(scope.Parameter(u.parameter), "fp32", permutation), {}, image::DataType::kFp32,
                         state_shape});
  for (const Instruction* moment : u.moments) {
    step.inputs.push_back({K::kState, StateName(scope.Parameter(moment), "fp32", permutation), {}, image::DataType::kFp32,
                           state_shape});
  }
  if (adam) step.inputs.push_back({K::kValue, u.step_size->name, {}, image::DataType::kFp32, {1}});
  step.inputs.push_back({K::kState, StateName(scope.Parameter(u.parameter), "weights", permutation), {}, element, state_shape});
  step.covers.push_back(u.dot->name);
  FinishUpdateStep(u, step, builder, config);
  return step;
}

// The update step of a parameter whose gradient is an input (computed before it, on the host or
// by a device step): the gradient in, the update, and the copies. For a bias (`layout` {0}), its
// rows [ceil(n/C), 1, C] and each replicated copy that device drains start from
// ([ceil(n/C), rows, C], one per shape they read), so no drain needs the host's replication. For
// convolution weights, the tensors in the layout one convolution reads them
// ([ceil(Cout/C), KH, KW, Cin, C] in that reader's order; `layout` its permutation) and the
// element-type copy it loads.
DeviceStep LowerInputGradientUpdate(const Update& u, const std::vector<std::int64_t>& layout,
                                    const std::vector<std::int64_t>& reversed, const std::vector<std::uint64_t>& shape,
                                    const std::vector<std::vector<std::uint64_t>>& replicas, const StateScope& scope,
                                    const Config& config) {
  const bool adam = u.kind == Update::Kind::kAdam;
  const bool bias = u.parameter->shape.Rank() == 1;
  const std::uint64_t c = config.cols;
  const char* name = adam ? "adam" : "sgd-momentum";
  codegen::ProgramBuilder builder(config);
  const image::DataType element = builder.ElementType();
  const codegen::Tensor g = builder.AddInput("g", image::DataType::kFp32, shape);
  const codegen::Tensor p = builder.AddInput("p", image::DataType::kFp32, shape);
  const codegen::Tensor m = builder.AddInput("m", image::DataType::kFp32, shape);
  const std::optional<codegen::Tensor> v =
      adam ? std::optional(builder.AddInput("v", image::DataType::kFp32, shape)) : std::nullopt;
  const std::optional<codegen::Tensor> step_size =
      adam ? std::optional(builder.AddInput("s", image::DataType::kFp32, {1})) : std::nullopt;
  const std::optional<codegen::Tensor> w = bias ? std::nullopt : std::optional(builder.AddInput("w", element, shape));
  std::vector<codegen::Tensor> copies;
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    copies.push_back(builder.AddInput(fmt::format("r{}", i), image::DataType::kFp32, replicas[i]));
  }
  const std::uint64_t rows = g.Elements() / c;
  builder.BeginKernel(fmt::format("{} update of {}, {} rows", name, bias ? "a bias" : "convolution weights", rows));
  if (adam) {
    codegen::AdamUpdate(builder, p, m, *v, g, *step_size, {w, copies}, u.adam);
  } else {
    codegen::SgdMomentumUpdate(builder, p, m, g, {w, copies}, static_cast<float>(u.mu), static_cast<float>(u.learning_rate));
  }
  DeviceStep step;
  step.kernel = bias ? fmt::format("{} update {} [{}] (bias, {} replicated for the drains)", name, scope.Parameter(u.parameter).name,
                                   u.parameter->shape.dims[0], replicas.size())
                     : fmt::format("{} update {} [{}] (convolution weights in layout [{}]{}, gradient in)", name,
                                   scope.Parameter(u.parameter).name, fmt::join(u.parameter->shape.dims, ","), fmt::join(layout, ","),
                                   reversed.empty() ? "" : fmt::format(" reversed [{}]", fmt::join(reversed, ",")));
  using K = Binding::Kind;
  // In the program's input order: g, p, m, [v, s,] [w,] the replicas.
  step.inputs.push_back({K::kValue, u.host_gradient->name, layout, image::DataType::kFp32, shape, c, 0, reversed});
  const Instruction& parameter = scope.Parameter(u.parameter);
  step.inputs.push_back({K::kState, StateName(parameter, "fp32", layout, reversed), {}, image::DataType::kFp32, shape});
  for (const Instruction* moment : u.moments) {
    step.inputs.push_back({K::kState, StateName(scope.Parameter(moment), "fp32", layout, reversed), {}, image::DataType::kFp32,
                           shape});
  }
  if (adam) step.inputs.push_back({K::kValue, u.step_size->name, {}, image::DataType::kFp32, {1}});
  if (w) step.inputs.push_back({K::kState, StateName(parameter, "weights", layout, reversed), {}, element, shape});
  for (const std::vector<std::uint64_t>& replica : replicas) {
    step.inputs.push_back({K::kState, ReplicaName(parameter, replica), {}, image::DataType::kFp32, replica});
  }
  FinishUpdateStep(u, step, builder, config);
  return step;
}

}  // namespace systole::compiler::detail
