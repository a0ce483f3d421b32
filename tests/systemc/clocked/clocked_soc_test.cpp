// The Verilated SoC clocked by an sc_clock through the TLM-to-bus bridge (ClockedSoc,
// sim/systemc/clocked_soc.hpp): whole programs against `ref` and `rtl`, cycle accuracy against
// the clock, a clock at another period, and the slice-based `rtl` model on the same program.
//
// SystemC elaborates once per process and cannot start again after sc_stop: every test builds
// its own platform and runs it once, so run one test per process (CTest does; by hand, use
// --gtest_filter). A configuration the build did not Verilate is skipped, saying so.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "sim/rtl/rtl_device.hpp"
#include "sim/systemc/clocked_soc.hpp"
#include "sim/systemc/socket_rules.hpp"
#include "sim/systemc/systole_device.hpp"
#include "systole/device.hpp"
#include "tests/driver/driver_test_util.hpp"
#include "tests/systemc/clocked/testbench.hpp"
#include "toolchain/asm/assembler.hpp"

namespace systole::systemc {
namespace {

using testbench::EdgeCounter;
using testbench::Functional;
using testbench::ProgramRunner;
using testbench::RunRecord;
using testbench::StopWhenDone;

// Rising edges from the one that samples the DOORBELL write (D) to the one after which irq is
// high, beyond PERF_CYCLES (rtl/control/systole_regs.sv, systole_sequencer.sv): edge D queues
// the launch; edge D+1 starts it (the sequencer leaves IDLE); PERF_CYCLES counts the edges at
// which the sequencer is busy, D+2 … E, E being the edge at which it returns to IDLE and raises
// launch_end; edge E+1 sets IRQ_STATUS.DONE, and irq = IRQ_STATUS & IRQ_ENABLE. So the
// testbench counts (E+1) − D = PERF_CYCLES + 2 edges.
constexpr std::uint64_t kDoorbellToIrqEdgesBeyondCycles = 2;

image::Program Assemble(const std::string& file) {
  return assembly::AssembleFile(std::filesystem::path(SYSTOLE_SOURCE_DIR) / "examples" / "asm" / file);
}

bool RtlBuilt(const std::string& config) {
  for (const std::string& built : rtl::BuiltRtlConfigs()) {
    if (built == config) return true;
  }
  return false;
}

// The program run once on the device `uri`, which is gone when this returns (before any other
// model is built: Verilator 5.006 can hang destroying a model while another of the same is
// alive, tcp_parity_test.cpp; ClockedSoc itself is safe to destroy).
driver_test::Outcome RunOnceOn(const std::string& uri, const Config& config, const image::Program& program) {
  Device device = Device::Open(uri, config);
  return driver_test::RunOnce(device, program, 1);
}

// What RunClocked saw: the runner's record, the SoC's own cycle count, the testbench's edge
// count and the wall-clock seconds of sc_start.
struct ClockedRun {
  RunRecord record;
  std::uint64_t soc_cycles = 0, edges = 0;
  double wall_seconds = 0;
  std::string failure;  // the SoC's, if its model threw
};

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The platform of docs/SYSTEMC.md's "The clocked bridge": an sc_clock at the configuration's
// period, the bridge, the runner on its sockets and irq, and the testbench's edge counter.
ClockedRun RunClocked(const image::Program& program, const Config& config, unsigned launches) {
  sc_core::sc_clock clock("clock", ClockPeriodOf(config));
  sc_core::sc_signal<bool> irq("irq");
  ClockedSoc soc("soc", config);
  EdgeCounter counter("counter");
  StopWhenDone stop;
  ProgramRunner cpu("cpu", program, stop, &counter, launches);
  soc.clk.bind(clock);
  counter.clk.bind(clock);
  soc.irq.bind(irq);
  cpu.irq.bind(irq);
  cpu.registers.bind(soc.registers);
  cpu.memory.bind(soc.memory);
  EXPECT_EQ(soc.ConfiguredPeriod(), clock.period());
  const auto start = std::chrono::steady_clock::now();
  sc_core::sc_start();
  return {cpu.record, soc.Cycles(), counter.edges, Seconds(std::chrono::steady_clock::now() - start), soc.failure()};
}

void ExpectCycleAccurate(const ClockedRun& run, const sc_core::sc_time& period, const std::string& what) {
  const RunRecord& r = run.record;
  const std::uint64_t cycles = r.counters["CYCLES"];
  EXPECT_GT(cycles, 0u) << what;
  EXPECT_EQ(r.irq_edge - r.doorbell_edge, cycles + kDoorbellToIrqEdgesBeyondCycles) << what;
  EXPECT_EQ(r.irq_time - r.doorbell_time, period * static_cast<double>(r.irq_edge - r.doorbell_edge)) << what;
  // Every edge clocked the RTL once (the clock runs on after the runner is done, until the
  // simulation stops), and time passed by edges only: the first edge is at 0, and the runner
  // finished in a delta cycle of its last access's edge.
  EXPECT_EQ(run.soc_cycles, run.edges) << what;
  EXPECT_EQ(r.end_time, period * static_cast<double>(r.end_edge - 1)) << what;
}

class ClockedExample : public ::testing::TestWithParam<std::string> {};

TEST_P(ClockedExample, MatchesRefAndRtlAndTakesOneEdgePerCycle) {
  const image::Program program = Assemble(GetParam());
  ASSERT_TRUE(program.config.has_value());
  const Config config = LoadConfig(*program.config);
  if (!RtlBuilt(config.name)) GTEST_SKIP() << "no Verilated SoC for " << config.name << " in this build";
  const driver_test::Outcome on_ref = RunOnceOn("ref", config, program);
  const driver_test::Outcome on_rtl = RunOnceOn("rtl", config, program);  // gone before the bridge's SoC

  const sc_core::sc_time period = ClockPeriodOf(config);
  const ClockedRun run = RunClocked(program, config, 1);
  ASSERT_TRUE(run.record.ok) << run.record.error << " " << run.failure;
  EXPECT_EQ(regs::Extract(run.record.status, regs::FieldOf("STATUS", "BUSY")), 0u);
  EXPECT_EQ(regs::Extract(run.record.status, regs::FieldOf("STATUS", "ERROR")), 0u);
  EXPECT_EQ(run.record.outputs, on_ref.outputs);
  EXPECT_EQ(run.record.outputs, on_rtl.outputs);
  EXPECT_EQ(Functional(run.record.counters), Functional(on_ref.counters));
  EXPECT_EQ(Functional(run.record.counters), Functional(on_rtl.counters));
  ExpectCycleAccurate(run, period, GetParam());
  std::printf("%s on %s: CYCLES ref %llu, rtl %llu, clocked bridge %llu; doorbell→irq %llu edges, %s; "
              "%llu cycles in %.3f s of wall time = %.0f cycles/s\n",
              GetParam().c_str(), config.name.c_str(),
              static_cast<unsigned long long>(on_ref.counters["CYCLES"]),
              static_cast<unsigned long long>(on_rtl.counters["CYCLES"]),
              static_cast<unsigned long long>(run.record.counters["CYCLES"]),
              static_cast<unsigned long long>(run.record.irq_edge - run.record.doorbell_edge),
              (run.record.irq_time - run.record.doorbell_time).to_string().c_str(),
              static_cast<unsigned long long>(run.soc_cycles), run.wall_seconds,
              static_cast<double>(run.soc_cycles) / run.wall_seconds);
}

// Every assembly example; those of a configuration the build did not Verilate skip.
INSTANTIATE_TEST_SUITE_P(Examples, ClockedExample,
                         ::testing::Values("adam_step_accvec.s", "conv_pool_tiny.s", "gemm_tiny.s", "mlp_bf16.s",
                                           "mlp_int8.s", "softmax_layernorm_bf16.s"),
                         [](const auto& param) { return param.param.substr(0, param.param.find('.')); });

// An example for a configuration the build Verilated (tiny's where there is one).
std::string ExampleForABuiltConfig() {
  for (const char* file : {"gemm_tiny.s", "mlp_bf16.s", "mlp_int8.s"}) {
    if (RtlBuilt(*Assemble(file).config)) return file;
  }
  return "";
}

// The same platform twice in one simulation, one SoC on a clock three times slower: every
// cycle happens alike (the initiator acts only at edges), so outputs, every counter, CYCLES and
// the stalls included, and edge counts are equal, and every time is exactly three times longer.
TEST(ClockedSoc, AClockAtAnotherPeriodScalesSimulatedTimeAndNothingElse) {
  const std::string file = ExampleForABuiltConfig();
  if (file.empty()) GTEST_SKIP() << "no Verilated SoC for tiny, small or small-int8 in this build";
  const image::Program program = Assemble(file);
  const Config config = LoadConfig(*program.config);
  const sc_core::sc_time fast_period = ClockPeriodOf(config), slow_period = fast_period * 3.0;

  sc_core::sc_clock fast_clock("fast_clock", fast_period), slow_clock("slow_clock", slow_period);
  sc_core::sc_signal<bool> fast_irq("fast_irq"), slow_irq("slow_irq");
  ClockedSoc fast_soc("fast_soc", config), slow_soc("slow_soc", config);
  EdgeCounter fast_counter("fast_counter"), slow_counter("slow_counter");
  StopWhenDone stop{2};
  ProgramRunner fast_cpu("fast_cpu", program, stop, &fast_counter), slow_cpu("slow_cpu", program, stop, &slow_counter);
  fast_soc.clk.bind(fast_clock);
  fast_counter.clk.bind(fast_clock);
  slow_soc.clk.bind(slow_clock);
  slow_counter.clk.bind(slow_clock);
  fast_soc.irq.bind(fast_irq);
  fast_cpu.irq.bind(fast_irq);
  slow_soc.irq.bind(slow_irq);
  slow_cpu.irq.bind(slow_irq);
  fast_cpu.registers.bind(fast_soc.registers);
  fast_cpu.memory.bind(fast_soc.memory);
  slow_cpu.registers.bind(slow_soc.registers);
  slow_cpu.memory.bind(slow_soc.memory);
  sc_core::sc_start();

  const RunRecord& fast = fast_cpu.record;
  const RunRecord& slow = slow_cpu.record;
  ASSERT_TRUE(fast.ok) << fast.error << " " << fast_soc.failure();
  ASSERT_TRUE(slow.ok) << slow.error << " " << slow_soc.failure();
  EXPECT_EQ(slow.outputs, fast.outputs);
  EXPECT_EQ(slow.counters, fast.counters);
  EXPECT_EQ(slow.doorbell_edge, fast.doorbell_edge);
  EXPECT_EQ(slow.irq_edge, fast.irq_edge);
  EXPECT_EQ(slow.end_edge, fast.end_edge);
  EXPECT_EQ(slow.doorbell_time, fast.doorbell_time * 3.0);
  EXPECT_EQ(slow.irq_time, fast.irq_time * 3.0);
  EXPECT_EQ(slow.end_time, fast.end_time * 3.0);
  ExpectCycleAccurate({fast, fast_soc.Cycles(), fast_counter.edges, 0, ""}, fast_period, "fast");
  ExpectCycleAccurate({slow, slow_soc.Cycles(), slow_counter.edges, 0, ""}, slow_period, "slow");
  std::printf("%s on %s: launch ends %s after the doorbell at %s, %s at %s\n", file.c_str(), config.name.c_str(),
              (fast.irq_time - fast.doorbell_time).to_string().c_str(), fast_period.to_string().c_str(),
              (slow.irq_time - slow.doorbell_time).to_string().c_str(), slow_period.to_string().c_str());
}

// Launches per speed measurement: enough cycles that elaboration and loading do not dominate.
constexpr unsigned kSpeedLaunches = 100;

// One example per configuration, for the speed measurements.
class SpeedExample : public ::testing::TestWithParam<std::string> {};
const auto kSpeedExamples = ::testing::Values("gemm_tiny.s", "mlp_bf16.s", "mlp_int8.s");
std::string SpeedName(const ::testing::TestParamInfo<std::string>& param) {
  return param.param.substr(0, param.param.find('.'));
}

// The simulation speed of the clocked bridge: one process switch and one model evaluation per
// edge, the clock's own processes besides (docs/SYSTEMC.md quotes the figures printed here and
// by the slice-based test below).
using ClockedSpeed = SpeedExample;

TEST_P(ClockedSpeed, OverRepeatedLaunches) {
  const std::string file = GetParam();
  const image::Program program = Assemble(file);
  const Config config = LoadConfig(*program.config);
  if (!RtlBuilt(config.name)) GTEST_SKIP() << "no Verilated SoC for " << config.name << " in this build";
  const driver_test::Outcome on_ref = RunOnceOn("ref", config, program);
  const ClockedRun run = RunClocked(program, config, kSpeedLaunches);
  ASSERT_TRUE(run.record.ok) << run.record.error << " " << run.failure;
  EXPECT_EQ(run.record.outputs, on_ref.outputs);
  EXPECT_EQ(Functional(run.record.counters), Functional(on_ref.counters)) << "the last launch's";
  ExpectCycleAccurate(run, ClockPeriodOf(config), file);
  std::printf("%s on %s, %u launches, clocked bridge: %llu cycles in %.3f s of wall time = %.0f cycles/s\n",
              file.c_str(), config.name.c_str(), kSpeedLaunches, static_cast<unsigned long long>(run.soc_cycles),
              run.wall_seconds, static_cast<double>(run.soc_cycles) / run.wall_seconds);
}

// The slice-based `rtl` model (the driver's systemc?model=rtl) behind a SystoleDevice, same
// runner, same program: the same outputs and functional counters as `ref`, with its annotated
// timing (a launch takes at least its CYCLES of simulated time), and its speed (printed).
using SliceBasedRtlModel = SpeedExample;

TEST_P(SliceBasedRtlModel, RunsTheSameProgramAsTheClockedBridge) {
  const std::string file = GetParam();
  const image::Program program = Assemble(file);
  const Config config = LoadConfig(*program.config);
  if (!RtlBuilt(config.name)) GTEST_SKIP() << "no Verilated SoC for " << config.name << " in this build";
  const driver_test::Outcome on_ref = RunOnceOn("ref", config, program);
  SystoleDevice tpu("tpu", MakeDeviceModel("rtl", config));
  sc_core::sc_signal<bool> irq("irq");
  StopWhenDone stop;
  ProgramRunner cpu("cpu", program, stop, nullptr, kSpeedLaunches);
  tpu.irq_o.bind(irq);
  cpu.irq.bind(irq);
  cpu.registers.bind(tpu.registers);
  cpu.memory.bind(tpu.memory);
  const auto start = std::chrono::steady_clock::now();
  sc_core::sc_start();
  const double wall = Seconds(std::chrono::steady_clock::now() - start);

  ASSERT_TRUE(cpu.record.ok) << cpu.record.error << " " << tpu.failure();
  EXPECT_EQ(cpu.record.outputs, on_ref.outputs);
  EXPECT_EQ(Functional(cpu.record.counters), Functional(on_ref.counters)) << "the last launch's";
  const std::uint64_t cycles = cpu.record.counters["CYCLES"];
  EXPECT_GE(cpu.record.irq_time - cpu.record.doorbell_time, ClockPeriodOf(config) * static_cast<double>(cycles));
  // Every cycle the SoC ran became one period of simulated time, so time ÷ period counts them.
  const double simulated_cycles = cpu.record.end_time / ClockPeriodOf(config);
  std::printf("%s on %s, %u launches, slice-based rtl model: %.0f cycles of simulated time in %.3f s of wall "
              "time = %.0f cycles/s\n",
              file.c_str(), config.name.c_str(), kSpeedLaunches, simulated_cycles, wall, simulated_cycles / wall);
}

INSTANTIATE_TEST_SUITE_P(Examples, ClockedSpeed, kSpeedExamples, SpeedName);
INSTANTIATE_TEST_SUITE_P(Examples, SliceBasedRtlModel, kSpeedExamples, SpeedName);

}  // namespace
}  // namespace systole::systemc
