// The SystoleDevice's socket semantics, in the manner of QBox's memory tests: address errors,
// accesses crossing the end of a region, debug-transport sizes, byte enables, DMI grants and
// their invalidation, and the annotated delays. Each test inserts a golden-model device into a
// slot of the process's platform (sim/systemc/platform.hpp) and speaks TLM to it from the
// platform's host initiator, through the interconnect, as an embedding platform's CPU would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "arch/regs/regmap.hpp"
#include "sim/systemc/platform.hpp"

namespace systole::systemc {
namespace {

using regs::OffsetOf;
using tlm::TLM_ADDRESS_ERROR_RESPONSE;
using tlm::TLM_BURST_ERROR_RESPONSE;
using tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
using tlm::TLM_OK_RESPONSE;
using tlm::TLM_READ_COMMAND;
using tlm::TLM_WRITE_COMMAND;

// A `tiny` device in a slot of the platform for the length of a test.
class Socket : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = LoadConfig("tiny");
    platform_.Run([&](Host&) { slot_ = platform_.Insert(std::make_unique<GoldenDeviceModel>(config_)); });
    regs_ = Platform::RegisterBase(slot_);
    mem_ = Platform::MemoryBase(slot_);
  }
  void TearDown() override {
    platform_.Run([&](Host&) { platform_.Remove(slot_); });
  }
  // Runs `job` in the simulation with the host and this test's device.
  void InSim(const std::function<void(Host&, SystoleDevice&)>& job) {
    platform_.Run([&](Host& host) { job(host, platform_.device(slot_)); });
  }
  static std::uint32_t Word(std::span<const std::uint8_t> bytes) {
    std::uint32_t value = 0;
    std::memcpy(&value, bytes.data(), 4);
    return value;
  }
  std::uint64_t BytesHost(Host& host) {
    std::array<std::uint8_t, 8> bytes{};
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + OffsetOf("PERF_BYTES_HOST_LO"), bytes), TLM_OK_RESPONSE);
    std::uint64_t value = 0;
    std::memcpy(&value, bytes.data(), 8);
    return value;
  }

  Platform& platform_ = Platform::Get();
  Config config_;
  unsigned slot_ = 0;
  std::uint64_t regs_ = 0;
  std::uint64_t mem_ = 0;
};

TEST_F(Socket, RegistersAnswerWholeWordsAndPairs) {
  InSim([&](Host& host, SystoleDevice&) {
    std::array<std::uint8_t, 4> word{};
    ASSERT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + OffsetOf("ID_MAGIC"), word), TLM_OK_RESPONSE);
    EXPECT_EQ(Word(word), regs::kMagic);
    // Two registers in one access: CFG_MEM_SIZE_LO and _HI.
    std::array<std::uint8_t, 8> pair{};
    ASSERT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + OffsetOf("CFG_MEM_SIZE_LO"), pair), TLM_OK_RESPONSE);
    std::uint64_t size = 0;
    std::memcpy(&size, pair.data(), 8);
    EXPECT_EQ(size, config_.memory_bytes);
  });
}

TEST_F(Socket, AddressErrorsOutsideTheMaps) {
  InSim([&](Host& host, SystoleDevice&) {
    std::array<std::uint8_t, 4> word{};
    const std::uint64_t last = OffsetOf("PERF_BYTES_HOST_HI");
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + last + 4, word), TLM_ADDRESS_ERROR_RESPONSE)
        << "past the last register";
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + 0xFFC, word), TLM_ADDRESS_ERROR_RESPONSE)
        << "inside the window, no register";
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + 2, word), TLM_ADDRESS_ERROR_RESPONSE) << "misaligned";
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + SystoleDevice::kRegisterWindowBytes, word),
              TLM_ADDRESS_ERROR_RESPONSE)
        << "between the register window and memory: no target";
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, mem_ + config_.memory_bytes, word), TLM_ADDRESS_ERROR_RESPONSE)
        << "the first byte past device memory";
    EXPECT_EQ(host.Transport(TLM_WRITE_COMMAND, mem_ + config_.memory_bytes + 4096, word),
              TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, Platform::RegisterBase(Platform::kSlots), word),
              TLM_ADDRESS_ERROR_RESPONSE)
        << "past the last slot";
  });
}

TEST_F(Socket, AnAccessCrossingTheEndOfMemoryMovesNothing) {
  InSim([&](Host& host, SystoleDevice&) {
    const std::uint64_t end = config_.memory_bytes;
    std::vector<std::uint8_t> bytes(16, 0xAB);
    EXPECT_EQ(host.Transport(TLM_WRITE_COMMAND, mem_ + end - 8, bytes), TLM_ADDRESS_ERROR_RESPONSE);
    std::vector<std::uint8_t> after(8, 0xFF);
    EXPECT_EQ(host.Debug(TLM_READ_COMMAND, mem_ + end - 8, after), 8u);
    EXPECT_THAT(after, ::testing::Each(0)) << "the in-range half was not written";
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, mem_ + end - 8, bytes), TLM_ADDRESS_ERROR_RESPONSE);
    // The last bytes themselves are fine.
    EXPECT_EQ(host.Transport(TLM_WRITE_COMMAND, mem_ + end - 8, std::span(bytes).first(8)), TLM_OK_RESPONSE);
  });
}

