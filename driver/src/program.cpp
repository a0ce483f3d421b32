// Device::Load and Program: put a program's words and data into device memory — at its own
// addresses when they are free, otherwise moved, with its DMA addresses rewritten.
#include <fmt/format.h>

#include <algorithm>

#include "driver/src/device_state.hpp"
#include "systole/launch_footprint.hpp"

namespace systole {

using detail::Guarded;
using detail::ProgramRegion;

namespace {

struct Interval {
  std::uint64_t start;
  std::uint64_t end;
};

// A tensor the caller keeps in its own buffer (Device::Load with bindings): program addresses
// [start, end).
struct BoundTensor {
  std::string name;
  std::uint64_t start;
  std::uint64_t end;
  Buffer buffer;
};

// The bound tensor that holds [address, address + bytes) whole, if any; a range that reaches
// across a bound tensor's edge is an error naming `what`.
const BoundTensor* BoundHolding(const std::vector<BoundTensor>& bound, std::uint64_t address, std::uint64_t bytes,
                                const std::string& what) {
  for (const BoundTensor& tensor : bound) {
    const std::uint64_t end = address + bytes;
    if (bytes == 0 || end <= tensor.start || address >= tensor.end) continue;
    if (address >= tensor.start && end <= tensor.end) return &tensor;
    throw std::runtime_error(fmt::format("{} (0x{:x}..0x{:x}) reaches across the edge of the bound tensor '{}' "
                                         "(0x{:x}..0x{:x}): it would touch memory past the caller's buffer",
                                         what, address, end, tensor.name, tensor.start, tensor.end));
  }
  return nullptr;
}

// Every range the program needs, widened to whole allocation units, clipped to device memory
// (a range outside it is the device's to fault on, not ours to move), merged where they touch.
// The bound tensors are not among them (their buffers hold them); a data segment may not write
// into one (it would overwrite the caller's data).
std::vector<Interval> Footprint(const image::Program& program, const Config& config,
                                const std::vector<BoundTensor>& bound) {
  std::vector<Interval> ranges;
  auto add = [&](std::uint64_t address, std::uint64_t bytes, const std::string& what) {
    if (BoundHolding(bound, address, bytes, what) != nullptr) return;
    if (bytes == 0 || address >= config.memory_bytes) return;
    const std::uint64_t end = std::min(address + std::min(bytes, config.memory_bytes),
                                       config.memory_bytes);
    const std::uint64_t unit = kAllocationAlignment;
    const std::uint64_t start = address / unit * unit;
    ranges.push_back({start, std::min((end + unit - 1) / unit * unit, config.memory_bytes)});
  };
  add(program.text_address, program.TextBytes(), "the program's instructions");
  for (const auto& segment : program.data) {
    const std::string what = fmt::format("data segment '{}'", segment.name);
    if (BoundHolding(bound, segment.address, segment.bytes.size(), what) != nullptr) {
      throw std::runtime_error(fmt::format("{} lies in a bound tensor: loading it would overwrite the caller's "
                                           "buffer", what));
    }
    add(segment.address, segment.bytes.size(), what);
  }
  for (const auto& input : program.inputs) add(input.address, input.Bytes(), fmt::format("input '{}'", input.name));
  for (const auto& output : program.outputs) {
    add(output.address, output.Bytes(), fmt::format("output '{}'", output.name));
  }
  for (const TouchedRange& range : FootprintOf(program.words, config).data) {
    add(range.address, range.bytes, fmt::format("instruction {}", range.instruction));
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& range : ranges) {
    if (!merged.empty() && range.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, range.end);
    } else {
      merged.push_back(range);
    }
  }
  return merged;
}

const ProgramRegion* RegionHolding(const std::vector<ProgramRegion>& regions,
                                   std::uint64_t address, std::uint64_t bytes) {
  for (const ProgramRegion& region : regions) {
    if (address >= region.start && address < region.end && bytes <= region.end - address) {
      return &region;
    }
  }
  return nullptr;
}

std::uint64_t Moved(const ProgramRegion& region, std::uint64_t address) {
  return region.buffer.address() + (address - region.start);
}

// The words with every LOAD, STORE and LOAD_WEIGHTS address moved to where its region lives.
std::vector<isa::Word> Relocated(const image::Program& program,
                                 const std::vector<ProgramRegion>& regions, const Config& config) {
  std::vector<isa::Word> words = program.words;
  for (const TouchedRange& range : FootprintOf(program.words, config).data) {
    const ProgramRegion* region = RegionHolding(regions, range.address, range.bytes);
    if (region == nullptr) {
      throw std::runtime_error(fmt::format(
          "cannot move the program: instruction {} touches 0x{:x}..0x{:x}, outside device memory",
          range.instruction, range.address, range.address + range.bytes));
    }
    isa::Instruction insn = isa::DecodeOrThrow(words[range.instruction]);
    insn[isa::Field::kDram] = Moved(*region, range.address);
    words[range.instruction] = isa::EncodeOrThrow(insn);
  }
  return words;
}

}  // namespace

