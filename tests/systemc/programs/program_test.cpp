// Whole programs through the real driver code path: Device::Open("systemc") puts a golden-model
// device in the process's SystemC platform, and every register and memory access of the driver
// and the runtime crosses the platform's TLM interconnect to the device's sockets. The same
// programs run on `ref`; outputs must be identical bit for bit and every counter equal (the
// device behind the sockets is the golden model, so even CYCLES and the stalls agree).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <filesystem>

#include "arch/regs/regmap.hpp"
#include "sim/model/golden_model.hpp"
#include "tests/model/model_test_util.hpp"
#include "tests/util/test_seed.hpp"
#include "sim/systemc/hls_device_model.hpp"
#include "sim/systemc/platform.hpp"
#ifdef SYSTOLE_SYSTEMC_RTL
#include "sim/rtl/rtl_device.hpp"
#endif
#include "systole/device.hpp"
#include "systole/link.hpp"
#include "tests/compiler/compiler_test_util.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "tests/systemc/programs/compare.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::systemc {
namespace {

using compiler::testing::CorpusFile;
using compiler::testing::ExampleFile;
using compiler::testing::FirstBitDifference;
using compiler::testing::ReadText;
using std::chrono::milliseconds;

using driver_test::Outcome;
using testing::ExpectMatchesRef;
using testing::Model;
using driver_test::RunOnce;  // loads, fills the inputs with a pattern of the seed, runs, reads back

class AsmExample : public ::testing::TestWithParam<std::string> {};

TEST_P(AsmExample, MatchesRefOutputsAndEveryCounter) {
  const auto source =
      assembly::AssembleFile(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm" / GetParam());
  ASSERT_TRUE(source.config.has_value());
  const Config config = LoadConfig(*source.config);
  Device ref = Device::Open("ref", config);
  Device systemc = Device::Open("systemc", config);
  EXPECT_EQ(systemc.uri(), "systemc");
  EXPECT_EQ(systemc.config().name, config.name) << "identity registers read through the sockets";
  for (int seed : {1, 2}) {
    const Outcome expected = RunOnce(ref, source, seed);
    const Outcome got = RunOnce(systemc, source, seed);
    EXPECT_EQ(got.outputs, expected.outputs) << GetParam() << " seed " << seed;
    EXPECT_EQ(got.counters, expected.counters) << GetParam() << " seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, AsmExample,
                         ::testing::Values("conv_pool_tiny.s", "mlp_bf16.s", "mlp_int8.s"),
                         [](const auto& param) { return param.param.substr(0, param.param.find('.')); });

class CompiledModel : public ::testing::TestWithParam<Model> {};

TEST_P(CompiledModel, MatchesRefBitForBit) { ExpectMatchesRef(GetParam(), "systemc", true); }

// Every example and every corpus program but ResNet-50 (tests/systemc/resnet_test.cpp, in
// `make test-long`); the shared corpus lives beside the repository (../shared/corpus).
INSTANTIATE_TEST_SUITE_P(
    Programs, CompiledModel,
    ::testing::ValuesIn(testing::AllPrograms()), testing::ProgramName);

// ---- systemc?model=hls: the HLS MXU kernel as the platform's matrix unit -----------------------
// The golden model computes every MATMUL through hls::MxuRow (sim/systemc/hls_device_model.hpp);
// all else is the golden model's, so outputs and every counter, cycles included, equal ref's.

TEST_P(AsmExample, MatchesRefThroughTheHlsKernel) {
  const auto source =
      assembly::AssembleFile(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm" / GetParam());
  const Config config = LoadConfig(*source.config);
  Device ref = Device::Open("ref", config);
  Device hls = Device::Open("systemc?model=hls", config);
  for (int seed : {1, 2}) {
    const Outcome expected = RunOnce(ref, source, seed);
    const Outcome got = RunOnce(hls, source, seed);
    EXPECT_EQ(got.outputs, expected.outputs) << GetParam() << " seed " << seed;
    EXPECT_EQ(got.counters, expected.counters) << GetParam() << " seed " << seed;
  }
}

class CompiledModelOnHls : public ::testing::TestWithParam<Model> {};

TEST_P(CompiledModelOnHls, MatchesRefBitForBit) { ExpectMatchesRef(GetParam(), "systemc?model=hls", true); }

INSTANTIATE_TEST_SUITE_P(Programs, CompiledModelOnHls, ::testing::ValuesIn(testing::AllPrograms()),
                         testing::ProgramName);

// The kernel is really the one computing: random MATMULs (random bit patterns: NaNs, infinities
// and subnormals included on bf16) give the golden model's own accumulators through it, it
// counts every input row, and a kernel that errs (one more added to every accumulator) shows.
class HlsKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(HlsKernel, ComputesEveryMatmulRowAsTheGoldenModelDoes) {
  using namespace model::testing;
  const Config config = LoadConfig(GetParam());
  const std::uint64_t seed = test::Seed();
  std::mt19937_64 rng(seed);
  const std::uint64_t elem = config.dtype == DType::kBf16 ? 2 : 1;
  const std::uint64_t row_bytes = config.rows * elem, rows = 24;
  std::vector<std::uint8_t> inputs(rows * row_bytes), weights(config.rows * config.cols * elem);
  for (auto& b : inputs) b = static_cast<std::uint8_t>(rng());
  for (auto& b : weights) b = static_cast<std::uint8_t>(rng());
  const std::uint64_t k = 1 + rng() % config.rows;
  const std::uint64_t weights_at = kDataAddress + 0x8000;
  const std::vector<isa::Instruction> program = {
      Dma(isa::Opcode::kLoad, isa::MemSpace::kUb, kDataAddress, row_bytes, 0, 0, rows, config.rows),
      LoadWeights(weights_at, config.cols * elem, config.rows, config.cols),
      LoadWeights(weights_at, config.cols * elem, config.rows, config.cols),
      Matmul(0, 0, rows, config.rows, true, false),
      Matmul(0, 0, rows, k, true, true),  // K < R: the kernel's zero inputs, and accumulation
      Halt()};
  auto run = [&](const model::MatmulKernel& kernel) {
    model::GoldenModel golden(config);
    if (kernel) golden.SetMatmulKernel(kernel);
    golden.WriteMemory(kDataAddress, inputs);
    golden.WriteMemory(weights_at, weights);
    RunOk(golden, program);
    std::vector<std::uint32_t> acc;
    for (std::uint64_t r = 0; r < rows; ++r) {
      const auto row = golden.AccRow(r);
      acc.insert(acc.end(), row.begin(), row.end());
    }
    EXPECT_EQ(golden.Counter("MACS"), rows * (config.rows + k) * config.cols);
    return acc;
  };
  auto counted = std::make_shared<std::uint64_t>(0);
  const std::vector<std::uint32_t> own = run(nullptr);
  EXPECT_EQ(run(HlsMatmulKernel(config, counted)), own) << "k " << k;
  EXPECT_EQ(*counted, 2 * rows);
  const model::MatmulKernel hls = HlsMatmulKernel(config);
  EXPECT_NE(run([&](const model::MatmulOperands& op) {
              hls(op);
              for (std::uint64_t i = 0; i < op.rows * config.cols; ++i) op.acc[i] += 1;
            }),
            own);
}

INSTANTIATE_TEST_SUITE_P(Configs, HlsKernel, ::testing::Values("small", "small-int8", "tiny"),
                         [](const auto& param) {
                           std::string name = param.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(HlsKernelSizes, RefusesAConfigurationWithoutGeneratedSizes) {
  Config config = LoadConfig("small");
  config.name = "my-board";
  EXPECT_THAT([&] { HlsMatmulKernel(config); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("'my-board'")));
  config = LoadConfig("small");
  config.cols = 8;
  EXPECT_THAT([&] { HlsMatmulKernel(config); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("out of date")));
}

// A faulting program stops with the same error and fault address as on ref, and the device
// takes the next launch.
TEST(SystemcDevice, FaultsLikeRef) {
  const auto bad = assembly::Assemble(R"(.config tiny
matmul ub=0, acc=0, rows=2, k=4
halt
)",
                                      "bad.s");
  const Config config = LoadConfig("tiny");
  for (const char* uri : {"ref", "systemc"}) {
    Device device = Device::Open(uri, config);
    Program program = device.Load(bad);
    try {
      program.Launch().Wait(milliseconds(10000));
      ADD_FAILURE() << uri << ": no fault";
    } catch (const RunError& error) {
      EXPECT_EQ(error.code(), regs::ErrorCode::kNoWeights) << uri;
      EXPECT_EQ(error.fault_pc(), program.text_address()) << uri;
    }
    const auto good = assembly::AssembleFile(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm" /
                                             "conv_pool_tiny.s");
    EXPECT_NO_THROW(RunOnce(device, good, 1)) << uri;
  }
}

// The link refuses accesses outside device memory, naming the device and the range, and the
// device keeps working.
TEST(SystemcDevice, RefusesAccessesOutsideItsMemory) {
  const Config config = LoadConfig("tiny");
  const auto link = OpenLink("systemc", config);
  std::vector<std::uint8_t> bytes(128, 1);
  try {
    link->WriteMemory(config.memory_bytes - 64, bytes);
    FAIL();
  } catch (const LinkError& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr("device 'systemc'"));
    EXPECT_THAT(error.what(), ::testing::HasSubstr("outside the"));
  }
  EXPECT_THROW(link->ReadRegister(0xFFC), LinkError) << "no register there: TLM_ADDRESS_ERROR_RESPONSE";
  EXPECT_NO_THROW(link->WriteMemory(config.memory_bytes - 64, std::span(bytes).first(64)));
  EXPECT_EQ(link->ReadRegister(regs::OffsetOf("PERF_BYTES_HOST_LO")), 64u);
}

// A wait that times out leaves the launch running in simulated time; the next wait finishes it.
TEST(SystemcDevice, AWaitThatTimesOutCanBeResumed) {
  const auto source = assembly::AssembleFile(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm" /
                                             "mlp_bf16.s");
  const Config config = LoadConfig(*source.config);
  Device ref = Device::Open("ref", config);
  const Outcome expected = RunOnce(ref, source, 3);
  Device device = Device::Open("systemc", config);
  Program program = device.Load(source);
  for (std::size_t i = 0; i < source.inputs.size(); ++i) {
    std::vector<std::uint8_t> bytes(source.inputs[i].Bytes());
    for (std::size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<std::uint8_t>((k * 7 + 3) % 11);  // RunOnce's pattern
    program.WriteInput(i, bytes);
  }
  device.ClearCounters();
  systole::Run run = program.Launch();
  run.Wait(milliseconds(0));  // may or may not finish: the slice runs at least until the next check
  EXPECT_TRUE(run.Wait(milliseconds(60000)));
  for (std::size_t i = 0; i < source.outputs.size(); ++i) EXPECT_EQ(program.ReadOutput(i), expected.outputs[i]);
  EXPECT_EQ(device.ReadCounters(), expected.counters);
}

#ifndef SYSTOLE_SYSTEMC_RTL
// Without the Verilated RTL in the build, the rtl model is refused, saying why.
TEST(SystemcDevice, RtlModelIsRefusedWithAClearMessage) {
  try {
    Device::Open("systemc?model=rtl", LoadConfig("tiny"));
    FAIL();
  } catch (const DeviceError& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr("needs a build with SYSTOLE_RTL=ON"));
  }
}
#else
// ---- systemc?model=rtl: the Verilated SoC behind the same sockets -----------------------------

// The functional counters (as between ref and rtl, tcp_parity_test.cpp): what was computed and
// moved. CYCLES and the stalls are the RTL's own timing, and behind the HBM controller they
// depend on the DRAM's state when a launch starts (refresh timer, open rows), i.e. on how many
// cycles the host's accesses and polls took before.
Counters Functional(Counters counters) {
  std::erase_if(counters.values, [](const auto& counter) {
    return counter.first == "CYCLES" || counter.first.starts_with("STALL_");
  });
  return counters;
}

bool RtlBuilt(const std::string& config) {
  for (const std::string& built : rtl::BuiltRtlConfigs()) {
    if (built == config) return true;
  }
  return false;
}

class AsmExampleOnRtl : public ::testing::TestWithParam<std::string> {};

TEST_P(AsmExampleOnRtl, MatchesRefAndRtl) {
  const auto source =
      assembly::AssembleFile(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm" / GetParam());
  const Config config = LoadConfig(*source.config);
  if (!RtlBuilt(config.name)) GTEST_SKIP() << "no Verilated SoC for " << config.name << " in this build";
  Outcome on_ref, on_rtl, on_systemc;
  {
    Device ref = Device::Open("ref", config);
    on_ref = RunOnce(ref, source, 1);
  }
  {  // one Verilated SoC of a configuration alive at a time (Verilator 5.006, tcp_parity_test.cpp)
    Device rtl = Device::Open("rtl", config);
    on_rtl = RunOnce(rtl, source, 1);
  }
  {
    Device systemc = Device::Open("systemc?model=rtl", config);
    EXPECT_EQ(systemc.config().name, config.name) << "identity registers read from the RTL";
    on_systemc = RunOnce(systemc, source, 1);
  }
  EXPECT_EQ(on_systemc.outputs, on_ref.outputs);
  EXPECT_EQ(on_systemc.outputs, on_rtl.outputs);
  EXPECT_EQ(Functional(on_systemc.counters), Functional(on_ref.counters));
  EXPECT_EQ(Functional(on_systemc.counters), Functional(on_rtl.counters));
  EXPECT_GT(on_systemc.counters["CYCLES"], 0u);
  std::printf("%s: CYCLES ref %llu, rtl %llu, systemc?model=rtl %llu\n", GetParam().c_str(),
              static_cast<unsigned long long>(on_ref.counters["CYCLES"]),
              static_cast<unsigned long long>(on_rtl.counters["CYCLES"]),
              static_cast<unsigned long long>(on_systemc.counters["CYCLES"]));
}

INSTANTIATE_TEST_SUITE_P(Examples, AsmExampleOnRtl,
                         ::testing::Values("conv_pool_tiny.s", "mlp_bf16.s", "mlp_int8.s"),
                         [](const auto& param) { return param.param.substr(0, param.param.find('.')); });

class CompiledModelOnRtl : public ::testing::TestWithParam<Model> {};

TEST_P(CompiledModelOnRtl, MatchesRefBitForBit) {
  if (!RtlBuilt(GetParam().config)) {
    GTEST_SKIP() << "no Verilated SoC for " << GetParam().config << " in this build";
  }
  ExpectMatchesRef(GetParam(), "systemc?model=rtl", false);
}

// make run's network and an int8 layer; the rest of the examples and the corpus on the RTL
// platform are in long/ (minutes).
INSTANTIATE_TEST_SUITE_P(Programs, CompiledModelOnRtl,
                         ::testing::Values(Model{"small_cnn_f32.hlo", "small", true},
                                           Model{"s8_dense_bias.hlo", "small-int8", true}),
                         [](const auto& param) { return param.param.file.substr(0, param.param.file.find('.')); });

// A launch on the RTL takes its cycles of simulated time at the configured clock, and the
// access times are the SoC's own bus cycles.
TEST(SystemcRtl, SimulatedTimeFollowsTheClock) {
  const Config config = LoadConfig("tiny");
  if (!RtlBuilt("tiny")) GTEST_SKIP() << "no Verilated tiny SoC in this build";
  Device device = Device::Open("systemc?model=rtl", config);
  const auto source = assembly::AssembleFile(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm" /
                                             "conv_pool_tiny.s");
  Program program = device.Load(source);
  device.ClearCounters();
  sc_core::sc_time start, end;
  Platform::Get().Run([&](Host&) { start = sc_core::sc_time_stamp(); });
  ASSERT_TRUE(program.Launch().Wait(milliseconds(60000)));
  Platform::Get().Run([&](Host&) { end = sc_core::sc_time_stamp(); });
  const std::uint64_t cycles = device.ReadCounters()["CYCLES"];
  EXPECT_GE(end - start, sc_core::sc_time(static_cast<double>(cycles) / config.clock_mhz, sc_core::SC_US));
}
#endif

}  // namespace
}  // namespace systole::systemc
