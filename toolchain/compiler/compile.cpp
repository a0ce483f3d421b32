// Compile(): front-end passes, then partitioning. Every dot / convolution the MXU can run
// becomes a device step together with the users fused into its drain, every bf16
// elementwise op the vector unit computes one of its own, and so does every max pool the POOL
// computes exactly; every other instruction the result
// depends on becomes a host step, evaluated by the interpreter. A while or conditional has the
// computations it calls partitioned the same way (control_flow.cpp).
#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <unordered_set>

#include "toolchain/compiler/lowering.hpp"
#include "toolchain/hlo/parser.hpp"
#include "toolchain/hlo/pass.hpp"
#include "toolchain/hlo/verifier.hpp"

namespace systole::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// A unary instruction the vector unit computes with its `math` (lower_vector.cpp).
bool VectorMathOpcode(Opcode opcode) {
  return opcode == Opcode::kExp || opcode == Opcode::kRsqrt || opcode == Opcode::kSqrt || opcode == Opcode::kTanh ||
         opcode == Opcode::kLogistic || opcode == Opcode::kLog;
}

// Why an instruction that is not a dot or convolution runs on the host.
std::string HostReason(const Instruction& i, const Config& config) {
  if (ProducesValue(i.opcode)) return "value";
  if (MovesDataOnly(i.opcode)) return "data movement";
  switch (i.opcode) {
    case Opcode::kWhile:
    case Opcode::kConditional:
      return "control flow whose computations have no device work: the interpreter runs it whole";
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return "no device kernel: batch normalization runs on the host (statistics over the batch in f32)";
    default:
      // The vector unit takes bf16 add/sub/mul/max/min of equal shapes and the transcendentals
      // (lower_vector.cpp).
      if (!IsElementwiseBinary(i.opcode) && !VectorMathOpcode(i.opcode)) return "no device kernel";
      if (config.dtype != DType::kBf16) return "elementwise ops run on the vector unit of bf16 configurations only";
      if (i.shape.type != hlo::ElementType::kBf16 && i.shape.type != hlo::ElementType::kF32) {
        return fmt::format("{} elementwise: the vector unit computes bf16", hlo::ElementTypeName(i.shape.type));
      }
      if (i.shape.type == hlo::ElementType::kF32) {
        return fmt::format("{} elementwise kept at full precision: the vector unit computes bf16, which f32 "
                           "programs accept only on an inference path with fusion on (docs/COMPILER.md, "
                           "\"f32 programs on the vector unit\")",
                           hlo::ElementTypeName(i.shape.type));
      }
      return "not a bf16 op of two equal shapes";
  }
}

using Programs = std::unordered_map<const Instruction*, std::shared_ptr<const DeviceStep>>;

// Whether `value` is a device step's result (one of `programs`) that the step stores in the
// element type (bf16 / int8), so that its value is exact in that type.
bool StoredInElementType(const Programs& programs, const Instruction* value) {
  const auto producer = programs.find(value);
  return producer != programs.end() && producer->second->output.dtype != image::DataType::kFp32 &&
         producer->second->output.dtype != image::DataType::kInt32;
}

