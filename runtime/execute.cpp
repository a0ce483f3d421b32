#include "runtime/execute.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "arch/isa/isa.hpp"
#include "arch/numerics/bf16.hpp"
#include "runtime/resident_state.hpp"
#include "sim/trace/timeline.hpp"
#include "toolchain/hlo/error.hpp"
#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/io.hpp"

namespace systole::runtime {

using compiler::Binding;
using compiler::DeviceStep;
using compiler::EpilogueTerm;
using compiler::Region;
using compiler::Step;
namespace {

using image::DataType;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

void AppendBytes(DataType dtype, double value, std::vector<std::uint8_t>& out) {
  std::uint32_t word = 0;
  switch (dtype) {
    case DataType::kInt8:
      // Values of an s8 HLO tensor: integral and in range by construction of the literal.
      out.push_back(static_cast<std::uint8_t>(static_cast<std::int8_t>(value)));
      return;
    case DataType::kInt32: word = static_cast<std::uint32_t>(static_cast<std::int32_t>(value)); break;
    case DataType::kFp32: word = std::bit_cast<std::uint32_t>(static_cast<float>(value)); break;
    case DataType::kBf16: {
      const std::uint16_t bits = numerics::F32ToBf16(std::bit_cast<std::uint32_t>(static_cast<float>(value)));
      out.push_back(static_cast<std::uint8_t>(bits));
      out.push_back(static_cast<std::uint8_t>(bits >> 8));
      return;
    }
  }
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(word >> (8 * i)));
}

// Elements of `dtype`, little-endian, as device memory holds them.
std::vector<std::uint8_t> ElementBytes(DataType dtype, const std::vector<double>& data) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(data.size() * image::DataTypeBytes(dtype));
  for (double v : data) AppendBytes(dtype, v, bytes);
  return bytes;
}

double ReadValue(DataType dtype, const std::uint8_t* p) {
  std::uint32_t word = 0;
  for (unsigned i = 0; i < image::DataTypeBytes(dtype); ++i) word |= std::uint32_t{p[i]} << (8 * i);
  switch (dtype) {
    case DataType::kInt8: return static_cast<std::int8_t>(word);
    case DataType::kInt32: return static_cast<std::int32_t>(word);
    case DataType::kBf16: return std::bit_cast<float>(numerics::Bf16ToF32(static_cast<std::uint16_t>(word)));
    case DataType::kFp32: return std::bit_cast<float>(word);
  }
  return 0;
}

std::vector<std::int64_t> Inverse(const std::vector<std::int64_t>& permutation) {
  std::vector<std::int64_t> inverse(permutation.size());
  for (std::size_t i = 0; i < permutation.size(); ++i) inverse[static_cast<std::size_t>(permutation[i])] = static_cast<std::int64_t>(i);
  return inverse;
}

// Bytes a Device::Load writes: the data segments and the instructions.
std::uint64_t LoadBytes(const image::Program& program) {
  std::uint64_t bytes = program.words.size() * isa::kInstructionBytes;
  for (const image::DataSegment& segment : program.data) bytes += segment.bytes.size();
  return bytes;
}

