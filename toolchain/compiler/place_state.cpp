// Training state in device memory (CompileOptions::device_state, docs/TRAINING.md "State in
// device memory"). For each donated parameter p whose new value is SGD with momentum or Adam,
//
//   m' = m·mu + g        p' = p − m'·lr
//   m' = m·b1 + g·(1−b1)   v' = v·b2 + (g·(1−b2))·g   p' = p − (s·m') / (sqrt(v') + eps)
//
// (the chains jax.grad and optax write, recognised by optimizer_match.cpp; f32 elementwise on
// the host otherwise; Adam's step size s is a scalar the host computes from the step count), the
// compiler keeps p and its moments in device memory, with each copy its readers load, and
// replaces the chain by update steps (lower_update.cpp) after every step that reads the old
// values:
//   * the weights of dots: in each layout the dots load (column-blocked, bf16 copy beside the
//     fp32 value), the gradient dot g = Xᵀ·Y recomputed in that layout by the update step (its
//     products are exact in fp32 and sum over the batch in the same order in either layout);
//   * the weights of convolutions: likewise in each layout the convolutions load, the input
//     gradient's spatially reversed view included; their gradient, a convolution, comes in;
//   * a bias that drains start from replicated over their rows: b and its moments as rows of C,
//     and b replicated as each drain reads it; its gradient (a sum over the batch, on the host)
//     comes in, and the same step is subtracted from every replica row.
// ACCVEC is the interpreter's f32 arithmetic, so the result is the host's update bit for bit.
// The state is the entry's donated parameters, or what a loop of training steps carries
// through its body (state_scope.cpp).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "toolchain/compiler/lower_update.hpp"
#include "toolchain/compiler/lowering.hpp"
#include "toolchain/compiler/optimizer_match.hpp"
#include "toolchain/compiler/state_scope.hpp"

namespace systole::compiler::detail {
namespace {

using hlo::Instruction;
using hlo::Opcode;

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
