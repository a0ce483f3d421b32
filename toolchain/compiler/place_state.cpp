// Training state in device memory (CompileOptions::device_state, docs/TRAINING.md "State in
// device memory"). For each donated parameter p whose new value is SGD with momentum or Adam,
//
//   m' = m·mu + g        p' = p − m'·lr        g = (Xᵀ·Y) or its transpose (a dot over the batch)
//   m' = m·b1 + g·(1−b1)   v' = v·b2 + (g·(1−b2))·g   p' = p − (s·m') / (sqrt(v') + eps)
//
// (the chains jax.grad and optax write, f32 elementwise on the host otherwise; Adam's step size
// s is a scalar the host computes from the step count every step), and whose only
// other readers are device dots that load p as column-blocked weights, the compiler keeps p, its
// moments and p's bf16 copy in device memory in each weight layout those dots read, and replaces the
// chain by one update step per layout: the gradient dot recomputed in that layout straight into
// the accumulators' memory, then SgdMomentumUpdate (ACCVEC). The dots' weight inputs become
// bound state tensors. The update in each layout is the host's f32 update bit for bit: the
// gradient's products are exact in fp32 and sum over the batch in the same order in either
// layout, and ACCVEC is the interpreter's f32 arithmetic.
//
// A bias b (a vector) whose gradient is computed on the host (its sum over the batch) and whose
// other readers are drains that start from it replicated over their rows stays in device memory
// too: b and its moments as rows of C, and b replicated as each drain reads it. Its update step
// takes the gradient from the host (ceil(n/C)·C fp32 values instead of the replicated bias) and
// subtracts the same step from every replica row, so they stay b bit for bit.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "toolchain/codegen/kernels.hpp"
#include "toolchain/compiler/lowering.hpp"
#include "toolchain/compiler/optimizer_match.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// "params_0_.1 fp32 [0,1]"; with the dimensions a layout reverses, "params_2_.1 weights [0,1,3,2] reversed [0,1]".
std::string StateName(const Instruction& parameter, std::string_view what, const std::vector<std::int64_t>& permutation,
                      const std::vector<std::int64_t>& reversed = {}) {
  if (!reversed.empty()) {
    return fmt::format("{} {} [{}] reversed [{}]", parameter.name, what, fmt::join(permutation, ","), fmt::join(reversed, ","));
  }
  return fmt::format("{} {} [{}]", parameter.name, what, fmt::join(permutation, ","));
}

// A bias replicated as a drain starts from it: "params_1_.1 bias [4,32,16]".
std::string ReplicaName(const Instruction& parameter, const std::vector<std::uint64_t>& shape) {
  return fmt::format("{} bias [{}]", parameter.name, fmt::join(shape, ","));
}

// The computation a placement looks into, and how its state is named outside it: the entry
// (the state inputs are its donated parameters, the new values the root operands they alias),
// or the body of a while loop that carries donated state (the state inputs are the body's
// get-tuple-elements of it, named by the entry parameters that start the loop; the new values
// the body root's operands, named by the entry root operands that the loop's results reach).
struct StateScope {
  std::vector<Step>* steps = nullptr;
  const hlo::Computation* computation = nullptr;
  std::vector<std::pair<const Instruction*, const Instruction*>> aliases;  // new value -> state input, in order
  AliasMap alias_of_output;                                                // the same, as a map
  std::unordered_map<const Instruction*, const Instruction*> entry_parameter;  // state input -> entry parameter
  std::unordered_map<const Instruction*, const Instruction*> entry_output;     // new value -> entry root operand
  // Tuples that carry new values on their way to the root (an inlined call's result), which may
  // read them as the root may.
  std::unordered_set<const Instruction*> forwards;

  // The entry parameter a state input stands for (the state tensor's name and the value it is
  // written from).
  const Instruction& Parameter(const Instruction* input) const {
    const auto it = entry_parameter.find(input);
    return it == entry_parameter.end() ? *input : *it->second;
  }
  // The entry root operand a new value reaches (the state tensor is read back as it).
  const Instruction& Output(const Instruction* value) const {
    const auto it = entry_output.find(value);
    return it == entry_output.end() ? *value : *it->second;
  }
};

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

