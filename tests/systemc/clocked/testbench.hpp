// The testbench of the clocked bridge's tests: an initiator that runs one assembled program on
// a Systole target through its register and memory sockets, as a platform's CPU would, and a
// counter of clock edges that knows nothing of the bridge.
//
// The runner writes the program's data, text and inputs (the pattern of driver_test::RunOnce
// with seed 1, so results compare with RunOnce's on `ref` and `rtl`), enables the DONE and ERROR
// interrupts, clears the counters, rings the doorbell, sleeps until irq rises (clearing
// IRQ_STATUS and launching again `launches` times in all: the speed measurements), and reads
// STATUS, the outputs and every counter (outputs first, as RunOnce does: PERF_BYTES_HOST counts
// them, and the counters are the last launch's). It notes the simulated time and the edge count
// when the last doorbell write completed and when irq rose after it, and when it finished. It honours annotated delays (wait(delay) after each b_transport), so it also
// drives a SystoleDevice, whose sockets annotate.
#pragma once

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "arch/image/program.hpp"
#include "arch/regs/regmap.hpp"
#include "systole/device.hpp"

namespace systole::systemc::testbench {

// Counts rising edges of clk: the testbench's own view of the clock.
struct EdgeCounter : sc_core::sc_module {
  sc_core::sc_in<bool> clk{"clk"};
  std::uint64_t edges = 0;

  SC_HAS_PROCESS(EdgeCounter);
  explicit EdgeCounter(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
    SC_METHOD(Count);
    sensitive << clk.pos();
    dont_initialize();
  }
  void Count() { ++edges; }
};

// Stops the simulation when the last of `running` initiators is done (the clocks never stop).
struct StopWhenDone {
  int running = 1;
  void Done() {
    if (--running == 0) sc_core::sc_stop();
  }
};

struct RunRecord {
  bool ok = false;
  std::string error;  // the first access that failed
  std::vector<std::vector<std::uint8_t>> outputs;
  Counters counters;
  std::uint32_t status = 0;
  sc_core::sc_time doorbell_time, irq_time, end_time;
  std::uint64_t doorbell_edge = 0, irq_edge = 0, end_edge = 0;  // the EdgeCounter's count then (0: none)
};

struct ProgramRunner : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<ProgramRunner> registers{"registers"};
  tlm_utils::simple_initiator_socket<ProgramRunner> memory{"memory"};
  sc_core::sc_in<bool> irq{"irq"};
  RunRecord record;

  SC_HAS_PROCESS(ProgramRunner);
  ProgramRunner(const sc_core::sc_module_name& name, const image::Program& program, StopWhenDone& stop,
                const EdgeCounter* counter = nullptr, unsigned launches = 1)
      : sc_core::sc_module(name), program_(program), stop_(stop), counter_(counter), launches_(launches) {
    SC_THREAD(Main);
  }

 private:
  bool Access(tlm_utils::simple_initiator_socket<ProgramRunner>& socket, tlm::tlm_command command,
              std::uint64_t address, void* data, std::size_t length) {
    tlm::tlm_generic_payload trans;
    trans.set_command(command);
    trans.set_address(address);
    trans.set_data_ptr(static_cast<unsigned char*>(data));
    trans.set_data_length(static_cast<unsigned>(length));
    trans.set_streaming_width(static_cast<unsigned>(length));
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(trans, delay);
    wait(delay);
    if (!trans.is_response_ok() && record.error.empty()) {
      record.error = "access at address " + std::to_string(address) + ": " + trans.get_response_string();
    }
    return trans.is_response_ok();
  }
  bool WriteMemory(std::uint64_t address, std::vector<std::uint8_t> bytes) {
    return Access(memory, tlm::TLM_WRITE_COMMAND, address, bytes.data(), bytes.size());
  }
  bool WriteRegister(std::uint32_t offset, std::uint32_t value) {
    return Access(registers, tlm::TLM_WRITE_COMMAND, offset, &value, 4);
  }
  std::uint64_t Edges() const { return counter_ == nullptr ? 0 : counter_->edges; }

