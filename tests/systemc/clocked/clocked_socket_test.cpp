// The clocked bridge's sockets (ClockedSoc, sim/systemc/clocked_soc.hpp) answer every access as
// SystoleDevice's do with the `rtl` model behind them (socket_rules.hpp, docs/SYSTEMC.md): the
// maps, the errors, byte enables, debug transport and DMI; and each access takes the clock
// edges of its bus handshake, never annotated time.
//
// One elaboration per process (SystemC): this file's one test runs every check from one
// initiator thread, on the first configuration the build Verilated.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "arch/regs/regmap.hpp"
#include "sim/rtl/rtl_device.hpp"
#include "sim/systemc/clocked_soc.hpp"
#include "sim/systemc/socket_rules.hpp"

namespace systole::systemc {
namespace {

using tlm::tlm_response_status;

struct Prober : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Prober> registers{"registers"};
  tlm_utils::simple_initiator_socket<Prober> memory{"memory"};
  std::uint64_t memory_bytes = 0;
  sc_core::sc_time period;
  bool finished = false;

  SC_HAS_PROCESS(Prober);
  Prober(const sc_core::sc_module_name& name, std::uint64_t bytes, sc_core::sc_time clock_period)
      : sc_core::sc_module(name), memory_bytes(bytes), period(clock_period) {
    SC_THREAD(Main);
  }

  struct Access {
    tlm::tlm_command command = tlm::TLM_READ_COMMAND;
    std::uint64_t address = 0;
    unsigned char* data = nullptr;
    unsigned length = 0;
    unsigned streaming_width = 0;  // 0: the length
    const unsigned char* enables = nullptr;
    unsigned enable_length = 0;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;  // annotated on the way in
  };
  struct Answer {
    tlm_response_status status;
    sc_core::sc_time elapsed;  // simulated time b_transport took
    sc_core::sc_time delay;    // what it left in the delay argument
  };

  Answer Transport(tlm_utils::simple_initiator_socket<Prober>& socket, const Access& a) {
    tlm::tlm_generic_payload trans;
    trans.set_command(a.command);
    trans.set_address(a.address);
    trans.set_data_ptr(a.data);
    trans.set_data_length(a.length);
    trans.set_streaming_width(a.streaming_width == 0 ? a.length : a.streaming_width);
    trans.set_byte_enable_ptr(const_cast<unsigned char*>(a.enables));
    trans.set_byte_enable_length(a.enable_length);
    sc_core::sc_time delay = a.delay;
    const sc_core::sc_time before = sc_core::sc_time_stamp();
    socket->b_transport(trans, delay);
    return {trans.get_response_status(), sc_core::sc_time_stamp() - before, delay};
  }
  tlm_response_status Register(tlm::tlm_command command, std::uint64_t offset, std::uint32_t& value) {
    return Transport(registers, {.command = command, .address = offset,
                                 .data = reinterpret_cast<unsigned char*>(&value), .length = 4}).status;
  }
  std::vector<std::uint8_t> ReadMemory(std::uint64_t address, unsigned length) {
    std::vector<std::uint8_t> bytes(length);
    EXPECT_EQ(Transport(memory, {.address = address, .data = bytes.data(), .length = length}).status,
              tlm::TLM_OK_RESPONSE);
    return bytes;
  }

  void Main() {
    Registers();
    Memory();
    DebugAndDmi();
    finished = true;
    sc_core::sc_stop();
  }

