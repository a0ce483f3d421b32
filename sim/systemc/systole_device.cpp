// The device's sockets and the thread that runs its model (systole_device.hpp has the rules).
#include "sim/systemc/systole_device.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <vector>

namespace systole::systemc {

namespace {

using sc_core::sc_time;
using tlm::tlm_generic_payload;

sc_time PeriodOf(const DeviceModel* model) {
  return model == nullptr ? sc_time(1, sc_core::SC_NS) : ClockPeriodOf(model->config());
}

}  // namespace

SystoleDevice::SystoleDevice(const sc_core::sc_module_name& name, std::unique_ptr<DeviceModel> model)
    : sc_core::sc_module(name),
      registers("registers"),
      memory("memory"),
      irq_o("irq_o"),
      model_(std::move(model)),
      period_(PeriodOf(model_.get())) {
  registers.register_b_transport(this, &SystoleDevice::RegistersTransport);
  registers.register_transport_dbg(this, &SystoleDevice::RegistersDebug);
  memory.register_b_transport(this, &SystoleDevice::MemoryTransport);
  memory.register_transport_dbg(this, &SystoleDevice::MemoryDebug);
  memory.register_get_direct_mem_ptr(this, &SystoleDevice::MemoryDmi);
  SC_THREAD(Run);
  // The golden model runs on this thread's stack (SystemC's default is 64 KiB).
  set_stack_size(std::size_t{1} << 20);
}

SystoleDevice::~SystoleDevice() = default;

void SystoleDevice::Insert(std::unique_ptr<DeviceModel> model) {
  InvalidateDmi();
  model_ = std::move(model);
  period_ = PeriodOf(model_.get());
  failed_ = false;
  failure_.clear();
  idle_ = model_ == nullptr || model_->Idle();
  if (sc_core::sc_is_running()) kick_.notify(sc_core::SC_ZERO_TIME);
}

std::unique_ptr<DeviceModel> SystoleDevice::Remove() {
  InvalidateDmi();
  std::unique_ptr<DeviceModel> model = std::move(model_);
  idle_ = true;
  if (sc_core::sc_is_running()) {
    kick_.notify(sc_core::SC_ZERO_TIME);  // Run drops the interrupt line
    changed_.notify(sc_core::SC_ZERO_TIME);
  }
  return model;
}

void SystoleDevice::InvalidateDmi() {
  if (!dmi_granted_) return;
  dmi_granted_ = false;
  memory->invalidate_direct_mem_ptr(0, std::numeric_limits<sc_dt::uint64>::max());
}

std::uint64_t SystoleDevice::AccessCycles(std::uint64_t fixed) {
  const std::uint64_t bus = model_->TakeBusCycles();
  return bus != 0 ? bus : fixed;
}

template <class F>
bool SystoleDevice::Guarded(F&& call) {
  try {
    call();
    return true;
  } catch (const std::exception& error) {
    // A model throws only when it is broken (an RTL bug the simulation caught, say): keep the
    // first message, and never let an exception out of a SystemC process or a socket call.
    if (failure_.empty()) failure_ = error.what();
    return false;
  }
}

void SystoleDevice::Fail() {
  failed_ = true;
  if (failure_.empty()) failure_ = "the device model failed";
  changed_.notify(sc_core::SC_ZERO_TIME);
}

// Only Run calls this: irq_o has one driver, as sc_signal's default policy requires.
void SystoleDevice::UpdateInterrupt() {
  const bool line = model_ != nullptr && model_->InterruptLine();
  if (irq_o.read() != line) {
    irq_o.write(line);
    changed_.notify(sc_core::SC_ZERO_TIME);
  }
}

// Steps the model while it has work, one quantum of simulated time at a time.
void SystoleDevice::Run() {
  quantum_.reset();
  for (;;) {
    if (model_ == nullptr || failed_ || model_->Idle()) {
      quantum_.sync();  // the work done so far ends now, not earlier
      if (model_ != nullptr && !failed_ && !model_->Idle()) continue;  // the host queued more meanwhile
      UpdateInterrupt();
      if (!idle_) {
        idle_ = true;
        changed_.notify(sc_core::SC_ZERO_TIME);
      }
      wait(kick_);
      continue;
    }
    idle_ = false;
    std::uint64_t cycles = 0;
    if (!Guarded([&] { cycles = model_->Step(); })) {
      Fail();  // the machine is stopped; the host hears of it at its next access
      continue;
    }
    quantum_.inc(period_ * static_cast<double>(cycles));
    // The line follows the model after each instruction: raised by a launch's end, an error or
    // INTERRUPT, dropped by the host's write to IRQ_STATUS.
    if (model_->InterruptLine() != irq_o.read()) {
      quantum_.sync();
      UpdateInterrupt();
    } else if (quantum_.need_sync()) {
      quantum_.sync();
    }
  }
}

void SystoleDevice::RegistersTransport(tlm_generic_payload& trans, sc_time& delay) {
  const std::uint64_t address = trans.get_address();
  const std::uint64_t length = trans.get_data_length();
  if (const tlm::tlm_response_status status = RegisterAccessRefusal(trans, model_ != nullptr, failed_);
      status != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(status);
    return;
  }
  const bool ok = Guarded([&] {
    for (std::uint64_t i = 0; i < length / kRegisterWordBytes && trans.get_command() != tlm::TLM_IGNORE_COMMAND; ++i) {
      const auto offset = static_cast<std::uint32_t>(address + i * kRegisterWordBytes);
      if (trans.is_read()) {
        PutRegisterWord(trans, i, model_->ReadRegister(offset));
      } else {
        model_->WriteRegister(offset, RegisterWordOf(trans, i));
      }
    }
  });
  if (!ok) {
    Fail();
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  if (trans.is_write()) {
    // A doorbell may have queued work: the device is busy from now on, and its thread wakes
    // at the time the write arrives (and updates the interrupt line: only Run drives irq_o).
    idle_ = idle_ && model_->Idle();
    kick_.notify(delay);
  }
  delay += period_ * static_cast<double>(AccessCycles(kRegisterAccessCycles * (length / kRegisterWordBytes)));
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned SystoleDevice::RegistersDebug(tlm_generic_payload&) { return 0; }

void SystoleDevice::MemoryTransport(tlm_generic_payload& trans, sc_time& delay) {
  const std::uint64_t address = trans.get_address();
  const std::uint64_t length = trans.get_data_length();
  if (const tlm::tlm_response_status status =
          MemoryAccessRefusal(trans, model_ == nullptr ? 0 : model_->config().memory_bytes, failed_);
      status != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(status);
    return;
  }
  const std::span<std::uint8_t> bytes(trans.get_data_ptr(), length);
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  const bool ok = Guarded([&] {
    if (trans.get_byte_enable_ptr() == nullptr) {
      if (trans.is_read()) model_->ReadMemory(address, bytes);
      if (trans.is_write()) model_->WriteMemory(address, bytes);
    } else if (trans.is_read()) {
      // Read the range, keep the enabled bytes: one counted access, as the host made one.
      std::vector<std::uint8_t> all(length);
      model_->ReadMemory(address, all);
      for (std::uint64_t i = 0; i < length; ++i) {
        if (ByteEnabled(trans, i)) bytes[i] = all[i];
      }
    } else if (trans.is_write()) {
      // Merge with what memory holds (read through the debug back door, uncounted), then write
      // the range once. A machine without the back door cannot merge: byte-enable error.
      std::vector<std::uint8_t> merged(length);
      if (!model_->PeekMemory(address, merged)) {
        status = tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
        return;
      }
      for (std::uint64_t i = 0; i < length; ++i) {
        if (ByteEnabled(trans, i)) merged[i] = bytes[i];
      }
      model_->WriteMemory(address, merged);
    }
  });
  if (!ok) {
    Fail();
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  if (status != tlm::TLM_OK_RESPONSE) {
    trans.set_response_status(status);
    return;
  }
  trans.set_dmi_allowed(true);
  const std::uint64_t beats = (length + kMemoryBeatBytes - 1) / kMemoryBeatBytes;
  delay += period_ * static_cast<double>(AccessCycles(kMemoryAccessCycles + beats));
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned SystoleDevice::MemoryDebug(tlm_generic_payload& trans) {
  const std::uint64_t size = model_ == nullptr ? 0 : model_->config().memory_bytes;
  const std::uint64_t address = trans.get_address();
  if (address >= size) return 0;
  const std::uint64_t length = std::min<std::uint64_t>(trans.get_data_length(), size - address);
  const std::span<std::uint8_t> bytes(trans.get_data_ptr(), length);
  bool moved = false;
  if (!Guarded([&] { moved = trans.is_read() ? model_->PeekMemory(address, bytes) : model_->PokeMemory(address, bytes); })) {
    return 0;
  }
  if (!moved) return 0;  // the machine has no debug back door
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  return static_cast<unsigned>(length);
}

bool SystoleDevice::MemoryDmi(tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  const std::uint64_t size = model_ == nullptr ? 0 : model_->config().memory_bytes;
  const std::uint64_t address = trans.get_address();
  if (address >= size) {
    // Denied for everything past the end of memory (all of it when the slot is empty).
    dmi.set_start_address(size);
    dmi.set_end_address(std::numeric_limits<sc_dt::uint64>::max());
    dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_NONE);
    return false;
  }
  std::span<std::uint8_t> page;
  if (!Guarded([&] { page = model_->DirectMemory(address); }) || page.empty()) return false;
  const std::uint64_t start = address - address % model::DeviceMemory::kPageBytes;
  dmi.set_dmi_ptr(page.data());
  dmi.set_start_address(start);
  dmi.set_end_address(start + page.size() - 1);
  dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_READ_WRITE);
  dmi.set_read_latency(period_ * static_cast<double>(kMemoryAccessCycles));
  dmi.set_write_latency(period_ * static_cast<double>(kMemoryAccessCycles));
  dmi_granted_ = true;
  return true;
}

}  // namespace systole::systemc
