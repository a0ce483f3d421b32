// Running a model's device steps side by side on several simulated devices.
//
// A model's device steps talk to each other only through the host: each step loads its own
// program, is given its inputs and hands back one output (execute.hpp). So once the golden model
// has run the model and kept what every step was given and gave back, the steps are independent
// and can run again on slow devices (the Verilated `rtl` core) at the same time, each from the
// golden model's inputs. Every step's output and functional counters are checked against the
// golden model's, bit for bit: with every step identical, running them one after the other on
// that device would have given the same values, step by step, so the result is the device's.
//
//        golden model (ref): the whole model, keeping each step's input bytes, output bytes
//             │               and counters (DeviceStepRecord)
//             ▼
//   longest steps first ──► job 1: step (Device::Open(uri)), step, … ──┐ each output == ref's?
//                      └──► job 2: step (Device::Open(uri)), step, … ──┤ each counter == ref's?
//                      └──► …                                           ┘
//   cycles, MXU busy, MACs: the device's, summed over the steps; timeline: the steps in step order
//
// Cycle counts are the device's own, each step on a device opened for it: the same in every run
// and for any number of jobs, and different from a one-after-the-other run on one device (whose
// DRAM has earlier steps' rows open, another refresh phase, programs placed elsewhere) by a
// small fraction of each step's cycles (docs/COMPILER.md gives the measured difference).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "arch/config/config.hpp"
#include "runtime/execute.hpp"
#include "sim/trace/timeline.hpp"

namespace systole::runtime {

struct ParallelOptions {
  std::string uri = "rtl";  // the device each job opens (Device::Open with the model's configuration)
  unsigned jobs = 2;        // devices running at once (threads, each with its own device)
  // Records every step of the device, laid end to end in step order (as a one-device run
  // lays its launches); must be made for the model's configuration.
  trace::Timeline* timeline = nullptr;
  // Hears about the golden model's steps, then about each step the devices finish (from the
  // calling thread only).
  std::function<void(const std::string&)> progress;
};

// Runs `model` on the golden model, then every device step again on `options.jobs` devices
// opened from `options.uri`, side by side, and returns the result with the devices' statistics
// (cycles, MXU busy and MACs summed over the steps; link bytes and seconds of the devices' runs).
// Throws std::runtime_error naming the step (and the first differing byte or counter) when a
// device gives another output or functional counter than the golden model, or stops with an
// error.
RunResult ExecuteParallel(const CompiledModel& model, const Config& config,
                          const std::vector<hlo::Literal>& arguments, const ParallelOptions& options);

// The second half of ExecuteParallel: every device step of `model` again, from `reference`
// (what the golden model's run recorded, one record per device step in step order), on
// `options.jobs` devices side by side; each step's output and functional counters checked
// against its record. Returns each step's counters on the device, in step order. Throws as
// ExecuteParallel does.
std::vector<Counters> ReplayDeviceSteps(const CompiledModel& model, const Config& config,
                                        const std::vector<DeviceStepRecord>& reference,
                                        const ParallelOptions& options);

}  // namespace systole::runtime