// The values of one run of a computation's steps (the entry's, or a region's each time the
// host calls it): the parameters and every step's result, each freed after its last use.
class Frame {
 public:
  Frame(const hlo::Computation& computation, const std::vector<Step>& steps, const std::string& source_name)
      : computation_(computation), source_name_(source_name) {
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const Step& step = steps[s];
      if (step.kind != Step::Kind::kDevice) {
        for (const hlo::Instruction* operand : Instruction(step.instruction).operands) last_use_[operand->name] = s;
        continue;
      }
      for (const Binding& binding : step.device->inputs) {
        if (binding.kind != Binding::Kind::kBias && binding.kind != Binding::Kind::kState) last_use_[binding.value] = s;
      }
      for (const EpilogueTerm& term : step.device->epilogue) last_use_[term.operand] = s;
    }
    last_use_.erase(computation.root->name);  // the root's value is the run's result
  }

  const hlo::Computation& computation() const { return computation_; }

  const hlo::Instruction& Instruction(const std::string& name) const {
    const hlo::Instruction* instruction = computation_.Find(name);
    if (instruction == nullptr) {
      throw std::logic_error(fmt::format("{}: {} has no instruction {}", source_name_, computation_.name, name));
    }
    return *instruction;
  }

  const hlo::Literal& Value(const std::string& name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) throw std::logic_error(fmt::format("{}: value {} is not computed", source_name_, name));
    return it->second;
  }

  void Set(const std::string& name, hlo::Literal value) { values_[name] = std::move(value); }

  // Frees the values whose last use was step `step`.
  void Release(std::size_t step) {
    for (auto it = last_use_.begin(); it != last_use_.end();) {
      if (it->second == step) {
        values_.erase(it->first);
        it = last_use_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  const hlo::Computation& computation_;
  const std::string& source_name_;
  std::unordered_map<std::string, hlo::Literal> values_;
  std::unordered_map<std::string, std::size_t> last_use_;  // step index after which a value is dead
};

class Runner {
 public:
  Runner(const CompiledModel& model, Device& device, ResidentPrograms* resident, std::vector<DeviceStepRecord>* record,
         const std::function<void(const std::string&)>& progress, std::int64_t while_iteration_limit,
         const ResidentState* state)
      : model_(model), device_(device), resident_(resident), record_(record), progress_(progress),
        while_iteration_limit_(while_iteration_limit), state_(state) {
    for (const DeviceStep* step : model.DeviceSteps()) device_index_.emplace(step, device_index_.size());
  }

  RunResult Run(const std::vector<hlo::Literal>& arguments) {
    const std::size_t parameters = model_.module->entry->Parameters().size();
    if (arguments.size() != parameters) {
      throw std::runtime_error(fmt::format("{} takes {} argument(s), got {}", model_.source_name, parameters,
                                           arguments.size()));
    }
    RunResult result;
    result.result = RunSteps(model_.steps, *model_.module->entry, arguments);
    result.stats = stats_;
    return result;
  }

 private:
  // Runs `steps`, the steps of `computation`, on `arguments` (its parameters in order) and
  // returns its root's value.
  hlo::Literal RunSteps(const std::vector<Step>& steps, const hlo::Computation& computation,
                        const std::vector<hlo::Literal>& arguments) {
    Frame frame(computation, steps, model_.source_name);
    const std::vector<hlo::Instruction*> parameters = computation.Parameters();
    for (std::size_t i = 0; i < arguments.size() && i < parameters.size(); ++i) frame.Set(parameters[i]->name, arguments[i]);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const Step& step = steps[s];
      if (step.kind == Step::Kind::kDevice) {
        RunDevice(*step.device, frame);
        ++stats_.device_steps;
      } else {
        const hlo::Instruction& instruction = frame.Instruction(step.instruction);
        std::vector<const hlo::Literal*> operands;
        for (const hlo::Instruction* operand : instruction.operands) operands.push_back(&frame.Value(operand->name));
        if (step.kind == Step::Kind::kControl) {
          frame.Set(step.instruction, RunControl(step, instruction, operands));
        } else {
          const auto start = Clock::now();
          frame.Set(step.instruction, hlo::EvaluateInstruction(instruction, operands));
          stats_.host_seconds += Seconds(start);
          ++stats_.host_steps;
        }
      }
      frame.Release(s);
    }
    return frame.Value(computation.root->name);
  }

  // A while or conditional with device work, by the interpreter's own rules
  // (hlo::EvaluateControlFlow: condition first, the iteration limit and its message, the branch
  // rule), each call of a computation running that region's steps. A loop's body calls are
  // counted for the progress line.
  hlo::Literal RunControl(const Step& step, const hlo::Instruction& instruction,
                          const std::vector<const hlo::Literal*>& operands) {
    const bool loop = instruction.opcode == hlo::Opcode::kWhile;
    std::int64_t iteration = 1;
    if (loop) loops_.push_back(fmt::format("{} iteration 1", instruction.name));
    const auto run = [&](const hlo::Computation& callee, const std::vector<const hlo::Literal*>& arguments) {
      const auto called = std::find(instruction.called.begin(), instruction.called.end(), &callee);
      const Region& region = step.regions.at(static_cast<std::size_t>(called - instruction.called.begin()));
      if (region.computation != callee.name) {
        throw std::logic_error(fmt::format("{}: {} calls {}, its region is {}", model_.source_name, instruction.name,
                                           callee.name, region.computation));
      }
      if (loop && &callee == instruction.called.at(1)) {
        loops_.back() = fmt::format("{} iteration {}", instruction.name, iteration++);
      }
      return RunSteps(region.steps, callee, {*arguments.at(0)});
    };
    hlo::Literal result = hlo::EvaluateControlFlow(instruction, operands, run, while_iteration_limit_);
    if (loop) loops_.pop_back();
    return result;
  }

  // The folded epilogue y = scale[c] * acc + shift[c], from the per-channel terms in order.
  static void FoldEpilogue(const DeviceStep& step, const Frame& frame, std::size_t channels, std::vector<double>& scale,
                           std::vector<double>& shift) {
    scale.assign(channels, 1.0);
    shift.assign(channels, 0.0);
    for (const EpilogueTerm& term : step.epilogue) {
      const std::vector<double>& v = frame.Value(term.operand).values;
      for (std::size_t c = 0; c < channels; ++c) {
        if (term.op == EpilogueTerm::Op::kAdd) {
          shift[c] += v[c];
        } else {
          scale[c] *= v[c];
          shift[c] *= v[c];
        }
      }
    }
  }

  static std::vector<std::uint8_t> InputBytes(const DeviceStep& step, const Binding& binding, const Frame& frame) {
    std::vector<double> scale, shift;
    std::vector<double> data;
    if (binding.kind == Binding::Kind::kState) return {};  // in its bound buffer already
    if (binding.kind == Binding::Kind::kValue) return EncodeValue(binding, frame.Value(binding.value));
    if (binding.kind == Binding::Kind::kBias && binding.shape.size() == 3) {
      // Replicated [N/C, rows, C] (lower_dot_conv.cpp): N is the output's channel count.
      const hlo::Instruction& result = frame.Instruction(step.output.value);
      const auto n = static_cast<std::size_t>(
          result.shape.dims.at(static_cast<std::size_t>(step.output.permutation.back())));
      FoldEpilogue(step, frame, n, scale, shift);
      data = ReplicatedBias(shift, binding.shape);
    } else if (binding.kind == Binding::Kind::kBias) {
      FoldEpilogue(step, frame, binding.shape.back(), scale, shift);
      data = shift;
    } else {
      const hlo::Literal& value = frame.Value(binding.value);
      data = Permute(value.values, value.shape.dims, binding.permutation);
      std::vector<std::uint64_t> dims;  // of the transposed value (the device shape unless blocked)
      for (std::int64_t p : binding.permutation) dims.push_back(static_cast<std::uint64_t>(value.shape.dims[static_cast<std::size_t>(p)]));
      if (binding.kind == Binding::Kind::kWeights) {
        const std::size_t channels = dims.back();
        FoldEpilogue(step, frame, channels, scale, shift);
        for (std::size_t i = 0; i < data.size(); ++i) data[i] *= scale[i % channels];
      }
      data = BlockColumns(binding, std::move(data), dims);
    }
    return ElementBytes(binding.dtype, data);
  }

  void RunDevice(const DeviceStep& step, Frame& frame) {
    RunStats& stats = stats_;
    if (progress_) {
      progress_(fmt::format("device step {}/{}: {}{}{}", device_index_.at(&step) + 1, device_index_.size(), step.kernel,
                            loops_.empty() ? "" : " — ", fmt::join(loops_, ", ")));
    }
    auto start = Clock::now();
    std::vector<std::vector<std::uint8_t>> inputs;
    for (const Binding& binding : step.inputs) inputs.push_back(InputBytes(step, binding, frame));
    stats.host_seconds += Seconds(start);

    start = Clock::now();
    systole::Program loaded;  // the step's own program when none is resident
    if (resident_ == nullptr) {
      loaded = state_ != nullptr ? device_.Load(step.program, state_->Bindings(step)) : device_.Load(step.program);
      stats.program_bytes += LoadBytes(step.program);
    }
    systole::Program& program = resident_ != nullptr ? resident_->Get(step, stats.program_bytes) : loaded;
    for (const std::vector<std::uint8_t>& input : inputs) stats.operand_bytes += input.size();
    DeviceStepResult ran = RunLoadedStep(device_, program, step, inputs, model_.source_name);
    const std::vector<std::uint8_t>& bytes = ran.output;
    const Counters& counters = ran.counters;
    stats.result_bytes += bytes.size();
    stats.cycles += counters["CYCLES"];
    stats.mxu_busy += counters["MXU_BUSY"];
    stats.macs += counters["MACS"];
    stats.device_seconds += Seconds(start);
    if (record_ != nullptr) record_->push_back({std::move(inputs), bytes, counters});

    start = Clock::now();
    // An update step's results stay in device memory: the host holds placeholders.
    for (const std::string& name : step.resident_outputs) frame.Set(name, hlo::Literal(frame.Instruction(name).shape));
    if (!step.output.value.empty()) {
      frame.Set(step.output.value, DecodeValue(step.output, bytes, frame.Instruction(step.output.value).shape));
    }
    stats.host_seconds += Seconds(start);
  }

  const CompiledModel& model_;
  Device& device_;
  ResidentPrograms* resident_;
  std::vector<DeviceStepRecord>* record_;
  std::function<void(const std::string&)> progress_;
  std::int64_t while_iteration_limit_;
  const ResidentState* state_;
  std::unordered_map<const DeviceStep*, std::size_t> device_index_;  // PlacementRows' order
  std::vector<std::string> loops_;  // "while.14 iteration 3" for each loop running, outermost first
  RunStats stats_;
};

}  // namespace