// Data movement that keeps a vector's elements in order: a reshape, a copy, or a broadcast that
// only adds dimensions of size one (b → [1, n] → [n] on the way to a drain's bias).
bool KeepsElementOrder(const Instruction* i) {
  if (i->operands.size() != 1 || i->shape.type != hlo::ElementType::kF32 || !i->shape.IsArray()) return false;
  if (i->opcode == Opcode::kReshape || i->opcode == Opcode::kCopy) return true;
  return i->opcode == Opcode::kBroadcast && i->shape.Elements() == i->operands[0]->shape.Elements() &&
         std::is_sorted(i->dimensions.begin(), i->dimensions.end()) &&
         std::adjacent_find(i->dimensions.begin(), i->dimensions.end()) == i->dimensions.end();
}

// Who reads each value of a computation: host steps (by instruction, the root included), device
// steps by input binding (step, input) and by epilogue term (steps); each device step by the
// value it computes last.
struct Readers {
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> host;
  std::unordered_map<std::string, std::vector<std::pair<std::size_t, std::size_t>>> device_bindings;
  std::unordered_map<std::string, std::vector<std::size_t>> epilogue_steps;
  std::unordered_map<std::string, std::size_t> device_step_of;  // covers.back() -> step
};

// Nothing when a step is a loop or a conditional, whose reads are not tracked here.
std::optional<Readers> FindReaders(const std::vector<Step>& steps, const hlo::Computation& computation) {
  Readers readers;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    if (step.kind == Step::Kind::kHost) {
      const Instruction* i = computation.Find(step.instruction);
      for (const Instruction* operand : i->operands) readers.host[operand].push_back(i);
    } else if (step.kind == Step::Kind::kDevice) {
      for (std::size_t b = 0; b < step.device->inputs.size(); ++b) {
        readers.device_bindings[step.device->inputs[b].value].push_back({s, b});
      }
      for (const EpilogueTerm& term : step.device->epilogue) readers.epilogue_steps[term.operand].push_back(s);
      readers.device_step_of[step.device->covers.back()] = s;
    } else {
      return std::nullopt;
    }
  }
  for (const Instruction* operand : computation.root->operands) readers.host[operand].push_back(computation.root);
  return readers;
}

// A bias's readers besides its update: the copies that keep its elements in order (reshapes,
// broadcasts that add unit dimensions) and the drains that start from it alone, replicated
// over their rows ([N/C, rows, C], lower_dot_conv.cpp): (step, its bias input).
struct BiasReaders {
  std::vector<const Instruction*> copies;
  std::vector<std::pair<std::size_t, std::size_t>> drains;
};

// Nothing when anything else reads the bias or a copy of it, or no drain does.
std::optional<BiasReaders> FindBiasDrains(const Update& u, const Readers& readers, const StateScope& scope,
                                          const Config& config) {
  const auto n = static_cast<std::uint64_t>(u.parameter->shape.dims[0]);
  const std::uint64_t blocks = (n + config.cols - 1) / config.cols;
  BiasReaders found;
  std::vector<const Instruction*> todo{u.parameter};
  while (!todo.empty()) {
    const Instruction* value = todo.back();
    todo.pop_back();
    if (readers.device_bindings.contains(value->name)) return std::nullopt;
    if (const auto it = readers.host.find(value); it != readers.host.end()) {
      for (const Instruction* reader : it->second) {
        if (value == u.parameter && reader == u.new_parameter) continue;
        if (reader == scope.computation->root || !KeepsElementOrder(reader)) return std::nullopt;
        found.copies.push_back(reader);
        todo.push_back(reader);
      }
    }
    if (const auto it = readers.epilogue_steps.find(value->name); it != readers.epilogue_steps.end()) {
      for (const std::size_t step : it->second) {
        const DeviceStep& drain = *(*scope.steps)[step].device;
        const auto bias = std::find_if(drain.inputs.begin(), drain.inputs.end(),
                                       [](const Binding& b) { return b.kind == Binding::Kind::kBias; });
        if (drain.epilogue.size() != 1 || drain.epilogue[0].op != EpilogueTerm::Op::kAdd || bias == drain.inputs.end() ||
            bias->dtype != image::DataType::kFp32 || bias->shape.size() != 3 || bias->shape[0] != blocks ||
            bias->shape[2] != config.cols) {
          return std::nullopt;
        }
        found.drains.push_back({step, static_cast<std::size_t>(bias - drain.inputs.begin())});
      }
    }
  }
  if (found.drains.empty()) return std::nullopt;
  return found;
}

