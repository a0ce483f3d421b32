// RtlDevice: the Verilated Systole core as a device — the same host-side surface as the golden
// model (32-bit registers, device-memory block access, run, interrupt line), so the driver's
// `rtl` link and the whole-core tests treat both alike.
//
// The RTL is simulated cycle by cycle behind one of two device-memory backends
// (rtl/memory_backends.hpp):
//  * kHbm (default; the `rtl` device of driver, CLI and PCIe simulation): systole_soc — the core
//    with the HBM controller — and one checking DRAM model per channel, timed by the
//    configuration's [dram] section. Cycle counts include DRAM behaviour; a DRAM timing
//    violation throws.
//  * kIdeal: systole_core with a C++ memory answering after `memory_latency` cycles (randomly
//    refusing requests when `memory_ready_percent` < 100): the core's own tests and benchmark.
// Host memory accesses go through the core's host port and arbiter as a real host's would, so
// they take cycles and count in PERF_BYTES_HOST. Each model is Verilated per configuration
// (SYSTOLE_RTL_CONFIGS for kHbm, SYSTOLE_RTL_IDEAL_CONFIGS for kIdeal, in
// sim/rtl/CMakeLists.txt; parameters baked in at Verilation); MakeRtlDevice() refuses other
// configurations with the list of built ones.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "arch/config/config.hpp"
#include "sim/rtl/host_pins.hpp"
#include "sim/trace/timeline.hpp"

namespace systole::rtl {

enum class MemoryBackend { kHbm, kIdeal };

struct RtlDeviceOptions {
  MemoryBackend memory = MemoryBackend::kHbm;
  unsigned memory_latency = 8;        // kIdeal: cycles from a device-memory request to its response
  unsigned memory_ready_percent = 100;  // kIdeal: < 100 refuses requests at random
  std::uint64_t seed = 1;             // X initialisation and (kIdeal) memory back-pressure
  std::filesystem::path trace_path;   // FST waveform of the whole run, if set
};

class RtlDevice {
 public:
  virtual ~RtlDevice() = default;
  RtlDevice() = default;
  RtlDevice(const RtlDevice&) = delete;
  RtlDevice& operator=(const RtlDevice&) = delete;

  virtual const Config& config() const = 0;
  // Register access through the core's register bus (takes a couple of cycles each).
  virtual std::uint32_t ReadRegister(std::uint32_t offset) = 0;
  virtual void WriteRegister(std::uint32_t offset, std::uint32_t value) = 0;
  // Device memory through the host port. Throws std::out_of_range naming the range when any
  // byte lies outside device memory (nothing is transferred then).
  virtual void WriteMemory(std::uint64_t address, std::span<const std::uint8_t> bytes) = 0;
  virtual void ReadMemory(std::uint64_t address, std::span<std::uint8_t> bytes) = 0;
  // Clocks the core until no launch is running or queued. Returns false if that takes more
  // than `max_cycles`.
  virtual bool RunUntilIdle(std::uint64_t max_cycles) = 0;
  // Clocks `cycles` cycles.
  virtual void Run(std::uint64_t cycles) = 0;
  virtual bool InterruptLine() = 0;
  virtual std::uint64_t Cycle() const = 0;
  // One rising edge with `pins` on the register bus and host port (host_pins.hpp), device
  // memory serviced as in every other cycle; returns the outputs the edge sampled and the
  // interrupt line after it. The pins fall back to idle after the edge, so the methods above
  // drive the bus as before. For a master clocked from outside (sim/systemc/clocked_soc.hpp).
  virtual HostPinsOut ClockEdge(const HostPinsIn& pins) = 0;
  // Samples the core's trace ports every cycle into `timeline` (nullptr: stop). Costs an extra
  // evaluation per cycle while recording; the simulated behaviour is unchanged.
  virtual void Record(trace::Timeline* timeline) = 0;
  // Writes every signal of the model, every cycle from now on, to the FST waveform `path`
  // (GTKWave, Surfer); an empty path closes it. Slows the simulation several times.
  virtual void RecordWaveform(const std::filesystem::path& path) = 0;
};

// The configurations this build has a Verilated model for with `memory` ("small",
// "small-int8", "tiny" by default for both).
std::vector<std::string> BuiltRtlConfigs(MemoryBackend memory = MemoryBackend::kHbm);
const char* MemoryBackendName(MemoryBackend memory);  // "hbm", "ideal"
// Throws std::invalid_argument naming the configuration, the backend and the built ones when
// `config` is not one of them (by name and contents: an edited configuration needs a new Verilation).
std::unique_ptr<RtlDevice> MakeRtlDevice(const Config& config, const RtlDeviceOptions& options = {});
// Destroys `device` whatever models were built or destroyed before it: Verilator 5.006 tears a
// model down through the thread's current context, which may belong to a model already gone
// (verilator_context.hpp). For code that cannot include verilated.h (a SystemC translation unit:
// verilated.h switches to SystemC time when SystemC's headers come first).
void DestroyRtlDevice(std::unique_ptr<RtlDevice> device);

}  // namespace systole::rtl