std::vector<double> Permute(const std::vector<double>& data, const std::vector<std::int64_t>& dims,
                            const std::vector<std::int64_t>& permutation) {
  const std::size_t rank = dims.size();
  bool identity = true;
  for (std::size_t i = 0; i < rank; ++i) identity = identity && permutation[i] == static_cast<std::int64_t>(i);
  if (identity) return data;
  const std::vector<std::int64_t> strides = hlo::RowMajorStrides(dims);
  std::vector<std::int64_t> out_dims(rank), out_strides(rank);  // source stride of each output dim
  for (std::size_t i = 0; i < rank; ++i) {
    out_dims[i] = dims[static_cast<std::size_t>(permutation[i])];
    out_strides[i] = strides[static_cast<std::size_t>(permutation[i])];
  }
  std::vector<double> out(data.size());
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t source = 0;
  for (std::size_t n = 0; n < out.size(); ++n) {
    out[n] = data[static_cast<std::size_t>(source)];
    for (std::size_t d = rank; d-- > 0;) {  // odometer over the output index
      source += out_strides[d];
      if (++index[d] < out_dims[d]) break;
      source -= out_strides[d] * out_dims[d];
      index[d] = 0;
    }
  }
  return out;
}

std::vector<double> Reverse(std::vector<double> data, const std::vector<std::int64_t>& dims,
                            const std::vector<std::int64_t>& reversed) {
  if (reversed.empty()) return data;  // moved: no copy for a value read in order
  std::vector<bool> flip(dims.size(), false);
  for (std::int64_t d : reversed) flip.at(static_cast<std::size_t>(d)) = true;
  const std::vector<std::int64_t> strides = hlo::RowMajorStrides(dims);
  std::vector<double> out(data.size());
  for (std::size_t n = 0; n < out.size(); ++n) {
    std::int64_t source = 0, rest = static_cast<std::int64_t>(n);
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const std::int64_t index = rest / strides[d];
      rest %= strides[d];
      source += (flip[d] ? dims[d] - 1 - index : index) * strides[d];
    }
    out[n] = data[static_cast<std::size_t>(source)];
  }
  return out;
}