namespace {

// The bindings checked against the program and this device: each names one input or output,
// once, with a non-empty buffer of `device` (as `device_of` tells a buffer's) that holds it.
template <typename DeviceOf>
std::vector<BoundTensor> Bind(const image::Program& program, std::span<const TensorBinding> bindings,
                              const detail::DeviceState* device, DeviceOf device_of) {
  std::vector<BoundTensor> bound;
  for (const TensorBinding& binding : bindings) {
    const image::TensorDesc* tensor = nullptr;
    for (const auto* list : {&program.inputs, &program.outputs}) {
      for (const image::TensorDesc& t : *list) {
        if (t.name == binding.tensor && tensor == nullptr) tensor = &t;
      }
    }
    const std::string what = fmt::format("binding '{}'", binding.tensor);
    if (tensor == nullptr) {
      throw std::runtime_error(fmt::format("{}: the program has no input or output of that name", what));
    }
    for (const BoundTensor& earlier : bound) {
      if (earlier.name == binding.tensor) throw std::runtime_error(fmt::format("{}: bound twice", what));
    }
    if (!binding.buffer) throw std::runtime_error(fmt::format("{}: an empty Buffer handle", what));
    if (const detail::DeviceState* owner = device_of(binding.buffer); owner != device) {
      throw std::runtime_error(fmt::format("{}: the buffer belongs to another device ({})", what, owner->uri));
    }
    if (binding.buffer.size() < tensor->Bytes()) {
      throw std::runtime_error(fmt::format("{}: the tensor takes {} bytes, the buffer has {}", what, tensor->Bytes(),
                                           binding.buffer.size()));
    }
    bound.push_back({binding.tensor, tensor->address, tensor->address + tensor->Bytes(), binding.buffer});
  }
  return bound;
}

}  // namespace

Program Device::Load(const image::Program& program) { return Load(program, {}); }