// Places the updates of `scope`'s state (PlaceStateUpdates): returns whether any was placed.
bool PlaceUpdatesIn(CompiledModel& model, const StateScope& scope, const Config& config) {
  std::vector<Step>& scope_steps = *scope.steps;
  const Instruction* root = scope.computation->root;
  const auto& aliases = scope.aliases;
  const auto& alias_of_output = scope.alias_of_output;
  std::optional<Readers> found = FindReaders(scope_steps, *scope.computation);
  if (!found) return false;  // a loop or conditional reads values in ways not tracked here: keep the state on the host
  const Readers& readers = *found;
  const auto& host_readers = readers.host;
  const auto& device_bindings = readers.device_bindings;
  const auto& epilogue_steps = readers.epilogue_steps;
  const auto& device_step_of = readers.device_step_of;

  std::unordered_set<std::string> removed;
  std::vector<std::pair<std::size_t, Binding>> rebound;  // (step, the state binding), parallel to rebound_at
  std::vector<std::pair<std::size_t, std::size_t>> rebound_at;  // (step, input index)
  std::vector<std::shared_ptr<const DeviceStep>> updates;
  std::unordered_set<std::size_t> drains_from_state;  // steps whose bias is now a state tensor: no epilogue
  for (const auto& [output, parameter] : aliases) {
    std::optional<Update> u = MatchSgd(output, parameter, alias_of_output);
    if (!u) u = MatchAdam(output, parameter, alias_of_output);
    if (!u) continue;
    // Every value of the chain is read only inside it (and the root, for the new state), the
    // moments only by it, and the dot's step computes the dot alone.
    std::unordered_set<const Instruction*> inside(u->chain.begin(), u->chain.end());
    const auto private_value = [&](const Instruction* value, bool root_may_read) {
      const auto it = host_readers.find(value);
      if (it != host_readers.end()) {
        for (const Instruction* reader : it->second) {
          if (!inside.contains(reader) && !(root_may_read && (reader == root || scope.forwards.contains(reader)))) {
            return false;
          }
        }
      }
      return !device_bindings.contains(value->name) && !epilogue_steps.contains(value->name);
    };
    bool private_chain = true;
    for (const Instruction* i : u->chain) {
      const bool new_state = i == u->new_parameter ||
                             std::find(u->new_moments.begin(), u->new_moments.end(), i) != u->new_moments.end();
      private_chain = private_chain && private_value(i, new_state);
    }
    for (const Instruction* moment : u->moments) private_chain = private_chain && private_value(moment, false);
    // The chain's steps, and the splats where they are host steps read by the chain alone.
    const auto remove_chain = [&] {
      for (const Instruction* i : u->chain) removed.insert(i->name);
      for (const Instruction* i : u->chain) {
        for (const Instruction* operand : i->operands) {
          if (UniformConstant(*operand) && private_value(operand, false)) removed.insert(operand->name);
        }
      }
    };
    if (u->parameter->shape.Rank() == 1) {
      // A bias, read otherwise only on the way to drains that start from it (FindBiasDrains).
      if (!private_chain) continue;
      const std::optional<BiasReaders> bias = FindBiasDrains(*u, readers, scope, config);
      if (!bias) continue;
      const auto& [copies, drains] = *bias;
      const std::uint64_t blocks = (static_cast<std::uint64_t>(u->parameter->shape.dims[0]) + config.cols - 1) / config.cols;
      std::vector<std::vector<std::uint64_t>> replicas;  // one per shape the drains read
      for (const auto& [step, input] : drains) {
        const std::vector<std::uint64_t>& shape = scope_steps[step].device->inputs[input].shape;
        if (std::find(replicas.begin(), replicas.end(), shape) == replicas.end()) replicas.push_back(shape);
        rebound_at.push_back({step, input});
        rebound.push_back({step, {Binding::Kind::kState, ReplicaName(scope.Parameter(u->parameter), shape), {},
                                  image::DataType::kFp32, shape}});
        drains_from_state.insert(step);
      }
      const std::vector<std::uint64_t> rows{blocks, 1, config.cols};
      const auto vector_state = [&](const Instruction* input, const Instruction* out) {
        const Instruction& value = scope.Parameter(input);
        model.state_tensors.push_back({StateName(value, "fp32", {0}),
                                       {Binding::Kind::kValue, value.name, {0}, image::DataType::kFp32, rows, config.cols, 0},
                                       scope.Output(out).name});
      };
      vector_state(u->parameter, u->new_parameter);
      for (std::size_t i = 0; i < u->moments.size(); ++i) vector_state(u->moments[i], u->new_moments[i]);
      for (const std::vector<std::uint64_t>& shape : replicas) {
        const Instruction& value = scope.Parameter(u->parameter);
        model.state_tensors.push_back({ReplicaName(value, shape),
                                       {Binding::Kind::kBias, value.name, {0}, image::DataType::kFp32, shape, config.cols, 0},
                                       ""});
      }
      updates.push_back(
          std::make_shared<const DeviceStep>(LowerInputGradientUpdate(*u, {0}, {}, rows, replicas, scope, config)));
      for (const Instruction* copy : copies) removed.insert(copy->name);
      remove_chain();
      continue;
    }
    // Weights: read by the subtraction and by device dots (matrices) or convolutions (rank 4) as
    // column-blocked bf16 weights only; a dot's gradient is recomputed in each layout the dots
    // read, a convolution's comes in.
    const bool convolution = u->parameter->shape.Rank() == 4;
    if (!convolution) {
      private_chain = private_chain && private_value(u->dot, false);
      const auto dot_step = device_step_of.find(u->dot->name);
      private_chain = private_chain && dot_step != device_step_of.end() &&
                      scope_steps[dot_step->second].device->covers.size() == 1;
    }
    // Its reverses that device convolutions alone read: jax.grad's input gradient of a
    // convolution reads the weights spatially reversed (rev(w), a host step otherwise), a layout
    // of their own.
    const auto read_by_convolutions_alone = [&](const Instruction* r) {
      return convolution && r->opcode == Opcode::kReverse && !host_readers.contains(r) &&
             !epilogue_steps.contains(r->name) && device_bindings.contains(r->name);
    };
    const auto host = host_readers.find(u->parameter);
    std::vector<const Instruction*> reverses;
    if (host != host_readers.end()) {
      for (const Instruction* r : host->second) {
        if (r == u->new_parameter) continue;
        if (!read_by_convolutions_alone(r)) private_chain = false;
        reverses.push_back(r);
      }
    }
    private_chain = private_chain && !epilogue_steps.contains(u->parameter->name);
    // The weight readers: (step, input, the dimensions they read reversed).
    std::vector<std::tuple<std::size_t, std::size_t, std::vector<std::int64_t>>> weight_readers;
    if (const auto it = device_bindings.find(u->parameter->name); it != device_bindings.end()) {
      for (const auto& [s, b] : it->second) weight_readers.emplace_back(s, b, std::vector<std::int64_t>{});
    }
    for (const Instruction* r : reverses) {
      for (const auto& [s, b] : device_bindings.at(r->name)) weight_readers.emplace_back(s, b, r->dimensions);
    }
    private_chain = private_chain && !weight_readers.empty();
    if (!private_chain) continue;
    // The first reader of each layout (reversed dimensions, permutation).
    std::vector<std::pair<const Binding*, std::vector<std::int64_t>>> layouts;
    bool blocked = true;
    for (const auto& [s, b, reversed_dims] : weight_readers) {
      const Binding& binding = scope_steps[s].device->inputs[b];
      const std::vector<std::int64_t>& order = binding.permutation;
      const std::vector<std::int64_t>& reversed = reversed_dims;  // a lambda cannot capture a structured binding in C++20
      blocked = blocked && binding.kind == Binding::Kind::kValue && binding.block_columns == config.cols &&
                binding.block_outer == 0 && binding.dtype == image::DataType::kBf16 &&
                (convolution ? order.size() == 4 && binding.shape.size() == 5
                             : order == std::vector<std::int64_t>{0, 1} || order == std::vector<std::int64_t>{1, 0});
      const auto same = [&](const auto& l) { return l.first->permutation == order && l.second == reversed; };
      if (blocked && std::none_of(layouts.begin(), layouts.end(), same)) layouts.emplace_back(&binding, reversed);
    }
    if (!blocked) continue;
    for (const auto& [reader, reversed_dims] : layouts) {
      const std::vector<std::int64_t>& layout = reader->permutation;
      const std::vector<std::int64_t>& reversed = reversed_dims;
      // A dot's tensors [ceil(N/C), K, C]; a convolution's as its reader loads them.
      std::vector<std::uint64_t> shape = reader->shape;
      if (!convolution) {
        const auto k = static_cast<std::uint64_t>(u->parameter->shape.dims[static_cast<std::size_t>(layout[0])]);
        const auto n = static_cast<std::uint64_t>(u->parameter->shape.dims[static_cast<std::size_t>(layout[1])]);
        shape = {(n + config.cols - 1) / config.cols, k, config.cols};
      }
      const auto state = [&](const Instruction* input, std::string_view what, image::DataType dtype, const Instruction* out) {
        const Instruction& value = scope.Parameter(input);
        model.state_tensors.push_back({StateName(value, what, layout, reversed),
                                       {Binding::Kind::kValue, value.name, layout, dtype, shape, config.cols, 0, reversed},
                                       out != nullptr ? scope.Output(out).name : ""});
      };
      state(u->parameter, "fp32", image::DataType::kFp32, u->new_parameter);
      for (std::size_t i = 0; i < u->moments.size(); ++i) {
        state(u->moments[i], "fp32", image::DataType::kFp32, u->new_moments[i]);
      }
      state(u->parameter, "weights", image::DataType::kBf16, nullptr);
      updates.push_back(std::make_shared<const DeviceStep>(convolution ? LowerInputGradientUpdate(*u, layout, reversed, shape, {}, scope, config)
                                                                       : LowerUpdate(*u, layout, scope, config)));
    }
    for (const auto& [s, b, reversed] : weight_readers) {
      const Binding& binding = scope_steps[s].device->inputs[b];
      rebound_at.push_back({s, b});
      rebound.push_back({s, {Binding::Kind::kState, StateName(scope.Parameter(u->parameter), "weights", binding.permutation, reversed), {},
                             binding.dtype, binding.shape}});
    }
    for (const Instruction* r : reverses) removed.insert(r->name);
    if (!convolution) removed.insert(u->dot->name);
    remove_chain();
  }
  if (updates.empty()) return false;

  for (std::size_t r = 0; r < rebound.size(); ++r) {
    Step& step = scope_steps[rebound_at[r].first];
    auto copy = std::make_shared<DeviceStep>(*step.device);
    copy->inputs[rebound_at[r].second] = rebound[r].second;
    if (drains_from_state.contains(rebound_at[r].first)) copy->epilogue.clear();  // the bias is bound state now
    step.device = std::move(copy);
  }
  std::vector<Step> steps;
  bool placed = false;
  for (Step& step : scope_steps) {
    const std::string& name = step.kind == Step::Kind::kDevice ? step.device->covers.back() : step.instruction;
    if (removed.contains(name)) continue;
    const bool forward = std::any_of(scope.forwards.begin(), scope.forwards.end(),
                                     [&](const Instruction* f) { return f->name == step.instruction; });
    if (!placed && (step.instruction == root->name || forward)) {
      // Last of all, after every dot that reads the old weights, before the new values go to
      // the root (or a tuple that carries them there).
      for (const auto& update : updates) steps.push_back({Step::Kind::kDevice, update->covers.back(), "", update});
      placed = true;
    }
    steps.push_back(std::move(step));
  }
  scope_steps = std::move(steps);
  return true;
}