std::vector<double> ReplicatedBias(const std::vector<double>& bias, const std::vector<std::uint64_t>& shape) {
  const std::uint64_t rows = shape.at(1), cols = shape.at(2);
  std::vector<double> data(shape.at(0) * rows * cols, 0.0);
  for (std::uint64_t j = 0; j < shape[0]; ++j) {
    for (std::uint64_t row = 0; row < rows; ++row) {
      for (std::uint64_t c = 0; c < cols && j * cols + c < bias.size(); ++c) data[(j * rows + row) * cols + c] = bias[j * cols + c];
    }
  }
  return data;
}

std::vector<std::uint8_t> EncodeValue(const Binding& binding, const hlo::Literal& value) {
  if (binding.kind == Binding::Kind::kBias) {
    // A bias as the drains start from it (a state tensor of it, place_state.cpp).
    if (value.shape.Rank() != 1 || binding.shape.size() != 3) {
      throw std::logic_error(fmt::format("a replicated bias binding of a rank-{} value", value.shape.Rank()));
    }
    return ElementBytes(binding.dtype, ReplicatedBias(value.values, binding.shape));
  }
  // Every input of every device step comes through here: only a reversed binding pays for a copy.
  std::vector<double> data =
      binding.reversed.empty()
          ? Permute(value.values, value.shape.dims, binding.permutation)
          : Permute(Reverse(value.values, value.shape.dims, binding.reversed), value.shape.dims, binding.permutation);
  std::vector<std::uint64_t> dims;  // of the transposed value (the device shape unless blocked)
  for (std::int64_t p : binding.permutation) dims.push_back(static_cast<std::uint64_t>(value.shape.dims[static_cast<std::size_t>(p)]));
  return ElementBytes(binding.dtype, BlockColumns(binding, std::move(data), dims));
}