// A max pool goes to the device when the POOL kernel computes it and its bf16 result is exact:
// the values are bf16 already (the element type, or a device step stored them as bf16; the
// max of bf16 values is one of them), or every use rounds the result to bf16 anyway (max
// commutes with the monotone rounding). Otherwise `rejected` says why.
std::optional<detail::PoolPlan> PlacePool(
    const Instruction& i, const detail::Users& users, const Instruction* root, const Config& config, bool fuse,
    const std::unordered_map<const Instruction*, detail::Group>& groups,
    const std::unordered_map<const Instruction*, std::shared_ptr<const DeviceStep>>& programs,
    std::unordered_map<const Instruction*, std::string>& rejected) {
  // A device step whose drain ends in a ReLU / ReLU6 / clamp at >= 0 produces no negative value.
  const auto non_negative = [&](const Instruction& value) {
    const auto g = groups.find(&value);
    return config.dtype == DType::kBf16 && g != groups.end() && programs.contains(&value) &&
           g->second.func != isa::ActFunc::kNone && g->second.lo >= 0.0f;
  };
  std::string why_not;
  std::optional<detail::PoolPlan> plan = detail::PlanMaxPool(i, users, config, non_negative, why_not);
  if (!plan) {
    rejected[&i] = why_not;
    return std::nullopt;
  }
  const hlo::ElementType type = plan->input->shape.type;
  const bool device_bf16 = StoredInElementType(programs, plan->input);
  if (type == hlo::ElementType::kBf16 || type == hlo::ElementType::kS8 || device_bf16 ||
      detail::RoundingToBf16IsInvisible(i, users, root, config, fuse)) {
    return plan;
  }
  rejected[&i] = fmt::format("max pool of {} values no device step rounded to bf16, read at full precision "
                             "(the POOL's element type is bf16)",
                             hlo::ElementTypeName(type));
  return std::nullopt;
}

// A sqrt that stores rsqrt and the divides that multiply by it (VectorGroup::stores_rsqrt) run
// on the device together or not at all: when a kernel refused one of them (or the divide went to
// another step), the others' programs are dropped too and the host computes a / sqrt(b) as the
// HLO writes it.
void KeepRsqrtDivisionsWhole(std::unordered_map<const Instruction*, detail::VectorGroup>& vector_of_result,
                             std::unordered_map<const Instruction*, std::shared_ptr<const DeviceStep>>& programs,
                             std::unordered_map<const Instruction*, std::string>& rejected) {
  const auto drop = [&](const Instruction* result, const std::string& why) {
    programs.erase(result);
    vector_of_result.erase(result);
    rejected[result] = why;
  };
  for (bool changed = true; changed;) {
    changed = false;
    std::unordered_map<const Instruction*, std::vector<const Instruction*>> divides_of;  // sqrt -> divides
    for (const auto& [result, group] : vector_of_result) {
      if (group.divisor_rsqrt != nullptr) divides_of[group.divisor_rsqrt].push_back(result);
    }
    std::vector<std::pair<const Instruction*, std::string>> dropped;
    for (const auto& [result, group] : vector_of_result) {
      if (group.divisor_rsqrt != nullptr && !programs.contains(group.divisor_rsqrt)) {
        dropped.emplace_back(result, fmt::format("its divisor's {} runs on the host (a / sqrt(b) runs on the "
                                                 "device as a · rsqrt(b), both or neither)",
                                                 group.divisor_rsqrt->name));
      }
      if (group.stores_rsqrt) {
        const std::size_t on_device = static_cast<std::size_t>(std::count_if(
            divides_of[result].begin(), divides_of[result].end(), [&](const Instruction* d) { return programs.contains(d); }));
        if (on_device != divides_of[result].size() || divides_of[result].empty()) {
          dropped.emplace_back(result, "a divide by it runs on the host (a / sqrt(b) runs on the device as "
                                       "a · rsqrt(b), both or neither)");
        }
      }
    }
    for (const auto& [result, why] : dropped) {
      if (!programs.contains(result)) continue;
      drop(result, why);
      changed = true;
    }
  }
}

}  // namespace

StepEstimate CompiledModel::TotalEstimate() const {
  StepEstimate total;
  for (const DeviceStep* step : DeviceSteps()) {
    total.cycles += step->estimate.cycles;
    total.mxu_busy += step->estimate.mxu_busy;
    total.macs += step->estimate.macs;
  }
  return total;
}

std::uint64_t CompiledModel::DeviceTensorBytes() const {
  std::uint64_t bytes = 0;
  for (const DeviceStep* step : DeviceSteps()) {
    for (const image::TensorDesc& t : step->program.inputs) bytes += t.Bytes();
    for (const image::TensorDesc& t : step->program.outputs) bytes += t.Bytes();
  }
  return bytes;
}