TEST_F(Socket, RegisterAccessesMustBeWholeWords) {
  InSim([&](Host& host, SystoleDevice&) {
    std::array<std::uint8_t, 2> half{};
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + OffsetOf("ID_MAGIC"), half), TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + OffsetOf("ID_MAGIC"), std::span<std::uint8_t>()),
              TLM_BURST_ERROR_RESPONSE);
    // Byte enables select what a read returns; a write must enable whole words.
    std::array<std::uint8_t, 4> word = {0xEE, 0xEE, 0xEE, 0xEE};
    std::array<std::uint8_t, 4> low_half = {0xFF, 0xFF, 0x00, 0x00};
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + OffsetOf("ID_MAGIC"), word, low_half), TLM_OK_RESPONSE);
    EXPECT_EQ(Word(word), (regs::kMagic & 0xFFFF) | 0xEEEE0000u);
    EXPECT_EQ(host.Transport(TLM_WRITE_COMMAND, regs_ + OffsetOf("IRQ_ENABLE"), word, low_half),
              TLM_BYTE_ENABLE_ERROR_RESPONSE);
  });
}

TEST_F(Socket, MemoryHonoursByteEnables) {
  InSim([&](Host& host, SystoleDevice&) {
    std::vector<std::uint8_t> ones(8, 0x11);
    ASSERT_EQ(host.Transport(TLM_WRITE_COMMAND, mem_ + 0x100, ones), TLM_OK_RESPONSE);
    std::vector<std::uint8_t> twos(8, 0x22);
    std::array<std::uint8_t, 2> even = {0xFF, 0x00};  // repeats over the 8 bytes
    ASSERT_EQ(host.Transport(TLM_WRITE_COMMAND, mem_ + 0x100, twos, even), TLM_OK_RESPONSE);
    std::vector<std::uint8_t> got(8);
    ASSERT_EQ(host.Transport(TLM_READ_COMMAND, mem_ + 0x100, got), TLM_OK_RESPONSE);
    EXPECT_THAT(got, ::testing::ElementsAre(0x22, 0x11, 0x22, 0x11, 0x22, 0x11, 0x22, 0x11));
    std::vector<std::uint8_t> masked(8, 0x99);
    std::array<std::uint8_t, 4> odd = {0x00, 0xFF, 0x00, 0xFF};
    ASSERT_EQ(host.Transport(TLM_READ_COMMAND, mem_ + 0x100, masked, odd), TLM_OK_RESPONSE);
    EXPECT_THAT(masked, ::testing::ElementsAre(0x99, 0x11, 0x99, 0x11, 0x99, 0x11, 0x99, 0x11));
  });
}

TEST_F(Socket, DebugTransportMovesWhatIsInsideAndCountsNothing) {
  InSim([&](Host& host, SystoleDevice&) {
    const std::uint64_t end = config_.memory_bytes;
    const std::uint64_t counted = BytesHost(host);
    std::vector<std::uint8_t> bytes(64, 0x5A);
    EXPECT_EQ(host.Debug(TLM_WRITE_COMMAND, mem_ + 0x40, bytes), 64u);
    EXPECT_EQ(host.Debug(TLM_READ_COMMAND, mem_ + end - 16, bytes), 16u) << "clipped at the end of memory";
    EXPECT_EQ(host.Debug(TLM_READ_COMMAND, mem_ + end, bytes), 0u) << "outside memory";
    EXPECT_EQ(host.Debug(TLM_READ_COMMAND, mem_ + end + 4096, bytes), 0u) << "past the slot's region";
    EXPECT_EQ(host.Debug(TLM_READ_COMMAND, mem_, std::span(bytes).first(0)), 0u) << "zero bytes";
    // Registers can have read side effects (LO latches HI): their debug transport moves nothing.
    EXPECT_EQ(host.Debug(TLM_READ_COMMAND, regs_ + OffsetOf("ID_MAGIC"), std::span(bytes).first(4)), 0u);
    std::vector<std::uint8_t> back(64);
    EXPECT_EQ(host.Debug(TLM_READ_COMMAND, mem_ + 0x40, back), 64u);
    EXPECT_THAT(back, ::testing::Each(0x5A));
    EXPECT_EQ(BytesHost(host), counted) << "debug accesses are not host traffic";
    std::vector<std::uint8_t> real(64);
    ASSERT_EQ(host.Transport(TLM_READ_COMMAND, mem_ + 0x40, real), TLM_OK_RESPONSE);
    EXPECT_EQ(real, back);
    EXPECT_EQ(BytesHost(host), counted + 64) << "b_transport is";
  });
}