  bool Run() {
    for (const auto& segment : program_.data) {
      if (!WriteMemory(segment.address, segment.bytes)) return false;
    }
    std::vector<std::uint8_t> text(program_.TextBytes());
    for (std::size_t i = 0; i < program_.words.size(); ++i) {
      std::memcpy(text.data() + i * isa::kInstructionBytes, program_.words[i].data(), isa::kInstructionBytes);
    }
    if (!WriteMemory(program_.text_address, text)) return false;
    for (const auto& input : program_.inputs) {
      std::vector<std::uint8_t> bytes(input.Bytes());
      for (std::size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<std::uint8_t>((k * 7 + 1) % 11);
      if (!WriteMemory(input.address, bytes)) return false;
    }
    using regs::Mask, regs::FieldOf, regs::OffsetOf;
    const std::uint32_t interrupts = Mask(FieldOf("IRQ_ENABLE", "DONE")) | Mask(FieldOf("IRQ_ENABLE", "ERROR"));
    if (!WriteRegister(OffsetOf("IRQ_ENABLE"), interrupts) ||
        !WriteRegister(OffsetOf("CMD_PC_LO"), static_cast<std::uint32_t>(program_.text_address)) ||
        !WriteRegister(OffsetOf("CMD_PC_HI"), static_cast<std::uint32_t>(program_.text_address >> 32)) ||
        !WriteRegister(OffsetOf("CMD_COUNT"), static_cast<std::uint32_t>(program_.words.size()))) {
      return false;
    }
    for (unsigned launch = 0; launch < launches_; ++launch) {
      if (launch > 0 && !WriteRegister(OffsetOf("IRQ_STATUS"), interrupts)) return false;  // irq falls
      if (!WriteRegister(OffsetOf("CTRL"), Mask(FieldOf("CTRL", "CLEAR_COUNTERS"))) ||
          !WriteRegister(OffsetOf("DOORBELL"), 1)) {
        return false;
      }
      record.doorbell_time = sc_core::sc_time_stamp();
      record.doorbell_edge = Edges();
      wait(irq.posedge_event());
      record.irq_time = sc_core::sc_time_stamp();
      record.irq_edge = Edges();
    }
    if (!Access(registers, tlm::TLM_READ_COMMAND, OffsetOf("STATUS"), &record.status, 4)) return false;
    for (const auto& output : program_.outputs) {
      record.outputs.emplace_back(output.Bytes());
      if (!Access(memory, tlm::TLM_READ_COMMAND, output.address, record.outputs.back().data(), output.Bytes())) {
        return false;
      }
    }
    for (const regs::Counter& counter : regs::Counters()) {
      std::uint32_t pair[2] = {0, 0};  // LO then HI in one transaction: LO latches HI
      if (!Access(registers, tlm::TLM_READ_COMMAND, counter.lo, pair, sizeof pair)) return false;
      record.counters.values.emplace_back(std::string(counter.name), pair[0] | std::uint64_t{pair[1]} << 32);
    }
    return true;
  }

  void Main() {
    record.ok = Run();
    record.end_time = sc_core::sc_time_stamp();
    record.end_edge = Edges();
    stop_.Done();
  }

  const image::Program& program_;
  StopWhenDone& stop_;
  const EdgeCounter* counter_;
  unsigned launches_;
};

// The counters that say what was computed and moved; CYCLES and the stalls are timing, which
// behind the HBM controller depends on the DRAM's state when a launch starts.
inline Counters Functional(Counters counters) {
  std::erase_if(counters.values, [](const auto& counter) {
    return counter.first == "CYCLES" || counter.first.starts_with("STALL_");
  });
  return counters;
}

}  // namespace systole::systemc::testbench
