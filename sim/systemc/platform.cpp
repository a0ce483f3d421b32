// The process's platform and the kernel thread that runs it (platform.hpp explains why).
#include "sim/systemc/platform.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace systole::systemc {

// ---- Host -------------------------------------------------------------------------------------

Host::Host(const sc_core::sc_module_name& name) : sc_core::sc_module(name), socket("socket") {
  socket.register_invalidate_direct_mem_ptr(this, &Host::Invalidate);
  SC_THREAD(Serve);
  set_stack_size(std::size_t{1} << 20);  // jobs run the driver's side of a link here
}

void Host::Serve() {
  for (;;) {
    wait(job_posted_);
    job_();  // Platform::Run's wrapper catches what the job throws
    job_done_ = true;
    sc_core::sc_pause();
  }
}

void Host::Invalidate(sc_dt::uint64 start, sc_dt::uint64 end) { invalidations_.emplace_back(start, end); }

tlm::tlm_response_status Host::Transport(tlm::tlm_command command, std::uint64_t address,
                                         std::span<std::uint8_t> data,
                                         std::span<std::uint8_t> byte_enables) {
  tlm::tlm_generic_payload trans;
  trans.set_command(command);
  trans.set_address(address);
  trans.set_data_ptr(data.data());
  trans.set_data_length(static_cast<unsigned>(data.size()));
  trans.set_streaming_width(static_cast<unsigned>(data.size()));
  if (!byte_enables.empty()) {
    trans.set_byte_enable_ptr(byte_enables.data());
    trans.set_byte_enable_length(static_cast<unsigned>(byte_enables.size()));
  }
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(trans, delay);
  wait(delay);
  return trans.get_response_status();
}

unsigned Host::Debug(tlm::tlm_command command, std::uint64_t address, std::span<std::uint8_t> data) {
  tlm::tlm_generic_payload trans;
  trans.set_command(command);
  trans.set_address(address);
  trans.set_data_ptr(data.data());
  trans.set_data_length(static_cast<unsigned>(data.size()));
  return socket->transport_dbg(trans);
}

bool Host::Dmi(std::uint64_t address, tlm::tlm_dmi& dmi) {
  tlm::tlm_generic_payload trans;
  trans.set_command(tlm::TLM_READ_COMMAND);
  trans.set_address(address);
  dmi.init();
  return socket->get_direct_mem_ptr(trans, dmi);
}

// ---- The kernel thread --------------------------------------------------------------------------

class Platform::Kernel {
 public:
  // Starts the thread, which elaborates `platform` and then serves tasks; returns when the
  // platform is elaborated (rethrowing what went wrong if it could not be).
  explicit Kernel(Platform& platform) {
    std::promise<void> elaborated;
    std::future<void> done = elaborated.get_future();
    // Detached: the thread serves the process until it exits (SystemC cannot be restarted, so
    // there is nothing to shut down); it only ever waits on this object's condition variable,
    // which, like the platform, is never destroyed.
    std::thread([this, &platform, &elaborated] { Serve(platform, elaborated); }).detach();
    done.get();
  }

  // Runs `task` on the kernel thread and waits for it.
  void Call(const std::function<void()>& task) {
    std::packaged_task<void()> packaged(task);
    std::future<void> done = packaged.get_future();
    {
      const std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(packaged));
    }
    wake_.notify_one();
    done.get();
  }

 private:
  void Serve(Platform& platform, std::promise<void>& elaborated) {
    try {
      platform.Elaborate();
      elaborated.set_value();
    } catch (...) {
      elaborated.set_exception(std::current_exception());
      return;
    }
    for (;;) {
      std::packaged_task<void()> task;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::packaged_task<void()>> tasks_;
};

// ---- Platform -----------------------------------------------------------------------------------

Platform& Platform::Get() {
  // Never destroyed: the kernel thread and SystemC's own state last as long as the process.
  static Platform* const platform = new Platform();
  return *platform;
}

Platform::Platform() { kernel_ = std::make_unique<Kernel>(*this); }

void Platform::Elaborate() {
  // SystemC prints a banner when the first module is built: not on `systole run --json`'s stdout.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  // A quantum of 1 µs: ~1000 device cycles between synchronisations.
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  host_ = std::make_unique<Host>("host");
  interconnect_ = std::make_unique<Interconnect>("interconnect");
  host_->socket.bind(interconnect_->upstream);
  for (unsigned i = 0; i < kSlots; ++i) {
    Slot slot;
    slot.device = std::make_unique<SystoleDevice>(fmt::format("systole{}", i).c_str());
    slot.irq = std::make_unique<sc_core::sc_signal<bool>>(fmt::format("irq{}", i).c_str());
    slot.device->irq_o.bind(*slot.irq);
    const unsigned link = interconnect_->AddLink(LinkModel{});
    interconnect_->downstream.bind(slot.device->registers);
    interconnect_->Map(RegisterBase(i), SystoleDevice::kRegisterWindowBytes, 2 * i, link);
    interconnect_->downstream.bind(slot.device->memory);
    interconnect_->Map(MemoryBase(i), kMemoryOffset, 2 * i + 1, link);
    slots_.push_back(std::move(slot));
  }
  // Elaboration ends with the first call; the host then waits for its first job.
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

void Platform::Run(std::function<void(Host&)> job) {
  std::exception_ptr error;
  kernel_->Call([&] {
    host_->job_ = [&] {
      try {
        job(*host_);
      } catch (...) {
        error = std::current_exception();
      }
    };
    host_->job_done_ = false;
    host_->job_posted_.notify(sc_core::SC_ZERO_TIME);
    sc_core::sc_start();
    if (!host_->job_done_) {
      // Every wait of a job is bounded, so this means the kernel ran out of events: a bug.
      error = std::make_exception_ptr(
          std::runtime_error("SystemC platform: the simulation stopped before the job finished"));
    }
  });
  if (error) std::rethrow_exception(error);
}

unsigned Platform::Insert(std::unique_ptr<DeviceModel> model) {
  for (unsigned i = 0; i < kSlots; ++i) {
    if (slots_[i].used) continue;
    if (model->config().memory_bytes > kMemoryOffset) {
      throw std::runtime_error(fmt::format("SystemC platform: {} bytes of device memory do not fit "
                                           "a slot's {}-byte window",
                                           model->config().memory_bytes, kMemoryOffset));
    }
    slots_[i].used = true;
    slots_[i].device->Insert(std::move(model));
    return i;
  }
  throw std::runtime_error(fmt::format(
      "SystemC platform: all {} device slots are in use (close a systemc device first)", kSlots));
}

void Platform::Remove(unsigned slot) {
  slots_.at(slot).device->Remove();
  slots_.at(slot).used = false;
}

std::vector<unsigned> Platform::UsedSlots() const {
  std::vector<unsigned> used;
  for (unsigned i = 0; i < kSlots; ++i) {
    if (slots_[i].used) used.push_back(i);
  }
  return used;
}

bool Platform::WaitForDevice(unsigned slot, std::chrono::steady_clock::time_point deadline) {
  SystoleDevice& device = *slots_.at(slot).device;
  // A line already high when the wait begins (a finished launch whose DONE the host has not
  // cleared while the next one runs) does not end it: only a rising edge or idleness does.
  bool was_high = device.irq_o.read();
  for (;;) {
    if (device.Idle()) return true;
    const bool high = device.irq_o.read();
    if (high && !was_high) return true;
    was_high = high;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    sc_core::wait(kWallClockCheck, device.changed_event());
  }
}

}  // namespace systole::systemc