hlo::Literal DecodeValue(const Binding& binding, const std::vector<std::uint8_t>& bytes, const hlo::Shape& shape) {
  const std::size_t width = image::DataTypeBytes(binding.dtype);
  std::vector<double> data(bytes.size() / width);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = ReadValue(binding.dtype, &bytes[i * width]);
  std::vector<std::int64_t> permuted_dims;
  std::vector<std::uint64_t> unsigned_dims;
  for (std::int64_t p : binding.permutation) {
    permuted_dims.push_back(shape.dims[static_cast<std::size_t>(p)]);
    unsigned_dims.push_back(static_cast<std::uint64_t>(permuted_dims.back()));
  }
  data = UnblockColumns(binding, std::move(data), unsigned_dims);
  hlo::Literal value(shape);
  value.values = Reverse(Permute(data, permuted_dims, Inverse(binding.permutation)), shape.dims, binding.reversed);
  hlo::RoundAll(shape.type, value.values);
  return value;
}

std::vector<hlo::Literal> NetworkInputs(const hlo::Module& module, std::uint64_t seed) {
  std::vector<hlo::Literal> inputs = hlo::RandomInputs(module, seed);
  std::unordered_map<const hlo::Instruction*, double> fan_in;
  for (const hlo::Instruction* i : module.entry->PostOrder()) {
    if (i->opcode != hlo::Opcode::kDot && i->opcode != hlo::Opcode::kConvolution) continue;
    const hlo::Instruction* weights = i->operands.at(1);
    double n = 1;
    if (i->opcode == hlo::Opcode::kDot) {
      for (std::int64_t d : i->dot_dims.rhs_contracting) n *= double(weights->shape.dims[static_cast<std::size_t>(d)]);
    } else {
      n = double(weights->shape.Elements()) /
          double(weights->shape.dims[static_cast<std::size_t>(i->conv_dims.kernel_output_feature)]);
    }
    fan_in[weights] = n;
  }
  const std::vector<hlo::Instruction*> parameters = module.entry->Parameters();
  for (std::size_t p = 0; p < inputs.size(); ++p) {
    hlo::Literal& input = inputs[p];
    if (!hlo::IsFloating(input.shape.type)) continue;
    if (const auto it = fan_in.find(parameters[p]); it != fan_in.end()) {
      for (double& v : input.values) v *= std::sqrt(3.0 / it->second);
    } else if (input.shape.Rank() == 1) {
      for (double& v : input.values) v = 1.0 + 0.5 * v;
    }
    hlo::RoundAll(input.shape.type, input.values);
  }
  return inputs;
}

void AddLinkBytes(RunStats& total, const RunStats& more) {
  total.program_bytes += more.program_bytes;
  total.operand_bytes += more.operand_bytes;
  total.result_bytes += more.result_bytes;
}

ResidentPrograms::ResidentPrograms(const CompiledModel& model, Device& device, const ResidentState* state)
    : model_(&model), device_(&device), state_(state) {
  for (const compiler::DeviceStep* step : model.DeviceSteps()) programs_.emplace(step, std::nullopt);
}

