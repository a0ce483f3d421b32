// Launches through a device server: a long launch does not stall the other clients and is cut
// at its budget; no client takes all device memory by default; on-chip state (unified buffer,
// accumulators) never carries one client's data to another; and faults read the same through
// tcp:// as on the device itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "systole/device.hpp"
#include "systole/server.hpp"
#include "tests/driver/driver_test_util.hpp"

namespace {

using namespace systole;
using isa::Field;
using isa::Opcode;
using ::testing::HasSubstr;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

isa::Instruction Insn(Opcode opcode, std::initializer_list<std::pair<Field, std::uint64_t>> fields) {
  return isa::MakeInstruction(opcode, fields, 0, 0);
}

isa::Instruction Dma(Opcode opcode, isa::MemSpace mem, std::uint64_t dram, std::uint64_t stride,
                     std::uint64_t row, std::uint64_t rows, std::uint64_t elems) {
  return Insn(opcode, {{Field::kMem, static_cast<std::uint64_t>(mem)}, {Field::kDram, dram},
                       {Field::kStride, stride}, {Field::kRow, row}, {Field::kCol, 0},
                       {Field::kRows, rows}, {Field::kElems, elems}});
}

// Writes `program` into a fresh buffer of `device` and launches it there.
struct Launched {
  Buffer text;
  Run run;
};
Launched LaunchWords(Device& device, const std::vector<isa::Instruction>& program) {
  std::vector<std::uint8_t> bytes;
  for (const isa::Instruction& insn : program) {
    const isa::Word word = isa::EncodeOrThrow(insn);
    bytes.insert(bytes.end(), word.begin(), word.end());
  }
  Buffer text = device.Allocate(bytes.size());
  text.Write(bytes);
  Run run = device.Launch(text.address(), static_cast<std::uint32_t>(program.size()));
  return {std::move(text), std::move(run)};
}

// `matmuls` matmuls of 512 rows on `small`: short instructions, since a launch pauses only
// between two, but not so short that vetting a program of seconds takes long.
std::vector<isa::Instruction> LongProgram(std::uint64_t weights, int matmuls) {
  std::vector<isa::Instruction> program = {Insn(Opcode::kLoadWeights, {{Field::kDram, weights},
                                                                      {Field::kStride, 32},
                                                                      {Field::kRows, 16},
                                                                      {Field::kCols, 16}})};
  for (int i = 0; i < matmuls; ++i) {
    program.push_back(Insn(Opcode::kMatmul, {{Field::kUb, 0}, {Field::kAcc, 0}, {Field::kRows, 512},
                                             {Field::kK, 16}, {Field::kPop, i == 0 ? 1u : 0u}}));
  }
  program.push_back(Insn(Opcode::kHalt, {}));
  return program;
}

// What one of LongProgram's matmuls costs the golden model in this build (a sanitizer build is
// tens of times slower than a release one), so that the program below runs twenty times its
// budget (12 s) in every build. The bounds are half of that: loose enough for a loaded 2-core
// machine running a sanitizer build, while without the fix the HELLO waited for the whole
// launch and the launch ran to its end.
milliseconds::rep MicrosPerMatmul() {
  Device local = Device::Open("ref", LoadConfig("small"));
  Buffer weights = local.Allocate(16 * 32);
  constexpr int kSample = 400;
  const auto start = Clock::now();
  Launched sample = LaunchWords(local, LongProgram(weights.address(), kSample));
  EXPECT_TRUE(sample.run.Wait(milliseconds(60000)));
  const auto spent = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  return std::max<milliseconds::rep>(1, spent.count() / kSample);
}

// One client's 14-second launch used to hold the device host's thread: another client's HELLO
// waited for it, and `ref` ignored the launch timeout.
TEST(ServerLaunch, ALongLaunchNeitherStallsOthersNorOutlivesItsBudget) {
  const auto per_matmul = MicrosPerMatmul();
  const milliseconds budget(600);
  const int matmuls = static_cast<int>(std::min<milliseconds::rep>(
      200000, 20 * budget.count() * 1000 / per_matmul));
  const milliseconds half_the_program = 10 * budget;
  ServerOptions options = driver_test::LoopbackServerOptions();
  options.launch_timeout = budget;
  DeviceServer server(OpenRefLink(LoadConfig("small")), options);
  const std::string uri = "tcp://" + server.endpoint();
  Device hog = Device::Open(uri, LoadConfig("small"));
  Buffer weights = hog.Allocate(16 * 32);
  Launched launched = LaunchWords(hog, LongProgram(weights.address(), matmuls));
  const auto start = Clock::now();
  auto outcome = std::async(std::launch::async, [&] {
    try {
      launched.run.Wait(milliseconds(60000));
      return std::string("finished");
    } catch (const RunError& error) {
      return std::string(regs::ErrorName(error.code()));
    }
  });
  std::this_thread::sleep_for(milliseconds(300));  // vetted and running now
  const auto hello = Clock::now();
  Device other = Device::Open(uri, LoadConfig("small"));
  Buffer mine = other.Allocate(4096);
  mine.Write(std::vector<std::uint8_t>(4096, 7));
  EXPECT_EQ(mine.Read(), std::vector<std::uint8_t>(4096, 7));
  EXPECT_LT(Clock::now() - hello, half_the_program)
      << "served while the launch ran (" << matmuls << " matmuls of " << per_matmul << " us)";
  ASSERT_EQ(outcome.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(outcome.get(), "ABORTED");
  EXPECT_LT(Clock::now() - start, budget + half_the_program)
      << "cut at its budget, not run for its " << matmuls * per_matmul / 1000 << " ms";
}

// The default per-client limit (1 GiB) was larger than `small`'s 512 MiB: one client could
// take the whole device. By default a client may hold a quarter of device memory.
TEST(ServerLaunch, NoClientTakesAllDeviceMemoryByDefault) {
  DeviceServer server(OpenRefLink(LoadConfig("small")), driver_test::LoopbackServerOptions());
  Device device = Device::Open("tcp://" + server.endpoint(), LoadConfig("small"));
  const std::uint64_t memory = LoadConfig("small").memory_bytes;
  try {
    device.Allocate(memory / 2);
    FAIL() << "one client took half the device";
  } catch (const DeviceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("NO_MEMORY"));
  }
  Buffer quarter = device.Allocate(memory / 4 - (1 << 20));
  EXPECT_GT(quarter.size(), 0u);
}

// The unified buffer and accumulators kept one client's data for the next client's launch.
// On every device the server can front: the scrub is an ordinary program (stride-0 LOADs of a
// zeroed area), and the RTL's DMA engines must honour a zero stride as the golden model does.
class ServerScrub : public testing::TestWithParam<std::string> {};

TEST_P(ServerScrub, OnChipStateDoesNotCarryOverToAnotherClient) {
  std::unique_ptr<Link> link;
  try {
    link = OpenLink(GetParam(), LoadConfig("tiny"));
  } catch (const LinkError& error) {
    if (std::string(error.what()).find("no simulated devices") == std::string::npos) throw;
    GTEST_SKIP() << "this build has no Verilated core";
  }
  DeviceServer server(std::move(link), driver_test::LoopbackServerOptions());
  const std::string uri = "tcp://" + server.endpoint();
  constexpr std::uint64_t kUbRows = 16, kAccRows = 8;
  const auto ub = isa::MemSpace::kUb;
  const auto acc = isa::MemSpace::kAcc;
  {
    Device alice = Device::Open(uri, LoadConfig("tiny"));
    Buffer secret = alice.Allocate(kUbRows * 4 + kAccRows * 16);
    secret.Write(std::vector<std::uint8_t>(secret.size(), 0x5A));
    Launched loaded = LaunchWords(alice, {Dma(Opcode::kLoad, ub, secret.address(), 4, 0, kUbRows, 4),
                                          Dma(Opcode::kLoad, acc, secret.address() + kUbRows * 4,
                                              16, 0, kAccRows, 4),
                                          Insn(Opcode::kHalt, {})});
    ASSERT_TRUE(loaded.run.Wait(milliseconds(5000)));
  }
  Device mallory = Device::Open(uri, LoadConfig("tiny"));
  Buffer out = mallory.Allocate(kUbRows * 4 + kAccRows * 16);
  Launched stored = LaunchWords(mallory, {Dma(Opcode::kStore, ub, out.address(), 4, 0, kUbRows, 4),
                                          Dma(Opcode::kStore, acc, out.address() + kUbRows * 4,
                                              16, 0, kAccRows, 4),
                                          Insn(Opcode::kHalt, {})});
  ASSERT_TRUE(stored.run.Wait(milliseconds(5000)));
  EXPECT_EQ(out.Read(), std::vector<std::uint8_t>(out.size(), 0));
}

INSTANTIATE_TEST_SUITE_P(Devices, ServerScrub, testing::Values("ref", "rtl", "rtl?memory=ideal"),
                         [](const auto& param) {
                           return param.param == "ref" ? "Ref" : param.param == "rtl" ? "RtlHbm" : "RtlIdeal";
                         });

// The server refuses a launch that would leave the client's memory, but a device checks
// instructions in order, and within one instruction its operands before the range: through
// tcp:// the error must be the device's own (code and instruction), not the refusal's.
struct FaultCase {
  const char* name;
  // `inside`: an address in the client's buffer.
  std::vector<isa::Instruction> (*program)(std::uint64_t inside);
};

void ExpectSameFault(const FaultCase& fault) {
  SCOPED_TRACE(fault.name);
  auto run = [&](Device& device) -> std::pair<regs::ErrorCode, std::uint64_t> {
    Buffer data = device.AllocateAt(0x20000, 4096);
    Launched launched = LaunchWords(device, fault.program(data.address()));
    try {
      launched.run.Wait(milliseconds(5000));
      return {regs::ErrorCode::kNone, 0};
    } catch (const RunError& error) {
      return {error.code(), (error.fault_pc() - launched.text.address()) / 32};
    }
  };
  Device ref = Device::Open("ref", LoadConfig("tiny"));
  DeviceServer server(OpenRefLink(LoadConfig("tiny")), driver_test::LoopbackServerOptions());
  Device remote = Device::Open("tcp://" + server.endpoint(), LoadConfig("tiny"));
  const auto direct = run(ref);
  const auto through = run(remote);
  EXPECT_NE(direct.first, regs::ErrorCode::kNone);
  EXPECT_EQ(regs::ErrorName(through.first), regs::ErrorName(direct.first));
  EXPECT_EQ(through.second, direct.second) << "faulting instruction";
}

constexpr std::uint64_t kNotMine = 0x80000;   // device memory, but not the client's
constexpr std::uint64_t kBeyond = 0x200000;   // past tiny's 1 MiB of device memory
constexpr auto ub = isa::MemSpace::kUb;

TEST(ServerLaunch, FaultsReadTheSameThroughTcpAsOnTheDevice) {
  for (const FaultCase& fault : std::initializer_list<FaultCase>{
           {"SHAPE at 0, then a load outside the client's memory",
            [](std::uint64_t inside) {
              return std::vector{Dma(Opcode::kLoad, ub, inside, 4, 0, 1, 9),  // 9 > row width
                                 Dma(Opcode::kLoad, ub, kNotMine, 4, 0, 1, 4),
                                 Insn(Opcode::kHalt, {})};
            }},
           {"UB_RANGE and not the client's memory in one instruction",
            [](std::uint64_t) {
              return std::vector{Dma(Opcode::kLoad, ub, kNotMine, 4, 1020, 8, 4),
                                 Insn(Opcode::kHalt, {})};
            }},
           {"a good load, then a store past device memory",
            [](std::uint64_t inside) {
              return std::vector{Dma(Opcode::kLoad, ub, inside, 4, 0, 4, 4),
                                 Dma(Opcode::kStore, ub, kBeyond, 4, 0, 4, 4),
                                 Insn(Opcode::kHalt, {})};
            }},
       }) {
    ExpectSameFault(fault);
  }
}

}  // namespace
