// The Systole driver API: open a device by URI, allocate device memory, load a program, run it,
// read the performance counters. Every backend (ref, tcp://, and the boards to come) is reached
// through the same Link (link.hpp), so this code is written once.
//
//   systole::Device device = systole::Device::Open("tcp://127.0.0.1:7000", config);
//   systole::Program program = device.Load(systole::assembly::AssembleFile("mlp_int8.s"));
//   program.WriteInput(0, input_bytes);
//   systole::Run run = program.Launch();
//   run.Wait(std::chrono::seconds(10));          // throws RunError if the device faulted
//   std::vector<std::uint8_t> y = program.ReadOutput(0);
//
// Device, Buffer, Program and Run are value-type handles in the manner of XRT: copies share one
// underlying object, and the last copy to go releases it (a Buffer frees its device memory, a
// Program its buffers). A Device and everything made from it are used from one thread at a
// time; open one Device per thread to work in parallel (a server shares the hardware fairly).
// Every failure throws DeviceError, whose message names the device, the operation and the cause.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arch/config/config.hpp"
#include "arch/image/program.hpp"
#include "arch/regs/regmap.hpp"
#include "systole/link.hpp"

namespace systole {

// "device tcp://host:7000: read buffer: connection closed by the server"
class DeviceError : public std::runtime_error {
 public:
  DeviceError(std::string device, std::string operation, std::string cause);
  const std::string& device() const { return device_; }
  const std::string& operation() const { return operation_; }
  const std::string& cause() const { return cause_; }

 private:
  std::string device_, operation_, cause_;
};

// A launch stopped on a device error (ERROR_CODE), at the instruction at fault_pc().
class RunError : public DeviceError {
 public:
  RunError(std::string device, regs::ErrorCode code, std::uint64_t fault_pc);
  regs::ErrorCode code() const { return code_; }
  std::uint64_t fault_pc() const { return fault_pc_; }

 private:
  regs::ErrorCode code_;
  std::uint64_t fault_pc_;
};

// The 64-bit performance counters, in register order, named as regs::Counters() names them.
struct Counters {
  std::vector<std::pair<std::string, std::uint64_t>> values;
  // The counter called `name` ("MACS"); throws std::out_of_range for an unknown name.
  std::uint64_t operator[](std::string_view name) const;
  bool operator==(const Counters&) const = default;
};

// The counters that do not depend on timing: what ran and what moved. Every device computes
// them alike; CYCLES and the stall counters are each device's own timing (ref's an estimate;
// behind DRAM, history-dependent).
inline constexpr std::string_view kFunctionalCounters[] = {
    "INSNS", "MACS", "MXU_BUSY", "BYTES_DRAM_TO_UB", "BYTES_DRAM_TO_ACC", "BYTES_WEIGHTS",
    "BYTES_UB_TO_DRAM", "BYTES_ACC_TO_DRAM", "BYTES_HOST"};

namespace detail {
struct DeviceState;
struct BufferState;
struct ProgramState;
struct RunState;
}  // namespace detail

// An allocation in device memory. Empty when default-constructed.
class Buffer {
 public:
  Buffer() = default;
  std::uint64_t address() const;
  std::uint64_t size() const;  // as requested (the allocation may be rounded up)
  explicit operator bool() const { return state_ != nullptr; }

  // Copy bytes in or out at `offset` within the buffer; throws DeviceError past its end.
  void Write(std::span<const std::uint8_t> bytes, std::uint64_t offset = 0);
  void Read(std::span<std::uint8_t> out, std::uint64_t offset = 0) const;
  std::vector<std::uint8_t> Read() const;  // the whole buffer

 private:
  friend class Device;
  explicit Buffer(std::shared_ptr<detail::BufferState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::BufferState> state_;
};

// A launch in flight (or finished). Empty when default-constructed.
class Run {
 public:
  Run() = default;
  // Waits at most `timeout` for the launch to finish. True when it finished; false on timeout
  // (the run goes on; wait again). Throws RunError if it stopped on a device error — the error
  // is cleared on the device first, so the next launch can start.
  bool Wait(std::chrono::milliseconds timeout);
  // True when finished; never blocks for long (an in-process model runs the launch here).
  bool Done() { return Wait(std::chrono::milliseconds(0)); }