Program Device::Load(const image::Program& program, std::span<const TensorBinding> bindings) {
  return Guarded(*state_, "load program", [&] {
    if (const auto problems = image::ValidateProgram(program); !problems.empty()) {
      throw std::runtime_error(problems.front().message);
    }
    auto loaded = std::make_shared<detail::ProgramState>();
    loaded->device = state_;
    loaded->source = program;
    const std::vector<BoundTensor> bound = Bind(program, bindings, state_.get(), [](const Buffer& buffer) {
      return buffer.state_->device.get();
    });
    const std::vector<Interval> footprint = Footprint(program, state_->config, bound);
    // The bound tensors' regions come first, so that an address of theirs finds their buffer
    // even where a neighbour's region, widened to whole allocation units, covers it too.
    for (const BoundTensor& tensor : bound) loaded->regions.push_back({tensor.start, tensor.end, tensor.buffer});
    const std::size_t bound_regions = loaded->regions.size();

    // First choice: every region where the program put it (identical to a private device).
    bool in_place = true;
    for (const Interval& range : footprint) {
      try {
        loaded->regions.push_back({range.start, range.end, AllocateAt(range.start, range.end - range.start)});
      } catch (const DeviceError&) {
        in_place = false;
        break;
      }
    }
    if (!in_place) {
      loaded->regions.resize(bound_regions);  // frees what was taken
      for (const Interval& range : footprint) {
        loaded->regions.push_back({range.start, range.end, Allocate(range.end - range.start)});
      }
    }

    Program handle(loaded);
    for (const image::DataSegment& segment : program.data) {
      const std::uint64_t address = handle.DeviceAddress(segment.address);
      state_->link->WriteMemory(address, segment.bytes);
    }
    const std::vector<isa::Word> words =
        in_place && bound.empty() ? program.words : Relocated(program, loaded->regions, state_->config);
    std::vector<std::uint8_t> text;
    text.reserve(words.size() * isa::kInstructionBytes);
    for (const isa::Word& word : words) text.insert(text.end(), word.begin(), word.end());
    state_->link->WriteMemory(handle.text_address(), text);
    return handle;
  });
}

// ---- Program -----------------------------------------------------------------------------------

const image::Program& Program::source() const { return state_->source; }

std::uint64_t Program::DeviceAddress(std::uint64_t address) const {
  if (const ProgramRegion* region = RegionHolding(state_->regions, address, 1)) {
    return Moved(*region, address);
  }
  throw DeviceError(state_->device->uri, "program address",
                    fmt::format("the program does not use address 0x{:x}", address));
}

std::uint64_t Program::text_address() const {
  if (state_->source.words.empty()) return state_->source.text_address;
  return DeviceAddress(state_->source.text_address);
}

namespace {
std::size_t IndexOf(const std::vector<image::TensorDesc>& tensors, std::string_view name,
                    const std::string& device, std::string_view what) {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) return i;
  }
  throw DeviceError(device, fmt::format("find {}", what),
                    fmt::format("the program has no {} called '{}'", what, name));
}
}  // namespace

void Program::WriteInput(std::size_t index, std::span<const std::uint8_t> bytes) {
  const std::string& uri = state_->device->uri;
  if (index >= state_->source.inputs.size()) {
    throw DeviceError(uri, "write input", fmt::format("the program has no input {}", index));
  }
  const image::TensorDesc& input = state_->source.inputs[index];
  if (bytes.size() != input.Bytes()) {
    throw DeviceError(uri, "write input", fmt::format("input '{}' takes {} bytes, not {}",
                                                      input.name, input.Bytes(), bytes.size()));
  }
  const std::uint64_t address = DeviceAddress(input.address);
  Guarded(*state_->device, "write input",
          [&] { state_->device->link->WriteMemory(address, bytes); });
}

void Program::WriteInput(std::string_view name, std::span<const std::uint8_t> bytes) {
  WriteInput(IndexOf(state_->source.inputs, name, state_->device->uri, "input"), bytes);
}

std::vector<std::uint8_t> Program::ReadOutput(std::size_t index) const {
  const std::string& uri = state_->device->uri;
  if (index >= state_->source.outputs.size()) {
    throw DeviceError(uri, "read output", fmt::format("the program has no output {}", index));
  }
  const image::TensorDesc& output = state_->source.outputs[index];
  std::vector<std::uint8_t> bytes(output.Bytes());
  const std::uint64_t address = DeviceAddress(output.address);
  Guarded(*state_->device, "read output",
          [&] { state_->device->link->ReadMemory(address, bytes); });
  return bytes;
}

std::vector<std::uint8_t> Program::ReadOutput(std::string_view name) const {
  return ReadOutput(IndexOf(state_->source.outputs, name, state_->device->uri, "output"));
}

Run Program::Launch() {
  Device device(state_->device);
  return device.Launch(text_address(), static_cast<std::uint32_t>(state_->source.words.size()),
                       state_->source.words);
}

}  // namespace systole