// The entry's scope: its donated parameters and the root operands they alias. Nothing when an
// alias is not a whole array parameter to a whole root operand.
std::optional<StateScope> EntryScope(CompiledModel& model) {
  const hlo::Computation& entry = *model.module->entry;
  const Instruction* root = entry.root;
  if (root->opcode != Opcode::kTuple) return std::nullopt;
  const std::vector<Instruction*> parameters = entry.Parameters();
  StateScope scope;
  scope.steps = &model.steps;
  scope.computation = &entry;
  for (const hlo::InputOutputAlias& alias : model.module->input_output_aliases) {
    if (alias.output_index.size() != 1 || !alias.parameter_index.empty()) return std::nullopt;
    const auto output = static_cast<std::size_t>(alias.output_index[0]);
    const auto parameter = static_cast<std::size_t>(alias.parameter);
    if (output >= root->operands.size() || parameter >= parameters.size() || parameters[parameter] == nullptr) {
      return std::nullopt;
    }
    scope.aliases.emplace_back(root->operands[output], parameters[parameter]);
    scope.alias_of_output[root->operands[output]] = parameters[parameter];
  }
  return scope;
}

// Whether `computation`'s root depends on element `index` of its (tuple) parameter.
bool ReadsTupleElement(const hlo::Computation& computation, std::int64_t index) {
  std::vector<const Instruction*> todo{computation.root};
  std::unordered_set<const Instruction*> seen;
  while (!todo.empty()) {
    const Instruction* i = todo.back();
    todo.pop_back();
    if (!seen.insert(i).second) continue;
    if (i->opcode == Opcode::kParameter) return true;  // the whole tuple
    if (i->opcode == Opcode::kGetTupleElement && i->operands[0]->opcode == Opcode::kParameter) {
      if (i->tuple_index == index) return true;
      continue;
    }
    for (const Instruction* operand : i->operands) todo.push_back(operand);
  }
  return false;
}