  void Registers() {
    using regs::OffsetOf;
    std::uint32_t value = 0;
    // A read takes two edges (request, then reg_rvalid), a write one; no annotated time.
    const Answer magic = Transport(registers, {.address = OffsetOf("ID_MAGIC"),
                                               .data = reinterpret_cast<unsigned char*>(&value), .length = 4});
    EXPECT_EQ(magic.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(value, 0x53595354u);
    EXPECT_EQ(magic.elapsed, period * 2.0);
    EXPECT_EQ(magic.delay, sc_core::SC_ZERO_TIME);
    value = 5;
    const Answer enable = Transport(registers, {.command = tlm::TLM_WRITE_COMMAND, .address = OffsetOf("IRQ_ENABLE"),
                                                .data = reinterpret_cast<unsigned char*>(&value), .length = 4});
    EXPECT_EQ(enable.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(enable.elapsed, period);
    value = 0;
    EXPECT_EQ(Register(tlm::TLM_READ_COMMAND, OffsetOf("IRQ_ENABLE"), value), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(value, 5u);
    // An annotated delay is time the initiator ran ahead: waited out first, then the edges.
    value = 0;
    const Answer late = Transport(registers, {.command = tlm::TLM_WRITE_COMMAND, .address = OffsetOf("IRQ_ENABLE"),
                                              .data = reinterpret_cast<unsigned char*>(&value), .length = 4,
                                              .delay = period * 5.0});
    EXPECT_EQ(late.status, tlm::TLM_OK_RESPONSE);
    EXPECT_GE(late.elapsed, period * 5.0);
    EXPECT_LE(late.elapsed, period * 6.0);
    EXPECT_EQ(late.delay, sc_core::SC_ZERO_TIME);
    // A counter's LO/HI pair in one transaction: two reads, four edges.
    std::array<std::uint32_t, 2> pair{1, 1};
    const Answer cycles = Transport(registers, {.address = OffsetOf("PERF_CYCLES_LO"),
                                                .data = reinterpret_cast<unsigned char*>(pair.data()), .length = 8});
    EXPECT_EQ(cycles.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(pair, (std::array<std::uint32_t, 2>{0, 0})) << "no launch has run";
    EXPECT_EQ(cycles.elapsed, period * 4.0);

    // Outside the map: nothing done, and no edge taken.
    std::uint32_t unmapped = 0;
    while (regs::FindRegister(unmapped) != nullptr) unmapped += 4;
    for (const std::uint64_t offset : {std::uint64_t{unmapped}, std::uint64_t{OffsetOf("STATUS") + 2},
                                       kRegisterWindowBytes, kRegisterWindowBytes - 2}) {
      const Answer answer = Transport(registers, {.address = offset, .data = reinterpret_cast<unsigned char*>(&value),
                                                  .length = 4});
      EXPECT_EQ(answer.status, tlm::TLM_ADDRESS_ERROR_RESPONSE) << "register offset " << offset;
      EXPECT_EQ(answer.elapsed, sc_core::SC_ZERO_TIME);
    }
    std::array<std::uint32_t, 2> past{};
    EXPECT_EQ(Transport(registers, {.address = kRegisterWindowBytes - 4,
                                    .data = reinterpret_cast<unsigned char*>(past.data()), .length = 8}).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE) << "a pair crossing the end of the window";
    // Whole words only.
    EXPECT_EQ(Transport(registers, {.address = OffsetOf("STATUS"), .data = reinterpret_cast<unsigned char*>(&value),
                                    .length = 3}).status,
              tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(Transport(registers, {.address = OffsetOf("STATUS"), .data = reinterpret_cast<unsigned char*>(&value),
                                    .length = 4, .streaming_width = 2}).status,
              tlm::TLM_BURST_ERROR_RESPONSE);
    // Byte enables: a write must enable every byte; a read returns the enabled ones.
    const std::array<unsigned char, 4> some = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED, TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
    value = 7;
    EXPECT_EQ(Transport(registers, {.command = tlm::TLM_WRITE_COMMAND, .address = OffsetOf("IRQ_ENABLE"),
                                    .data = reinterpret_cast<unsigned char*>(&value), .length = 4,
                                    .enables = some.data(), .enable_length = 4}).status,
              tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    EXPECT_EQ(Register(tlm::TLM_READ_COMMAND, OffsetOf("IRQ_ENABLE"), value), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(value, 0u) << "the refused write changed IRQ_ENABLE";
    value = 0xAAAA'AAAAu;
    EXPECT_EQ(Transport(registers, {.address = OffsetOf("ID_MAGIC"), .data = reinterpret_cast<unsigned char*>(&value),
                                    .length = 4, .enables = some.data(), .enable_length = 4}).status,
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(value, 0xAA59'AA54u) << "bytes 0 and 2 of 0x53595354, the others untouched";
  }

  void Memory() {
    // Any length and alignment, through the host port.
    std::vector<std::uint8_t> bytes(100);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(3 * i + 1);
    const Answer write = Transport(memory, {.command = tlm::TLM_WRITE_COMMAND, .address = 37, .data = bytes.data(),
                                            .length = 100});
    EXPECT_EQ(write.status, tlm::TLM_OK_RESPONSE);
    EXPECT_GE(write.elapsed, period * 4.0) << "four host-port words, at least one edge each";
    EXPECT_EQ(write.delay, sc_core::SC_ZERO_TIME);
    EXPECT_EQ(ReadMemory(37, 100), bytes);

    // Past the end, or crossing it: an address error, nothing moved.
    const std::uint64_t end = memory_bytes;
    std::vector<std::uint8_t> tail = ReadMemory(end - 4, 4);
    std::vector<std::uint8_t> eight(8, 0xEE);
    EXPECT_EQ(Transport(memory, {.command = tlm::TLM_WRITE_COMMAND, .address = end - 4, .data = eight.data(),
                                 .length = 8}).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(ReadMemory(end - 4, 4), tail) << "a refused write crossing the end changed memory";
    EXPECT_EQ(Transport(memory, {.address = end, .data = eight.data(), .length = 1}).status,
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(Transport(memory, {.address = 0, .data = eight.data(), .length = 8, .streaming_width = 4}).status,
              tlm::TLM_BURST_ERROR_RESPONSE);

    // Byte enables: masked reads keep the enabled bytes; masked writes are refused (the DRAM
    // models have no back door to merge with), memory unchanged.
    const std::array<unsigned char, 2> odd = {TLM_BYTE_DISABLED, TLM_BYTE_ENABLED};
    std::vector<std::uint8_t> masked(8, 0xCC);
    EXPECT_EQ(Transport(memory, {.address = 37, .data = masked.data(), .length = 8, .enables = odd.data(),
                                 .enable_length = 2}).status,
              tlm::TLM_OK_RESPONSE);
    for (std::size_t i = 0; i < masked.size(); ++i) {
      EXPECT_EQ(masked[i], i % 2 == 1 ? bytes[i] : 0xCC) << "byte " << i;
    }
    EXPECT_EQ(Transport(memory, {.command = tlm::TLM_WRITE_COMMAND, .address = 37, .data = eight.data(), .length = 8,
                                 .enables = odd.data(), .enable_length = 2}).status,
              tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    EXPECT_EQ(ReadMemory(37, 100), bytes) << "a refused masked write changed memory";
  }

  void DebugAndDmi() {
    tlm::tlm_generic_payload trans;
    std::vector<std::uint8_t> bytes(16, 0x5A);
    trans.set_command(tlm::TLM_READ_COMMAND);
    trans.set_address(37);
    trans.set_data_ptr(bytes.data());
    trans.set_data_length(16);
    trans.set_streaming_width(16);
    EXPECT_EQ(memory->transport_dbg(trans), 0u) << "no back door to the DRAM models";
    EXPECT_EQ(bytes, std::vector<std::uint8_t>(16, 0x5A));
    trans.set_command(tlm::TLM_WRITE_COMMAND);
    EXPECT_EQ(memory->transport_dbg(trans), 0u);
    std::vector<std::uint8_t> written(16);  // what Memory() left there
    for (std::size_t i = 0; i < written.size(); ++i) written[i] = static_cast<std::uint8_t>(3 * i + 1);
    EXPECT_EQ(ReadMemory(37, 16), written) << "a debug write changed memory";
    trans.set_command(tlm::TLM_READ_COMMAND);
    trans.set_address(regs::OffsetOf("ID_MAGIC"));
    trans.set_data_length(4);
    trans.set_streaming_width(4);
    EXPECT_EQ(registers->transport_dbg(trans), 0u) << "reading a register can have an effect";

    for (const std::uint64_t address : {std::uint64_t{0}, memory_bytes}) {
      tlm::tlm_dmi dmi;
      trans.set_address(address);
      EXPECT_FALSE(memory->get_direct_mem_ptr(trans, dmi)) << "address " << address;
      EXPECT_EQ(dmi.get_granted_access(), tlm::tlm_dmi::DMI_ACCESS_NONE);
      EXPECT_LE(dmi.get_start_address(), address);
      EXPECT_EQ(dmi.get_end_address(), std::numeric_limits<sc_dt::uint64>::max());
    }
  }
};

TEST(ClockedSocSockets, AnswerAsTheRtlModelsSocketsAndTakeClockEdges) {
  const std::vector<std::string> built = rtl::BuiltRtlConfigs();
  ASSERT_FALSE(built.empty()) << "a build with SYSTOLE_RTL Verilates at least one SoC";
  const Config config = LoadConfig(built.front());
  const sc_core::sc_time period = ClockPeriodOf(config);
  sc_core::sc_clock clock("clock", period);
  sc_core::sc_signal<bool> irq("irq");
  ClockedSoc soc("soc", config);
  Prober prober("prober", config.memory_bytes, period);
  soc.clk.bind(clock);
  soc.irq.bind(irq);
  prober.registers.bind(soc.registers);
  prober.memory.bind(soc.memory);
  sc_core::sc_start();
  EXPECT_TRUE(prober.finished);
  EXPECT_EQ(soc.failure(), "");
  EXPECT_FALSE(irq.read()) << "no launch, no interrupt";
}

}  // namespace
}  // namespace systole::systemc
