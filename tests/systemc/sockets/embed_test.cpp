// Systole in a platform of one's own, as docs/SYSTEMC.md shows it: a CPU-like initiator, an
// interconnect with a PCIe-like link, and a SystoleDevice, elaborated and started by the test
// (no Platform, no driver). The CPU puts a program in device memory, rings the doorbell, sleeps
// until the interrupt, and reads the result, which must be what the golden model computes.
//
// SystemC elaborates once per process: this binary holds this one test (CTest runs each test
// in a process of its own anyway).
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "arch/regs/regmap.hpp"
#include "sim/model/golden_model.hpp"
#include "sim/systemc/interconnect.hpp"
#include "sim/systemc/systole_device.hpp"
#include "tests/driver/driver_test_util.hpp"

namespace {

using namespace systole;
using regs::OffsetOf;

constexpr std::uint64_t kRegisters = 0x4000'0000;    // where the platform maps the device
constexpr std::uint64_t kMemory = 0x1'0000'0000;

// The platform's processor: a loosely timed initiator running `program` once.
struct Cpu : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Cpu> socket{"socket"};
  sc_core::sc_in<bool> irq{"irq"};
  image::Program program;
  std::vector<std::uint8_t> input, output;
  sc_core::sc_time finished;

  SC_HAS_PROCESS(Cpu);
  Cpu(const sc_core::sc_module_name& name, image::Program p, std::vector<std::uint8_t> x)
      : sc_core::sc_module(name), program(std::move(p)), input(std::move(x)) {
    SC_THREAD(Main);
  }

  void Access(tlm::tlm_command command, std::uint64_t address, void* data, std::size_t length) {
    tlm::tlm_generic_payload trans;
    trans.set_command(command);
    trans.set_address(address);
    trans.set_data_ptr(static_cast<unsigned char*>(data));
    trans.set_data_length(static_cast<unsigned>(length));
    trans.set_streaming_width(static_cast<unsigned>(length));
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(trans, delay);
    ASSERT_TRUE(trans.is_response_ok()) << trans.get_response_string();
    wait(delay);
  }
  void Write32(std::uint32_t offset, std::uint32_t value) {
    Access(tlm::TLM_WRITE_COMMAND, kRegisters + offset, &value, 4);
  }

  void Main() {
    for (const auto& segment : program.data) {
      std::vector<std::uint8_t> bytes = segment.bytes;
      Access(tlm::TLM_WRITE_COMMAND, kMemory + segment.address, bytes.data(), bytes.size());
    }
    std::vector<std::uint8_t> text(program.TextBytes());
    for (std::size_t i = 0; i < program.words.size(); ++i) {
      std::memcpy(text.data() + i * isa::kInstructionBytes, program.words[i].data(), isa::kInstructionBytes);
    }
    Access(tlm::TLM_WRITE_COMMAND, kMemory + program.text_address, text.data(), text.size());
    Access(tlm::TLM_WRITE_COMMAND, kMemory + program.inputs[0].address, input.data(), input.size());
    Write32(OffsetOf("IRQ_ENABLE"), regs::Mask(regs::FieldOf("IRQ_ENABLE", "DONE")));
    Write32(OffsetOf("CMD_PC_LO"), static_cast<std::uint32_t>(program.text_address));
    Write32(OffsetOf("CMD_PC_HI"), 0);
    Write32(OffsetOf("CMD_COUNT"), static_cast<std::uint32_t>(program.words.size()));
    Write32(OffsetOf("DOORBELL"), 1);
    wait(irq.posedge_event());  // the launch is done
    finished = sc_core::sc_time_stamp();
    output.resize(program.outputs[0].Bytes());
    Access(tlm::TLM_READ_COMMAND, kMemory + program.outputs[0].address, output.data(), output.size());
  }
};

TEST(Embedding, ACpuRunsAProgramOnASystoleDeviceInItsOwnPlatform) {
  const Config config = LoadConfig("tiny");
  const image::Program program = driver_test::ScaleProgram(3);
  const std::vector<std::uint8_t> x = driver_test::ScaleInput(5);

  // The simulation runs on a thread of its own, as the driver's Platform runs it: when
  // sc_start() switches the main thread onto SystemC's coroutine stacks, LeakSanitizer (make
  // test-sanitize) takes the last one for the main thread's stack and, after the modules and
  // their stacks are gone, crashes scanning it at exit ("Tracer caught signal 11", in 4 runs
  // of 6 here). The platform below is the same as in an sc_main of one's own.
  std::vector<std::uint8_t> output;
  sc_core::sc_time finished;
  std::thread simulation([&] {
    // The platform: cpu ──► bus ──(500 ns, 8 GB/s)──► tpu.registers / tpu.memory; tpu.irq_o ──► cpu.
    systemc::SystoleDevice tpu("tpu", std::make_unique<systemc::GoldenDeviceModel>(config));
    systemc::Interconnect bus("bus");
    Cpu cpu("cpu", program, x);
    sc_core::sc_signal<bool> irq("irq");
    cpu.socket.bind(bus.upstream);
    bus.downstream.bind(tpu.registers);  // downstream port 0
    bus.downstream.bind(tpu.memory);     // downstream port 1
    const unsigned pcie = bus.AddLink({sc_core::sc_time(500, sc_core::SC_NS), 8e9});
    bus.Map(kRegisters, systemc::SystoleDevice::kRegisterWindowBytes, 0, pcie);
    bus.Map(kMemory, config.memory_bytes, 1, pcie);
    tpu.irq_o.bind(irq);
    cpu.irq.bind(irq);
    sc_core::sc_start();  // returns when nothing is left to simulate: the CPU has finished
    output = cpu.output;
    finished = cpu.finished;
  });
  simulation.join();

  // The same program on the golden model directly.
  model::GoldenModel golden(config);
  for (const auto& segment : program.data) golden.WriteMemory(segment.address, segment.bytes);
  for (std::size_t i = 0; i < program.words.size(); ++i) {
    golden.WriteMemory(program.text_address + i * isa::kInstructionBytes, program.words[i]);
  }
  golden.WriteMemory(program.inputs[0].address, x);
  ASSERT_TRUE(golden.Execute(program.text_address, static_cast<std::uint32_t>(program.words.size())).Ok());
  std::vector<std::uint8_t> expected(program.outputs[0].Bytes());
  golden.ReadMemory(program.outputs[0].address, expected);
  EXPECT_EQ(output, expected);
  EXPECT_GT(finished, sc_core::SC_ZERO_TIME);
  std::printf("the launch finished at %s of simulated time\n", finished.to_string().c_str());
}

}  // namespace
