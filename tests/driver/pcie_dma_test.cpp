// DMA through pcie+sim (the Verilated systole_pcie_top with a simulated host memory): large
// transfers go through the engine (its counters and the core's PERF_BYTES_HOST say so), small
// ones through the BAR2 window; programs whose inputs and outputs move by DMA give what usb+sim
// (the same core and device-memory model behind the USB bridge) gives, every counter included;
// the IOVA allocator; and the engine's refusals and host bus errors as the link reports them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <numeric>
#include <random>

#include "arch/regs/regmap.hpp"
#include "driver/sim/sim_links.hpp"
#include "systole/device.hpp"
#include "systole/pcie_transport.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "tests/driver/generated_program_run.hpp"
#include "tests/rtl/core/program_generator.hpp"  // tests/rtl/core: random legal programs

namespace {

using namespace systole;
using ::testing::HasSubstr;

std::uint64_t BytesHost(Link& link) {
  const std::uint32_t lo = link.ReadRegister(regs::OffsetOf("PERF_BYTES_HOST_LO"));  // latches HI
  return std::uint64_t{link.ReadRegister(regs::OffsetOf("PERF_BYTES_HOST_HI"))} << 32 | lo;
}

TEST(PcieSimDma, LargeTransfersGoThroughTheEngineSmallOnesThroughTheWindow) {
  auto link = OpenLink("pcie+sim", LoadConfig("tiny"));
  ASSERT_EQ(link->ReadRegister(pcie::dma::kCount), 0u);
  // 100 000 bytes at an odd address: two chunks of the 64 KiB buffer each way.
  std::vector<std::uint8_t> data(100000);
  std::iota(data.begin(), data.end(), std::uint8_t{7});
  link->WriteMemory(0x1235, data);
  std::vector<std::uint8_t> back(data.size());
  link->ReadMemory(0x1235, back);
  EXPECT_EQ(back, data);
  EXPECT_EQ(link->ReadRegister(pcie::dma::kCount), 4u);
  EXPECT_EQ(link->ReadRegister(pcie::dma::kBytes), 200000u);
  EXPECT_EQ(BytesHost(*link), 200000u);  // the engine strobes exactly the bytes asked for
  // Below the threshold: the window, not the engine; the bytes still count on the host port.
  std::vector<std::uint8_t> small(pcie::kDmaThresholdBytes - 1, 0x5a);
  link->WriteMemory(0x1234, small);
  std::vector<std::uint8_t> small_back(small.size());
  link->ReadMemory(0x1234, small_back);
  EXPECT_EQ(small_back, small);
  EXPECT_EQ(link->ReadRegister(pcie::dma::kCount), 4u);
  EXPECT_EQ(BytesHost(*link), 200000u + 2 * small.size());
  // What the window wrote, the engine reads back (and the other way round).
  std::vector<std::uint8_t> mixed(4096);
  link->ReadMemory(0x1000, mixed);
  EXPECT_EQ(mixed[0x234], 0x5a);
  EXPECT_EQ(mixed[0x235 + small.size()], data[small.size()]);
  EXPECT_EQ(link->ReadRegister(pcie::dma::kCount), 5u);
}

struct PathOutcome {
  std::vector<std::vector<std::uint8_t>> outputs;
  Counters counters;
};

PathOutcome RunOn(const char* uri, const image::Program& source) {
  Device device = Device::Open(uri, LoadConfig("tiny"));
  Program program = device.Load(source);
  for (std::size_t i = 0; i < source.inputs.size(); ++i) {
    std::vector<std::uint8_t> bytes(source.inputs[i].Bytes());
    for (std::size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<std::uint8_t>(k * 5 % 13);
    program.WriteInput(i, bytes);
  }
  device.ClearCounters();
  EXPECT_TRUE(program.Launch().Wait(std::chrono::milliseconds(60000))) << uri;
  PathOutcome outcome;
  for (std::size_t i = 0; i < source.outputs.size(); ++i) {
    outcome.outputs.push_back(program.ReadOutput(i));
  }
  outcome.counters = device.ReadCounters();
  return outcome;
}

TEST(PcieSimDma, ProgramsGiveWhatUsbSimGivesEveryCounterIncluded) {
  const auto conv = assembly::AssembleFile(driver_test::Example("conv_pool_tiny.s"));
  for (const auto& [name, source] :
       {std::pair{"conv_pool_tiny.s", conv}, std::pair{"scale 3", driver_test::ScaleProgram(3)}}) {
    SCOPED_TRACE(name);
    const PathOutcome usb = RunOn("usb+sim", source);
    const PathOutcome pcie = RunOn("pcie+sim", source);
    EXPECT_EQ(pcie.outputs, usb.outputs);
    EXPECT_EQ(pcie.counters, usb.counters);
    EXPECT_GT(usb.counters["INSNS"], 0u);
  }
}

// A random legal program (tests/rtl/core/program_generator.hpp) over 64 KiB of data: the data
// and the memory read back afterwards move by DMA on pcie+sim.
struct DmaFootprint : driver_test::Footprint {
  std::uint32_t dma_transfers = 0;  // pcie+sim: the engine's transfer count afterwards
};

DmaFootprint RunGeneratedOn(const char* uri, const std::vector<std::uint8_t>& data,
                          const std::vector<isa::Instruction>& program) {
  Device device = Device::Open(uri, LoadConfig("tiny"));
  DmaFootprint f{driver_test::RunGenerated(device, data, program)};
  if (std::string_view(uri) == "pcie+sim") {
    f.dma_transfers = device.link().ReadRegister(pcie::dma::kCount);
  }
  return f;
}

TEST(PcieSimDma, GeneratedProgramMovesItsDataByDmaAndMatchesUsbSim) {
  std::mt19937_64 rng(0x5eed);
  std::vector<std::uint8_t> data(rtl::test::kDataBytes);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  const auto program = rtl::test::GenerateProgram(LoadConfig("tiny"), rng, 24).instructions;
  const DmaFootprint usb = RunGeneratedOn("usb+sim", data, program);
  const DmaFootprint pcie = RunGeneratedOn("pcie+sim", data, program);
  EXPECT_EQ(pcie.data, usb.data);
  EXPECT_EQ(pcie.dump, usb.dump);
  EXPECT_EQ(pcie.counters, usb.counters);
  EXPECT_GT(usb.counters["INSNS"], 0u);
  EXPECT_GE(pcie.dma_transfers, 3u);  // the data in; the data and the dump out
}

// The engine's rate inside pcie+sim (host memory answering after PcieSim::kHostLatency
// cycles, device memory after the rtl device's 8): DMA_CYCLES of one 64 KiB - 32 transfer.
TEST(PcieSimDma, ThroughputIsReported) {
  auto link = OpenLink("pcie+sim", LoadConfig("tiny"));
  std::vector<std::uint8_t> data(pcie::kDmaBufferBytes - 32, 1);
  for (bool read : {false, true}) {
    if (read) link->ReadMemory(0, data);
    else link->WriteMemory(0, data);
    const std::uint32_t cycles = link->ReadRegister(pcie::dma::kCycles);
    const double rate = static_cast<double>(data.size()) / cycles;
    std::cout << "[ measured ] pcie+sim DMA " << (read ? "device -> host" : "host -> device")
              << ": " << data.size() << " bytes in " << cycles << " cycles = " << rate
              << " bytes/cycle\n";
    EXPECT_GT(rate, 16.0);
  }
}

TEST(PcieSimDma, IovaAllocatorMapsPagesAndFaultsAfterFree) {
  const Config config = LoadConfig("tiny");
  auto function = pcie::OpenSimFunction(config);
  auto a = function->AllocateDma(5000);
  auto b = function->AllocateDma(4096);
  ASSERT_TRUE(a && b);
  EXPECT_GE(a->BusAddress(), 1ull << 32);  // above 4 GiB: the engine's high half is used
  EXPECT_EQ(a->BusAddress() % 4096, 0u);
  EXPECT_GE(b->BusAddress(), a->BusAddress() + 8192);  // 5000 bytes take two pages
  const std::uint64_t freed = a->BusAddress();
  a.reset();
  auto c = function->AllocateDma(100);
  EXPECT_EQ(c->BusAddress(), freed);  // first fit reuses the hole
  c.reset();
  // A transfer from the freed (unmapped) address: the host bus answers with an error.
  function->Write32(pcie::dma::kHostLo, static_cast<std::uint32_t>(freed));
  function->Write32(pcie::dma::kHostHi, static_cast<std::uint32_t>(freed >> 32));
  function->Write32(pcie::dma::kDeviceLo, 0);
  function->Write32(pcie::dma::kDeviceHi, 0);
  function->Write32(pcie::dma::kLength, 256);
  function->Write32(pcie::dma::kCtrl, pcie::dma::kCtrlStart);
  std::uint32_t status = 0;
  for (int i = 0; i < 100 && ((status = function->Read32(pcie::dma::kStatus)) & 1) != 0; ++i) {
    function->Pause();
  }
  EXPECT_EQ(status & 7, pcie::dma::kStatusDone | pcie::dma::kStatusError);
  EXPECT_EQ(pcie::dma::ErrorCode(status), 3u);
}

// BAR0: the core's registers below 0x800, the engine's 64 bytes from 0x800, zeros elsewhere.
TEST(PcieSimDma, Bar0DecodesTheCoreAndTheEngine) {
  auto function = pcie::OpenSimFunction(LoadConfig("tiny"));
  EXPECT_EQ(function->Read32(regs::OffsetOf("ID_MAGIC")), regs::kMagic);
  function->Write32(pcie::dma::kHostLo, 0x12345678);
  function->Write32(pcie::dma::kDeviceHi, 0xffffffff);
  EXPECT_EQ(function->Read32(pcie::dma::kHostLo), 0x12345678u);
  EXPECT_EQ(function->Read32(pcie::dma::kDeviceHi), 0xffffu);  // 48-bit device addresses
  EXPECT_EQ(function->Read32(pcie::dma::kStatus), 0u);
  EXPECT_EQ(function->Read32(regs::OffsetOf("ID_MAGIC")), regs::kMagic);  // not aliased
  for (std::uint32_t offset : {0x7FCu, 0x840u, 0xFFCu}) {
    function->Write32(offset, 0xdeadbeef);
    EXPECT_EQ(function->Read32(offset), 0u) << std::hex << offset;
  }
  EXPECT_EQ(function->Read32(pcie::dma::kHostLo), 0x12345678u);
}

// The BAR2 window and the engine share the core's host port (systole_mem_arbiter in the top):
// window bursts while a transfer runs each way land, and so does the transfer.
TEST(PcieSimDma, WindowAndEngineShareTheHostPort) {
  auto function = pcie::OpenSimFunction(LoadConfig("tiny"));
  auto buffer = function->AllocateDma(32768);
  std::vector<std::uint8_t> device_side(32768);
  std::iota(device_side.begin(), device_side.end(), std::uint8_t{11});
  for (std::size_t i = 0; i < device_side.size(); i += 256) {
    function->WriteWindow(0x8000 + i, std::span(device_side).subspan(i, 256));
  }
  std::iota(buffer->Bytes().begin(), buffer->Bytes().end(), std::uint8_t{200});
  for (bool to_host : {false, true}) {
    SCOPED_TRACE(to_host ? "device to host" : "host to device");
    const std::uint64_t bus = buffer->BusAddress();
    const std::uint64_t device = to_host ? 0x8000 : 0x10000;
    function->Write32(pcie::dma::kHostLo, static_cast<std::uint32_t>(bus));
    function->Write32(pcie::dma::kHostHi, static_cast<std::uint32_t>(bus >> 32));
    function->Write32(pcie::dma::kDeviceLo, static_cast<std::uint32_t>(device));
    function->Write32(pcie::dma::kDeviceHi, 0);
    function->Write32(pcie::dma::kLength, 32768);
    function->Write32(pcie::dma::kCtrl, pcie::dma::kCtrlStart | (to_host ? 2u : 0u));
    // Window traffic elsewhere while the engine runs: every burst is answered in between.
    int bursts_while_busy = 0;
    std::vector<std::uint8_t> pattern(256), back(256);
    for (unsigned i = 0; (function->Read32(pcie::dma::kStatus) & 1) != 0; ++i) {
      ASSERT_LT(i, 1000u);
      std::fill(pattern.begin(), pattern.end(), static_cast<std::uint8_t>(i));
      function->WriteWindow(0x40000 + 256 * (i % 16), pattern);
      function->ReadWindow(0x40000 + 256 * (i % 16), back);
      ASSERT_EQ(back, pattern);
      ++bursts_while_busy;
    }
    EXPECT_GT(bursts_while_busy, 2);
    EXPECT_EQ(function->Read32(pcie::dma::kStatus) & 7, pcie::dma::kStatusDone);
    if (to_host) {
      EXPECT_TRUE(std::equal(device_side.begin(), device_side.end(), buffer->Bytes().begin()));
    } else {
      std::vector<std::uint8_t> landed(256);
      for (std::size_t i = 0; i < 32768; i += 256) {
        function->ReadWindow(0x10000 + i, landed);
        const auto expected = buffer->Bytes().subspan(i, 256);
        ASSERT_TRUE(std::equal(landed.begin(), landed.end(), expected.begin())) << i;
      }
    }
  }
}

// A function whose DMA buffer claims a bus address the IOMMU never mapped: the link names the
// transfer and the engine's error.
class BadBusAddress final : public pcie::PcieFunction {
 public:
  BadBusAddress() : inner_(pcie::OpenSimFunction(LoadConfig("tiny"))) {}
  std::uint32_t Read32(std::uint32_t offset) override { return inner_->Read32(offset); }
  void Write32(std::uint32_t offset, std::uint32_t v) override { inner_->Write32(offset, v); }
  void WriteWindow(std::uint64_t a, std::span<const std::uint8_t> b) override {
    inner_->WriteWindow(a, b);
  }
  void ReadWindow(std::uint64_t a, std::span<std::uint8_t> b) override { inner_->ReadWindow(a, b); }
  std::uint64_t RegisterBytes() const override { return inner_->RegisterBytes(); }
  std::uint64_t WindowBytes() const override { return inner_->WindowBytes(); }
  void Pause() override { inner_->Pause(); }
  std::string Access() const override { return "a test's unmapped DMA buffers"; }
  std::unique_ptr<pcie::DmaBuffer> AllocateDma(std::size_t bytes) override {
    struct Unmapped final : pcie::DmaBuffer {
      explicit Unmapped(std::size_t n) : bytes(n) {}
      std::span<std::uint8_t> Bytes() override { return bytes; }
      std::uint64_t BusAddress() const override { return 0x7000'0000'0000ull; }
      std::vector<std::uint8_t> bytes;
    };
    return std::make_unique<Unmapped>(bytes);
  }

 private:
  std::unique_ptr<pcie::PcieFunction> inner_;
};

TEST(PcieSimDma, HostBusErrorsBecomeLinkErrors) {
  auto link = pcie::MakePcieLink(std::make_unique<BadBusAddress>(), "pcie+sim");
  std::vector<std::uint8_t> data(4096);
  try {
    link->WriteMemory(64, data);
    FAIL() << "no error";
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), HasSubstr("DMA write of 4096 bytes at device 0x40"));
    EXPECT_THAT(error.what(), HasSubstr("HOST_READ"));
  }
  try {
    link->ReadMemory(64, data);
    FAIL() << "no error";
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), HasSubstr("HOST_WRITE"));
  }
}

}  // namespace