systole::Program& ResidentPrograms::Get(const compiler::DeviceStep& step, std::uint64_t& program_bytes) {
  const auto it = programs_.find(&step);
  if (it == programs_.end()) {
    throw std::invalid_argument(fmt::format("{}: device step {} is not one of the model's", model_->source_name,
                                            step.kernel));
  }
  std::optional<systole::Program>& program = it->second;
  if (!program) {
    program = state_ != nullptr ? device_->Load(step.program, state_->Bindings(step)) : device_->Load(step.program);
    program_bytes += LoadBytes(step.program);
  }
  return *program;
}

DeviceStepResult RunLoadedStep(Device& device, systole::Program& program, const compiler::DeviceStep& step,
                               const std::vector<std::vector<std::uint8_t>>& inputs, const std::string& source_name,
                               const std::string& where, const std::atomic<bool>* stop) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].empty()) program.WriteInput(i, inputs[i]);  // empty: a bound state tensor
  }
  device.ClearCounters();
  trace::Timeline* timeline = device.recording();
  if (timeline != nullptr) timeline->NameNextLaunch(fmt::format("{} ({})", step.covers.back(), step.kernel));
  systole::Run run = program.Launch();
  try {
    // An RTL step of a large layer can take minutes; the caller's progress shows it moving.
    while (!run.Wait(std::chrono::seconds(60))) {
      if (stop != nullptr && stop->load()) throw std::runtime_error("stopped: another job failed");
    }
  } catch (const RunError& error) {
    throw std::runtime_error(fmt::format("{}: device step '{}' ({}) stopped with {}{}: {}", source_name,
                                         step.covers.back(), step.kernel, regs::ErrorName(error.code()),
                                         where.empty() ? "" : " on " + where, error.what()));
  }
  // An update step (no output value) leaves its results in its bound state tensors.
  DeviceStepResult result{step.output.value.empty() ? std::vector<std::uint8_t>{} : program.ReadOutput(0),
                          device.ReadCounters()};
  if (timeline != nullptr) timeline->SetLaunchCounters(result.counters.values);
  return result;
}

RunResult Execute(const CompiledModel& model, Device& device, const std::vector<hlo::Literal>& arguments,
                  const std::function<void(const std::string&)>& progress, ResidentPrograms* resident,
                  std::vector<DeviceStepRecord>* record, std::int64_t while_iteration_limit, ResidentState* state) {
  if (resident != nullptr && (&resident->model() != &model || &resident->device() != &device)) {
    throw std::invalid_argument(fmt::format("{}: the resident programs given belong to another model or device "
                                            "handle (they were made for {})", model.source_name,
                                            resident->model().source_name));
  }
  if (state != nullptr && &state->model() != &model) {
    throw std::invalid_argument(fmt::format("{}: the resident state given belongs to another model ({})",
                                            model.source_name, state->model().source_name));
  }
  if (resident != nullptr && !model.state_tensors.empty() && (state == nullptr || resident->state() != state)) {
    // Their update programs are bound to another state's buffers, or to none.
    throw std::invalid_argument(fmt::format("{}: keeps training state in device memory, and the resident programs "
                                            "given were loaded with another resident state (or none): pass the "
                                            "ResidentState they were made with", model.source_name));
  }
  // A model with device state run on its own: its state goes down first and comes back after.
  std::optional<ResidentState> own;
  std::uint64_t state_written = 0;
  if (state == nullptr && !model.state_tensors.empty()) {
    own.emplace(model, device);
    state_written = own->WriteAll(arguments);
    state = &*own;
  }
  Runner runner(model, device, resident, record, progress, while_iteration_limit, state);
  RunResult result = runner.Run(arguments);
  if (own) {
    result.stats.operand_bytes += state_written;
    const hlo::Instruction* root = model.module->entry->root;
    for (std::size_t i = 0; i < root->operands.size() && i < result.result.elements.size(); ++i) {
      if (own->HoldsOutput(root->operands[i]->name)) {
        result.result.elements[i] = own->ReadOutput(root->operands[i]->name, result.stats.result_bytes);
      }
    }
  }
  return result;
}

}  // namespace systole::runtime
