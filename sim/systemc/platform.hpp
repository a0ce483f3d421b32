// The process's SystemC platform: a host, an interconnect and kSlots Systole device slots in one
// simulation, driven from any thread. The driver's `systemc` link opens devices on it; tests
// run code inside it.
//
//   Host ──► Interconnect ─┬─ link 0 ─► slot 0: SystoleDevice (registers, memory) ─► irq
//   (initiator)            ├─ link 1 ─► slot 1 …
//                          └─ …         slot kSlots-1
//
// Slot k's registers are at k·kSlotStride and its memory at k·kSlotStride + kMemoryOffset in the
// host's address space; each slot has a link of its own (LinkModel's defaults: a PCIe-like lane).
//
// Why the kernel runs on a thread of its own. SystemC allows one simulation per process: modules
// can only be built before the first sc_start, and sc_start cannot run again after sc_stop.
// Its processes are coroutines of the thread that calls sc_start, so every SystemC call must come
// from that one thread, while the driver is used from any thread (the test's, a device server's
// sessions). So the platform elaborates itself once, on a kernel thread that lives as long as the
// process and never calls sc_stop, with empty slots that devices are inserted into and removed
// from (SystoleDevice::Insert). Driver threads hand it jobs (Run) and block until they finish; the
// kernel thread gives each job to the host's SC_THREAD, calls sc_start(), and the host calls
// sc_pause() when the job is done. Simulated time therefore moves only while a job runs — while
// the host accesses a device or waits for one — never with the wall clock between two driver
// calls, so a single-threaded driver sees the same simulated times on every run.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "sim/systemc/interconnect.hpp"
#include "sim/systemc/systole_device.hpp"

namespace systole::systemc {

// The initiator the platform's jobs use, inside the simulation (its methods call wait()).
class Host : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Host> socket;

  SC_HAS_PROCESS(Host);
  explicit Host(const sc_core::sc_module_name& name);

  // One b_transport at `address` (then waits out its annotated delay). `byte_enables` may be
  // empty. Returns the response status.
  tlm::tlm_response_status Transport(tlm::tlm_command command, std::uint64_t address,
                                     std::span<std::uint8_t> data,
                                     std::span<std::uint8_t> byte_enables = {});
  unsigned Debug(tlm::tlm_command command, std::uint64_t address, std::span<std::uint8_t> data);
  // get_direct_mem_ptr at `address`; `dmi` receives the answer.
  bool Dmi(std::uint64_t address, tlm::tlm_dmi& dmi);
  // DMI invalidations received so far, as [start, end] in the host's addresses.
  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& invalidations() const {
    return invalidations_;
  }

 private:
  friend class Platform;
  void Serve();
  void Invalidate(sc_dt::uint64 start, sc_dt::uint64 end);

  sc_core::sc_event job_posted_;
  std::function<void()> job_;
  bool job_done_ = true;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> invalidations_;
};

class Platform {
 public:
  static constexpr unsigned kSlots = 8;
  static constexpr std::uint64_t kSlotStride = std::uint64_t{1} << 52;
  static constexpr std::uint64_t kMemoryOffset = std::uint64_t{1} << 50;  // > any device memory
  // How far simulated time runs between two looks at the wall clock while a job waits.
  static inline const sc_core::sc_time kWallClockCheck{10, sc_core::SC_US};

  // The platform, elaborated on its kernel thread at the first call.
  static Platform& Get();

  // Runs `job` inside the simulation, on the host's SC_THREAD, and returns when it has; an
  // exception the job throws is rethrown here. Jobs from several threads run one at a time.
  void Run(std::function<void(Host&)> job);

  // Inserts a device model into a free slot (inside a job) and returns the slot. Throws
  // std::runtime_error when all kSlots are in use.
  unsigned Insert(std::unique_ptr<DeviceModel> model);
  // Removes slot's model (inside a job); the slot is free again.
  void Remove(unsigned slot);

  // For use inside a job.
  SystoleDevice& device(unsigned slot) { return *slots_.at(slot).device; }
  // The link between the host and `slot` (slot k uses link k).
  const LinkModel& link(unsigned slot) const { return interconnect_->link(slot); }
  void SetLink(unsigned slot, const LinkModel& link) { interconnect_->SetLink(slot, link); }
  // The slots that hold a device.
  std::vector<unsigned> UsedSlots() const;
  static std::uint64_t RegisterBase(unsigned slot) { return slot * kSlotStride; }
  static std::uint64_t MemoryBase(unsigned slot) { return slot * kSlotStride + kMemoryOffset; }
  // Waits, inside a job, until slot's device is idle or raises its interrupt line (true), or
  // the wall clock reaches `deadline` (false).
  bool WaitForDevice(unsigned slot, std::chrono::steady_clock::time_point deadline);

  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

 private:
  struct Slot {
    std::unique_ptr<SystoleDevice> device;
    std::unique_ptr<sc_core::sc_signal<bool>> irq;
    bool used = false;
  };
  class Kernel;

  Platform();
  void Elaborate();

  std::unique_ptr<Kernel> kernel_;
  std::unique_ptr<Host> host_;
  std::unique_ptr<Interconnect> interconnect_;
  std::vector<Slot> slots_;
};

}  // namespace systole::systemc