// The scope of a while loop of the entry (`control`, its control step) that carries donated
// state: element i of the tuple it starts from is a donated parameter p, the entry root operand
// p aliases is the loop result's element i (and nothing else of the entry reads p or that
// element), and the body reads element i through one get-tuple-element s_i and returns its new
// value as element i of its root tuple, while the condition does not read it. Then s_i is a
// state input named p, and the body root's operand i its new value, read back as the entry
// root operand.
std::optional<StateScope> LoopScope(CompiledModel& model, Step& control, const StateScope& entry_scope) {
  const hlo::Computation& entry = *model.module->entry;
  const Instruction* loop = entry.Find(control.instruction);
  if (loop == nullptr || loop->opcode != Opcode::kWhile || control.regions.size() != 2) return std::nullopt;
  const Instruction* start = loop->operands.at(0);
  const hlo::Computation& condition = *loop->called.at(0);
  const hlo::Computation& body = *loop->called.at(1);
  if (start->opcode != Opcode::kTuple || body.root->opcode != Opcode::kTuple) return std::nullopt;
  const std::vector<Instruction*> body_parameters = body.Parameters();
  if (body_parameters.size() != 1 || body_parameters[0] == nullptr) return std::nullopt;
  // Who reads what in the entry, by instruction.
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> entry_readers;
  for (const auto& i : entry.instructions) {
    for (const Instruction* operand : i->operands) entry_readers[operand].push_back(i.get());
  }
  const auto read_only_by = [&](const Instruction* value, const Instruction* reader) {
    const auto it = entry_readers.find(value);
    return it != entry_readers.end() &&
           std::all_of(it->second.begin(), it->second.end(), [&](const Instruction* r) { return r == reader; });
  };
  StateScope scope;
  scope.steps = &control.regions[1].steps;
  scope.computation = &body;
  for (const auto& [output, parameter] : entry_scope.aliases) {
    if (output->opcode != Opcode::kGetTupleElement || output->operands[0] != loop) continue;
    const std::int64_t index = output->tuple_index;
    if (start->operands.at(static_cast<std::size_t>(index)) != parameter || !read_only_by(parameter, start) ||
        !read_only_by(output, entry.root) || ReadsTupleElement(condition, index)) {
      continue;
    }
    const Instruction* input = nullptr;  // the body's one get-tuple-element of element `index`
    std::size_t found = 0;
    for (const auto& i : body.instructions) {
      if (i->opcode == Opcode::kGetTupleElement && i->operands[0] == body_parameters[0] && i->tuple_index == index) {
        input = i.get();
        ++found;
      }
    }
    if (found != 1) continue;
    // The new value, through the tuples an inlined call returns it in (get-tuple-element of a tuple).
    const Instruction* value = body.root->operands.at(static_cast<std::size_t>(index));
    while (value->opcode == Opcode::kGetTupleElement && value->operands[0]->opcode == Opcode::kTuple) {
      scope.forwards.insert(value->operands[0]);
      value = value->operands[0]->operands.at(static_cast<std::size_t>(value->tuple_index));
    }
    scope.aliases.emplace_back(value, input);
    scope.alias_of_output[value] = input;
    scope.entry_parameter[input] = parameter;
    scope.entry_output[value] = output;
  }
  if (scope.aliases.empty()) return std::nullopt;
  return scope;
}

}  // namespace

void PlaceStateUpdates(CompiledModel& model, const Config& config) {
  if (config.dtype != DType::kBf16) return;  // ACCVEC is fp32 on bf16 configurations only
  const std::optional<StateScope> entry = EntryScope(model);
  if (!entry) return;
  if (PlaceUpdatesIn(model, *entry, config)) return;
  // A loop of training steps: the state it carries, updated on the device in its body.
  for (Step& step : model.steps) {
    if (step.kind != Step::Kind::kControl) continue;
    if (const std::optional<StateScope> loop = LoopScope(model, step, *entry)) PlaceUpdatesIn(model, *loop, config);
  }
}

}  // namespace systole::compiler::detail