 private:
  friend class Device;
  explicit Run(std::shared_ptr<detail::RunState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::RunState> state_;
};

// A program in device memory: its instructions and data segments written into buffers that it
// owns, with room for its inputs and outputs. Load puts everything at the addresses the
// program names; where another client of a shared device holds those addresses, it moves the
// program, rewriting the addresses in its instructions (exact: the ISA has no indirect
// addressing), so the same program runs side by side with itself.
class Program {
 public:
  Program() = default;
  const image::Program& source() const;
  // Where the first instruction is (CMD_PC of a launch).
  std::uint64_t text_address() const;
  // The device address that holds the program's address `address`. Throws DeviceError for an
  // address the program does not use.
  std::uint64_t DeviceAddress(std::uint64_t address) const;

  // Inputs and outputs by index or name; sizes must match the descriptor exactly.
  void WriteInput(std::size_t index, std::span<const std::uint8_t> bytes);
  void WriteInput(std::string_view name, std::span<const std::uint8_t> bytes);
  std::vector<std::uint8_t> ReadOutput(std::size_t index) const;
  std::vector<std::uint8_t> ReadOutput(std::string_view name) const;

  Run Launch();

 private:
  friend class Device;
  explicit Program(std::shared_ptr<detail::ProgramState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::ProgramState> state_;
};

// A program's input or output, by name, kept in a buffer its caller owns instead of the
// program's own memory (Device::Load): state that outlives the program — a model's parameters
// between training steps, or one program's output read as another's input — stays in device
// memory, and several programs (or an input and an output of one, as an HLO
// input_output_alias does) may share a buffer.
struct TensorBinding {
  std::string tensor;  // the name of an input or output of the program
  Buffer buffer;       // of the same device, at least the tensor's size (its first bytes are used)
};

class Device {
 public:
  // Opens a device by URI (see OpenLink). `config` builds in-process models; every device is
  // then asked for its configuration through the identity registers.
  static Device Open(std::string_view uri, const Config& config);
  explicit Device(std::unique_ptr<Link> link);

  const std::string& uri() const;
  // The configuration the device reports (regs::DecodeIdentity).
  const Config& config() const;

  Buffer Allocate(std::uint64_t bytes, std::uint64_t alignment = kAllocationAlignment);
  Buffer AllocateAt(std::uint64_t address, std::uint64_t bytes);
  Program Load(const image::Program& program);
  // The same, with the tensors named in `bindings` placed in the callers' buffers: the
  // instructions that touch them are rewritten to the buffers' addresses, the program's own
  // memory holds the rest, and WriteInput / ReadOutput of a bound tensor reach its buffer.
  // Refused, naming the tensor: an unknown or twice-bound name, an empty buffer, another
  // device's, one too small, and a data segment or an instruction that reaches across the
  // tensor's edge (the program would read or write past the buffer).
  Program Load(const image::Program& program, std::span<const TensorBinding> bindings);

  // Launches `count` instructions at `pc` (what Program::Launch does). One run at a time: a
  // launch while another run has not been waited for throws DeviceError, and so does one after
  // a run whose wait failed or gave up while the device still runs it (it would run first, on
  // whatever was written since).
  Run Launch(std::uint64_t pc, std::uint32_t count);
  // The same, telling a recording timeline (Record) which instructions lie at `pc`, so that its
  // spans carry their names and sizes.
  Run Launch(std::uint64_t pc, std::uint32_t count, std::span<const isa::Word> instructions);

  Counters ReadCounters();
  void ClearCounters();

  // Records a timeline of the following launches (Link::Record; throws DeviceError on a device
  // that cannot). Each launch announces its instructions to the timeline, so its spans carry
  // names and sizes. nullptr stops recording; the timeline must outlive the recording.
  void Record(trace::Timeline* timeline);
  trace::Timeline* recording() const;
  // The waveform of every signal from now on, as FST (Link::RecordWaveform: rtl only; throws
  // DeviceError elsewhere). An empty path closes it.
  void RecordWaveform(const std::filesystem::path& path);

  // The link underneath, for tools that speak registers directly.
  Link& link();

 private:
  friend class Program;
  explicit Device(std::shared_ptr<detail::DeviceState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::DeviceState> state_;
};

}  // namespace systole
