// rtl/host/systole_host_dma against a C++ reference copy: random transfers (lengths, alignments,
// directions, memory latency and back-pressure) byte-exact over the whole of both memories (so
// nothing outside a range is touched), every error code, and the throughput with fast memories.
// Two builds: the defaults (bursts of 8 beats, 32-word FIFO) and a small one (4, 8) that makes
// back-pressure between the two sides frequent.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "Vvl_host_dma.h"
#include "Vvl_host_dma_small.h"
#include "tests/rtl/host/dma_bench.hpp"
#include "tests/rtl/util/rtl_test_util.hpp"

namespace {

using namespace systole::rtl::test;
using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kHostBytes = 96 * 1024;
constexpr std::size_t kDeviceBytes = 65536;  // MEM_BYTES_LO of both builds (CMakeLists.txt)

template <class Model>
struct Case {
  using M = Model;
  static constexpr unsigned kBurst = std::is_same_v<Model, Vvl_host_dma> ? 8 : 4;
};

template <class C>
class HostDmaTest : public ::testing::Test {
 protected:
  using Bench = DmaBench<typename C::M>;
  std::unique_ptr<Bench> Make(std::uint64_t seed, const Waveform& wave) {
    return std::make_unique<Bench>(seed, wave.Path(), kHostBytes, kDeviceBytes, C::kBurst);
  }
};
using Cases = ::testing::Types<Case<Vvl_host_dma>, Case<Vvl_host_dma_small>>;
TYPED_TEST_SUITE(HostDmaTest, Cases);

// The reference: the range copied, everything else as it was.
void Copy(Bytes& host, Bytes& device, std::uint64_t host_address, std::uint64_t device_address,
          std::uint32_t length, bool to_host) {
  auto* h = host.data() + (host_address - kHostBase);
  auto* d = device.data() + device_address;
  if (to_host) std::copy_n(d, length, h);
  else std::copy_n(h, length, d);
}

TYPED_TEST(HostDmaTest, RandomTransfersAreByteExact) {
  const std::uint64_t seed = Seed();
  Waveform wave(false);
  auto bench = this->Make(seed, wave);
  std::mt19937_64 rng(seed ^ 0x5eed);
  std::uint32_t total = 0;
  const int kTransfers = 400;
  for (int i = 0; i < kTransfers; ++i) {
    bench->stall_pct = static_cast<unsigned>(rng() % 60);
    // Mostly short (the ends of a transfer are the hard part), some across many pages.
    const std::uint32_t length = rng() % 4 == 0 ? static_cast<std::uint32_t>(rng() % 12000)
                                                : static_cast<std::uint32_t>(rng() % 300);
    const std::uint64_t device_address = rng() % (kDeviceBytes - length + 1);
    std::uint64_t host_address = kHostBase + rng() % (kHostBytes - length - 32);
    host_address = (host_address & ~31ull) | (device_address & 31);
    const bool to_host = rng() % 2 != 0;
    Bytes host = bench->host, device = bench->device;
    Copy(host, device, host_address, device_address, length, to_host);
    const std::uint64_t strobed = bench->device_strobe_bytes;
    SCOPED_TRACE(::testing::Message() << "transfer " << i << ": " << length << " bytes, host 0x"
                                      << std::hex << host_address << ", device 0x"
                                      << device_address << (to_host ? " to host" : " to device"));
    bench->Start(host_address, device_address, length, to_host);
    bench->Finish(200000);
    const DmaStatus status = bench->Status();
    ASSERT_TRUE(status.done);
    ASSERT_FALSE(status.error) << "code " << status.code;
    ASSERT_TRUE(bench->Irq());
    ASSERT_EQ(bench->device_strobe_bytes - strobed, length);
    ASSERT_TRUE(bench->host == host) << "host memory differs from the reference";
    ASSERT_TRUE(bench->device == device) << "device memory differs from the reference";
    bench->WriteReg(kRegStatus, 2);  // DONE cleared: the interrupt falls
    ASSERT_FALSE(bench->Irq());
    total += length;
  }
  EXPECT_EQ(bench->ReadReg(kRegCount), static_cast<std::uint32_t>(kTransfers));
  EXPECT_EQ(bench->ReadReg(kRegBytes), total);
  // Several requests were in flight on each side at some point.
  EXPECT_GE(bench->max_reads_in_flight, 2u);
  EXPECT_GE(bench->max_device_in_flight, 2u);
}

TYPED_TEST(HostDmaTest, RefusedAtStartMoveNothing) {
  const std::uint64_t seed = Seed();
  Waveform wave;
  auto bench = this->Make(seed, wave);
  const Bytes host = bench->host, device = bench->device;
  struct Bad {
    std::uint64_t host, device;
    std::uint32_t length, code;
  };
  const Bad bad[] = {
      {kHostBase + 1, 2, 64, kErrMisaligned},  // the two addresses in different byte lanes
      {kHostBase + 32, 16, 16, kErrMisaligned},
      {kHostBase, kDeviceBytes - 32, 33, kErrRange},  // one byte past the end
      {kHostBase, kDeviceBytes, 1, kErrRange},
      {kHostBase, 1ull << 32, 32, kErrRange},  // DEV_HI
      {kHostBase, 0, 0xffffffe0u, kErrRange},
  };
  for (const Bad& b : bad) {
    for (bool to_host : {false, true}) {
      bench->Start(b.host, b.device, b.length, to_host);
      const DmaStatus status = bench->Status();
      EXPECT_FALSE(status.busy);
      EXPECT_TRUE(status.done && status.error);
      EXPECT_EQ(status.code, b.code) << std::hex << b.host << " " << b.device << " " << b.length;
    }
  }
  EXPECT_EQ(bench->device_strobe_bytes, 0u);
  EXPECT_TRUE(bench->host == host);
  EXPECT_TRUE(bench->device == device);
  EXPECT_EQ(bench->ReadReg(kRegCount), 0u);
  // A zero-length transfer is done at once, moves nothing, and counts.
  bench->Start(kHostBase + 5, 5, 0, false);
  DmaStatus status = bench->Status();
  EXPECT_TRUE(status.done && !status.error && !status.busy);
  EXPECT_EQ(bench->ReadReg(kRegCount), 1u);
  // The last exact fit is accepted.
  bench->Start(kHostBase + 1, kDeviceBytes - 31, 31, true);
  bench->Finish(10000);
  status = bench->Status();
  EXPECT_TRUE(status.done && !status.error);
  EXPECT_EQ(bench->device_strobe_bytes, 31u);
}

// A host bus error mid-transfer: the error code, the words before the failing one delivered,
// nothing after it nor outside the range written; then the engine works again.
TYPED_TEST(HostDmaTest, HostBusErrors) {
  const std::uint64_t seed = Seed();
  Waveform wave;
  auto bench = this->Make(seed, wave);
  const std::uint64_t host_address = kHostBase + 4096 - 200 + 7;  // unaligned, across a page
  const std::uint64_t device_address = 0x1000 - 200 + 7;
  const std::uint32_t length = 3000;
  const std::uint64_t fault = (host_address + 1000) & ~31ull;  // the first failing word
  bench->fault_begin = fault;
  bench->fault_end = fault + 32;
  for (bool to_host : {false, true}) {
    SCOPED_TRACE(to_host ? "device to host" : "host to device");
    const Bytes host = bench->host, device = bench->device;
    bench->Start(host_address, device_address, length, to_host);
    bench->Finish(100000);
    const DmaStatus status = bench->Status();
    EXPECT_TRUE(status.done && status.error);
    EXPECT_EQ(status.code, to_host ? kErrHostWrite : kErrHostRead);
    const Bytes& src = to_host ? device : host;
    const Bytes& before = to_host ? host : device;
    const Bytes& after = to_host ? bench->host : bench->device;
    const std::uint64_t dst_base = to_host ? host_address - kHostBase : device_address;
    const std::uint64_t src_base = to_host ? device_address : host_address - kHostBase;
    const std::uint64_t good = fault - host_address;  // bytes before the failing word
    for (std::uint64_t i = 0; i < after.size(); ++i) {
      const bool in_range = i >= dst_base && i < dst_base + length;
      const std::uint64_t k = i - dst_base;
      if (!in_range) {
        ASSERT_EQ(after[i], before[i]) << "outside the range, at " << i;
      } else if (k < good) {
        ASSERT_EQ(after[i], src[src_base + k]) << "before the failing word, at +" << k;
      } else if (!to_host || k < good + 32) {
        // Host → device stops at the failing beat; to host, the failing word is not written
        // and bursts already asked for may still land.
        ASSERT_EQ(after[i], before[i]) << "at or after the failing word, at +" << k;
      } else {
        ASSERT_TRUE(after[i] == before[i] || after[i] == src[src_base + k]) << "at +" << k;
      }
    }
    bench->WriteReg(kRegStatus, 6);
    const DmaStatus cleared = bench->Status();
    EXPECT_FALSE(cleared.done || cleared.error);
  }
  // The same transfers away from the fault succeed.
  bench->fault_begin = bench->fault_end = 0;
  for (bool to_host : {false, true}) {
    Bytes host = bench->host, device = bench->device;
    Copy(host, device, host_address, device_address, length, to_host);
    bench->Start(host_address, device_address, length, to_host);
    bench->Finish(100000);
    EXPECT_FALSE(bench->Status().error);
    EXPECT_TRUE(bench->host == host && bench->device == device);
  }
}

// With memories that never stall, the engine's own rate: one 32-byte word per cycle is the
// ceiling of both ports.
TYPED_TEST(HostDmaTest, ThroughputWithFastMemories) {
  const std::uint64_t seed = Seed();
  Waveform wave(false);
  auto bench = this->Make(seed, wave);
  bench->fast = true;
  const std::uint32_t length = 32768;
  for (bool to_host : {false, true}) {
    bench->Start(kHostBase, 0, length, to_host);
    bench->Finish(100000);
    ASSERT_FALSE(bench->Status().error);
    const std::uint32_t cycles = bench->ReadReg(kRegCycles);
    const double rate = static_cast<double>(length) / cycles;
    std::cout << "[ measured ] " << (to_host ? "device -> host" : "host -> device") << ": "
              << length << " bytes in " << cycles << " cycles = " << rate << " bytes/cycle\n";
    EXPECT_GT(rate, 24.0);
  }
}

}  // namespace