std::size_t CompiledModel::DeviceStepCount() const { return DeviceSteps().size(); }

std::shared_ptr<hlo::Module> PrepareModule(const std::string& hlo_text, const std::string& source_name) {
  auto module = std::make_shared<hlo::Module>(hlo::ParseModule(hlo_text, source_name));
  hlo::Verify(*module);
  hlo::Pipeline pipeline("front-end");
  pipeline.Add<hlo::InlineCalls>();
  pipeline.Add<hlo::DeadCodeElimination>();
  pipeline.Add<hlo::ConstantFolding>();
  pipeline.Add<hlo::DeadCodeElimination>();
  const hlo::PassResult result = pipeline.Run(*module);
  if (!result.ok()) throw std::runtime_error(fmt::format("{}: {}", source_name, *result.error));
  return module;
}

namespace detail {

std::vector<Step> PartitionComputation(const hlo::Computation& computation, const Config& config,
                                       const CompileOptions& options, const std::string& source_name,
                                       std::size_t& built) {
  std::vector<Step> steps;
  const std::vector<Instruction*> order = computation.PostOrder();

  detail::Users users;
  for (const Instruction* i : order) {
    for (const Instruction* operand : i->operands) {
      auto& list = users[operand];
      if (std::find(list.begin(), list.end(), i) == list.end()) list.push_back(i);
    }
  }

  // Plan the groups; a group is emitted where its result is.
  std::unordered_map<const Instruction*, detail::Group> group_of_result;
  std::unordered_map<const Instruction*, std::string> rejected;
  std::unordered_set<const Instruction*> claimed_residuals;  // joined by a group's drain
  for (const Instruction* i : order) {
    if (i->opcode != Opcode::kDot && i->opcode != Opcode::kConvolution) continue;
    if (auto reason = detail::MxuRejection(*i, config, source_name)) {
      rejected[i] = *reason;
      continue;
    }
    detail::Group group = detail::PlanGroup(*i, users, computation.root, config, options.fuse, claimed_residuals);
    if (group.residual != nullptr) {
      for (const Instruction* member : group.chain) {
        if (member->opcode == Opcode::kAdd && detail::IsResidualAdd(*member, config)) claimed_residuals.insert(member);
      }
    }
    if (group.unfused != nullptr) rejected[group.unfused] = group.unfused_reason;
    group_of_result.emplace(group.Result(), std::move(group));
  }

  // Build the programs. A group whose shapes the kernels reject runs on the host, one
  // instruction at a time, so it is dissolved before deciding what is needed.
  std::unordered_set<const Instruction*> fused;
  for (const auto& [result, group] : group_of_result) fused.insert(group.chain.begin(), group.chain.end());
  const detail::DefaultPrecisionOps f32_ops = detail::F32VectorOps(computation, users, config, options.fuse);
  // Softmaxes and layer norms along the last dimension, each one step with its intermediates in
  // the unified buffer (the fused row kernels); lowered here, so that one the kernel refuses is
  // planned instruction by instruction instead.
  std::unordered_map<const Instruction*, std::shared_ptr<const DeviceStep>> row_kernel_of_result;
  std::unordered_map<const Instruction*, std::vector<const Instruction*>> row_kernel_reads;
  const auto fuse_row_kernel = [&](const Instruction* result, const std::vector<const Instruction*>& covers,
                                   std::vector<const Instruction*> reads, const auto& lower) {
    if (std::any_of(covers.begin(), covers.end(), [&](const Instruction* c) { return fused.contains(c); })) return;
    try {
      row_kernel_of_result[result] = std::make_shared<DeviceStep>(lower());
    } catch (const std::invalid_argument&) {
      return;  // the instructions go their own ways
    }
    row_kernel_reads[result] = std::move(reads);
    fused.insert(covers.begin(), covers.end());
  };
  for (const Instruction* i : order) {
    if (fused.contains(i)) continue;
    if (const auto softmax = detail::PlanSoftmax(*i, users, computation.root, config, options.fuse, f32_ops)) {
      fuse_row_kernel(softmax->result, softmax->covers, {softmax->input},
                      [&] { return detail::LowerSoftmax(*softmax, config); });
    } else if (const auto norm = detail::PlanLayerNorm(*i, users, computation.root, config, options.fuse, f32_ops)) {
      std::vector<const Instruction*> reads{norm->input};
      if (norm->gamma != nullptr) reads.push_back(norm->gamma);
      if (norm->beta != nullptr) reads.push_back(norm->beta);
      fuse_row_kernel(norm->result, norm->covers, std::move(reads), [&] { return detail::LowerLayerNorm(*norm, config); });
    }
  }
  // Reductions along rows (REDUCE), with their scale and convert.
  std::unordered_map<const Instruction*, detail::RowReducePlan> reduce_of_result;
  for (const Instruction* i : order) {
    if (i->opcode != Opcode::kReduce || fused.contains(i)) continue;
    std::string why_not;
    if (std::optional<detail::RowReducePlan> r = detail::PlanRowReduce(*i, users, computation.root, config, options.fuse, f32_ops, why_not)) {
      fused.insert(r->chain.begin(), r->chain.end());
      reduce_of_result.emplace(r->Result(), std::move(*r));
    } else if (!why_not.empty()) {
      rejected[i] = why_not;
    }
  }
  // Vector-unit steps: GELU's tanh and erf forms as one math step each; an elementwise op and the
  // activation after it, or an activation alone.
  std::unordered_map<const Instruction*, detail::VectorGroup> vector_of_result;
  for (const Instruction* i : order) {
    if (group_of_result.contains(i) || fused.contains(i)) continue;
    std::optional<detail::VectorGroup> g = detail::PlanGeluTanh(*i, users, computation.root, config, options.fuse, f32_ops);
    if (!g) g = detail::PlanGeluErf(*i, users, computation.root, config, options.fuse, f32_ops);
    if (g) {
      fused.insert(g->chain.begin(), g->chain.end());
      vector_of_result.emplace(i, std::move(*g));
    }
  }
  for (const Instruction* i : order) {
    if (group_of_result.contains(i) || fused.contains(i)) continue;
    if (std::optional<detail::VectorGroup> v = detail::PlanVector(*i, users, computation.root, config, options.fuse, f32_ops)) {
      fused.insert(v->chain.begin(), v->chain.end());
      vector_of_result.emplace(v->Result(), std::move(*v));
    }
  }
  std::unordered_map<const Instruction*, std::shared_ptr<const DeviceStep>> programs;
  std::unordered_map<const Instruction*, detail::PoolPlan> pools;
  for (const Instruction* i : order) {
    if (const auto row_kernel = row_kernel_of_result.find(i); row_kernel != row_kernel_of_result.end()) {
      if (options.progress) options.progress(fmt::format("device step {}: {}", ++built, i->name));
      programs[i] = row_kernel->second;
      continue;
    }
    const auto g = group_of_result.find(i);
    const auto v = vector_of_result.find(i);
    const bool vector = v != vector_of_result.end();
    const auto rr = reduce_of_result.find(i);
    const bool reduction = rr != reduce_of_result.end();
    std::optional<detail::PoolPlan> pool;
    if (g == group_of_result.end() && i->opcode == Opcode::kReduceWindow) {
      pool = PlacePool(*i, users, computation.root, config, options.fuse, group_of_result, programs, rejected);
    }
    if (g == group_of_result.end() && !vector && !pool && !reduction) continue;
    if (g != group_of_result.end() && g->second.residual != nullptr) {
      // The shortcut's step (lowered before, in this order) stores it in the element type: its
      // value is exact there, so the starting tensor goes down as such (half the bytes in bf16).
      g->second.residual_in_element_type = StoredInElementType(programs, g->second.residual);
    }
    if (options.progress) options.progress(fmt::format("device step {}: {}", ++built, i->name));
    try {
      programs[i] = std::make_shared<DeviceStep>(pool        ? detail::LowerPool(*pool, config)
                                                 : vector    ? detail::LowerVector(v->second, config)
                                                 : reduction ? detail::LowerRowReduce(rr->second, config)
                                                             : detail::LowerGroup(g->second, config));
      if (pool) pools.emplace(i, *pool);
    } catch (const std::invalid_argument& error) {
      rejected[reduction ? rr->second.reduce : (vector || pool) ? i : g->second.anchor] =
          fmt::format("kernel: {}", error.what());
      if (vector) vector_of_result.erase(v);
      if (reduction) reduce_of_result.erase(rr);
      if (!vector && !pool && !reduction) group_of_result.erase(g);
    }
  }

  KeepRsqrtDivisionsWhole(vector_of_result, programs, rejected);

  // Only what the result needs, walking back from the root.
  std::unordered_set<const Instruction*> needed{computation.root};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* i = *it;
    if (!needed.contains(i)) continue;
    if (const auto row_kernel = row_kernel_reads.find(i); row_kernel != row_kernel_reads.end()) {
      needed.insert(row_kernel->second.begin(), row_kernel->second.end());
    } else if (const auto g = group_of_result.find(i); g != group_of_result.end()) {
      needed.insert(g->second.input);
      needed.insert(g->second.anchor->operands.at(1));
      if (g->second.residual != nullptr) needed.insert(g->second.residual);
      for (const EpilogueTerm& term : g->second.epilogue) needed.insert(computation.Find(term.operand));
    } else if (const auto p = pools.find(i); p != pools.end()) {
      needed.insert(p->second.input);
    } else if (const auto r = reduce_of_result.find(i); r != reduce_of_result.end()) {
      needed.insert(r->second.input);
    } else if (const auto v = vector_of_result.find(i); v != vector_of_result.end()) {
      for (const Instruction* read : v->second.Reads()) needed.insert(read);
    } else {
      needed.insert(i->operands.begin(), i->operands.end());
    }
  }