TEST_F(Socket, DmiIsGrantedPerPageAndInvalidatedWhenTheModelGoes) {
  tlm::tlm_dmi dmi;
  InSim([&](Host& host, SystoleDevice& device) {
    const std::uint64_t page = model::DeviceMemory::kPageBytes;
    ASSERT_TRUE(host.Dmi(mem_ + page + 0x10, dmi));
    EXPECT_EQ(dmi.get_start_address(), mem_ + page);
    EXPECT_EQ(dmi.get_end_address(), mem_ + 2 * page - 1);
    EXPECT_TRUE(dmi.is_read_write_allowed());
    EXPECT_EQ(dmi.get_read_latency(),
              device.CyclePeriod() * double(SystoleDevice::kMemoryAccessCycles) + LinkModel{}.latency * 2.0);
    // Bytes written through the pointer are device memory.
    dmi.get_dmi_ptr()[0x10] = 0xC3;
    std::array<std::uint8_t, 1> seen{};
    ASSERT_EQ(host.Transport(TLM_READ_COMMAND, mem_ + page + 0x10, seen), TLM_OK_RESPONSE);
    EXPECT_EQ(seen[0], 0xC3);
    // Past the end of memory: denied.
    tlm::tlm_dmi denied;
    EXPECT_FALSE(host.Dmi(mem_ + config_.memory_bytes, denied));
  });
  // Reopening the slot (what closing a systemc device does) withdraws the grant.
  const std::size_t before = [&] {
    std::size_t n = 0;
    platform_.Run([&](Host& host) { n = host.invalidations().size(); });
    return n;
  }();
  TearDown();
  SetUp();
  platform_.Run([&](Host& host) {
    ASSERT_GT(host.invalidations().size(), before);
    const auto [start, end] = host.invalidations().back();
    EXPECT_LE(start, dmi.get_start_address());
    EXPECT_GE(end, dmi.get_end_address());
  });
}

TEST_F(Socket, TransactionsAnnotateTheLinkAndDeviceDelays) {
  InSim([&](Host& host, SystoleDevice& device) {
    const LinkModel link;
    std::array<std::uint8_t, 4> word{};
    sc_core::sc_time start = sc_core::sc_time_stamp();
    ASSERT_EQ(host.Transport(TLM_READ_COMMAND, regs_ + OffsetOf("ID_MAGIC"), word), TLM_OK_RESPONSE);
    EXPECT_EQ(sc_core::sc_time_stamp() - start,
              sc_core::sc_time(4 / link.bytes_per_second, sc_core::SC_SEC) + link.latency +
                  device.CyclePeriod() * double(SystoleDevice::kRegisterAccessCycles) + link.latency);
    std::vector<std::uint8_t> block(4096);
    start = sc_core::sc_time_stamp();
    ASSERT_EQ(host.Transport(TLM_WRITE_COMMAND, mem_, block), TLM_OK_RESPONSE);
    EXPECT_EQ(sc_core::sc_time_stamp() - start,
              sc_core::sc_time(4096 / link.bytes_per_second, sc_core::SC_SEC) + link.latency +
                  device.CyclePeriod() * double(SystoleDevice::kMemoryAccessCycles + 4096 / 32) + link.latency);
  });
}

TEST_F(Socket, AnEmptySlotAnswersAddressErrors) {
  const unsigned slot = slot_;
  TearDown();
  platform_.Run([&](Host& host) {
    std::array<std::uint8_t, 4> word{};
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, Platform::RegisterBase(slot) + OffsetOf("ID_MAGIC"), word),
              TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(host.Transport(TLM_READ_COMMAND, Platform::MemoryBase(slot), word), TLM_ADDRESS_ERROR_RESPONSE);
    tlm::tlm_dmi dmi;
    EXPECT_FALSE(host.Dmi(Platform::MemoryBase(slot), dmi));
  });
  SetUp();
}

TEST(Platform, RefusesMoreDevicesThanSlots) {
  Platform& platform = Platform::Get();
  std::vector<unsigned> slots;
  const Config config = LoadConfig("tiny");
  platform.Run([&](Host&) {
    for (unsigned i = 0; i < Platform::kSlots; ++i) slots.push_back(platform.Insert(std::make_unique<GoldenDeviceModel>(config)));
    EXPECT_THROW(platform.Insert(std::make_unique<GoldenDeviceModel>(config)), std::runtime_error);
    for (unsigned slot : slots) platform.Remove(slot);
  });
}

}  // namespace
}  // namespace systole::systemc