  for (const Instruction* i : order) {
    if (!needed.contains(i) || i->opcode == Opcode::kParameter) continue;
    if (const auto p = programs.find(i); p != programs.end()) {
      steps.push_back({Step::Kind::kDevice, i->name, "", p->second});
    } else if (i->opcode == Opcode::kWhile || i->opcode == Opcode::kConditional) {
      steps.push_back(PlaceControlFlow(*i, config, options, source_name, built));
    } else {
      const auto r = rejected.find(i);
      steps.push_back({Step::Kind::kHost, i->name, r != rejected.end() ? r->second : HostReason(*i, config), nullptr});
    }
  }
  return steps;
}

}  // namespace detail

namespace {

void NameParameterArithmetic(std::vector<Step>& steps) {
  for (Step& step : steps) {
    if (step.kind == Step::Kind::kHost && step.work == HostWork::kParameters) {
      step.reason = fmt::format("parameters only: feeds a device step's weights or drain (folded at compile "
                                "time when the parameters are constants); {}",
                                step.reason);
    }
    for (Region& region : step.regions) NameParameterArithmetic(region.steps);
  }
}

}  // namespace

CompiledModel Compile(const std::string& hlo_text, const std::string& source_name, const Config& config,
                      const CompileOptions& options) {
  CompiledModel model;
  model.config = config.name;
  model.hlo_text = hlo_text;
  model.source_name = source_name;
  model.module = PrepareModule(hlo_text, source_name);
  detail::MakeInputDilationExplicit(*model.module, source_name);
  std::size_t built = 0;
  model.steps = detail::PartitionComputation(*model.module->entry, config, options, source_name, built);
  if (options.device_state) detail::PlaceStateUpdates(model, config);
  ClassifyHostSteps(model);
  NameParameterArithmetic(model.steps);
  return model;
}

}  // namespace systole::compiler
