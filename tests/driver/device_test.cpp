// The Device API on the golden model: identity, buffers, programs, runs, faults, counters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "systole/device.hpp"
#include "tests/driver/driver_test_util.hpp"

namespace {

using namespace systole;
using ::testing::HasSubstr;
using std::chrono::milliseconds;

Device OpenTiny() { return Device::Open("ref", LoadConfig("tiny")); }

TEST(Device, ReportsTheConfigurationItWasBuiltFrom) {
  const Device device = Device::Open("ref", LoadConfig("small-int8"));
  EXPECT_EQ(device.uri(), "ref");
  EXPECT_EQ(device.config().name, "small-int8");
  EXPECT_EQ(device.config().rows, 16u);
  EXPECT_EQ(device.config().dtype, DType::kInt8);
}

TEST(Device, UnknownAndUnbuiltUrisNameTheDevice) {
  try {
    Device::Open("systemc", LoadConfig("tiny"));
    FAIL();
  } catch (const DeviceError& error) {
    EXPECT_EQ(error.device(), "systemc");
    EXPECT_EQ(error.operation(), "open");
    // driver_tests does not link systole_systemc_link: the program has no SystemC platform.
    EXPECT_THAT(error.what(), HasSubstr("no SystemC platform"));
  }
  try {  // no such board on this machine: the open fails and says so
    Device::Open("usb://1234:5678", LoadConfig("tiny"));
    FAIL();
  } catch (const DeviceError& error) {
    EXPECT_EQ(error.device(), "usb://1234:5678");
    EXPECT_THAT(error.what(), HasSubstr("1234:5678"));
  }
  // The rtl device's one option is checked before anything is built (also without RTL).
  for (const auto& [uri, cause] : {std::pair{"rtl?memory=fast", "unknown memory 'fast' (expected "
                                                                 "hbm or ideal)"},
                                   std::pair{"rtl?cache=on", "unknown option"},
                                   // so is the systemc device's
                                   std::pair{"systemc?model=verilog", "unknown model 'verilog' (expected golden, hls or rtl)"},
                                   std::pair{"systemc?quantum=1", "unknown option"}}) {
    try {
      Device::Open(uri, LoadConfig("tiny"));
      FAIL() << uri;
    } catch (const DeviceError& error) {
      EXPECT_EQ(error.device(), uri);
      EXPECT_THAT(error.what(), HasSubstr(cause));
    }
  }
  EXPECT_THROW(Device::Open("floppy://a", LoadConfig("tiny")), DeviceError);
  EXPECT_THROW(Device::Open("tcp://nohostport", LoadConfig("tiny")), DeviceError);
}

TEST(Device, BuffersAreFreedWithTheirLastHandle) {
  Device device = OpenTiny();
  std::uint64_t first = 0;
  {
    Buffer a = device.Allocate(100);
    Buffer copy = a;
    first = a.address();
    std::vector<std::uint8_t> bytes(100, 7);
    copy.Write(bytes);
    EXPECT_EQ(a.Read(), bytes);
    EXPECT_NE(device.Allocate(10).address(), first);
  }
  EXPECT_EQ(device.Allocate(10).address(), first) << "freed, so first fit finds it again";
  Buffer fixed = device.AllocateAt(0x4000, 64);
  EXPECT_EQ(fixed.address(), 0x4000u);
  EXPECT_THROW(device.AllocateAt(0x4000, 64), DeviceError);
}

TEST(Device, BufferAccessPastTheEndIsRefused) {
  Device device = OpenTiny();
  Buffer buffer = device.Allocate(16);
  std::vector<std::uint8_t> bytes(8);
  EXPECT_NO_THROW(buffer.Write(bytes, 8));
  try {
    buffer.Write(bytes, 9);
    FAIL();
  } catch (const DeviceError& error) {
    EXPECT_EQ(error.operation(), "write buffer");
    EXPECT_THAT(error.what(), HasSubstr("overrun"));
  }
  EXPECT_THROW(Buffer().Read(), DeviceError);
}

TEST(Device, LoadsAndRunsAProgram) {
  Device device = OpenTiny();
  Program program = device.Load(driver_test::ScaleProgram(3));
  EXPECT_EQ(program.text_address(), 0u) << "a private device keeps the program's addresses";
  const auto x = driver_test::ScaleInput(1);
  program.WriteInput("X", x);
  device.ClearCounters();
  systole::Run run = program.Launch();
  EXPECT_TRUE(run.Wait(milliseconds(1000)));
  EXPECT_TRUE(run.Done());
  EXPECT_EQ(program.ReadOutput("Y"), driver_test::ScaleExpected(3, x));
  const Counters counters = device.ReadCounters();
  EXPECT_EQ(counters["INSNS"], 6u);
  EXPECT_EQ(counters["MACS"], 2u * 4 * 4);
  EXPECT_EQ(counters["BYTES_HOST"], 8u) << "the output read";
  EXPECT_THROW(counters["NOPE"], std::out_of_range);
}

TEST(Device, ProgramsThatCollideAreMoved) {
  Device device = OpenTiny();
  Program a = device.Load(driver_test::ScaleProgram(2));
  Program b = device.Load(driver_test::ScaleProgram(5));
  EXPECT_NE(a.text_address(), b.text_address());
  EXPECT_NE(a.DeviceAddress(0x3000), b.DeviceAddress(0x3000));
  const auto x = driver_test::ScaleInput(4);
  a.WriteInput(0, x);
  b.WriteInput(0, x);
  a.Launch().Wait(milliseconds(1000));
  b.Launch().Wait(milliseconds(1000));
  EXPECT_EQ(a.ReadOutput(0), driver_test::ScaleExpected(2, x));
  EXPECT_EQ(b.ReadOutput(0), driver_test::ScaleExpected(5, x));
}

TEST(Device, AFaultIsARunErrorAndIsCleared) {
  Device device = OpenTiny();
  Program bad = device.Load(assembly::Assemble(
      ".config tiny\nload mem=ub, dram=0, stride=4, row=1023, rows=2, elems=4\nhalt\n"));
  systole::Run run = bad.Launch();
  try {
    run.Wait(milliseconds(1000));
    FAIL();
  } catch (const RunError& error) {
    EXPECT_EQ(error.code(), regs::ErrorCode::kUbRange);
    EXPECT_EQ(error.fault_pc(), bad.text_address());
    EXPECT_THAT(error.what(), HasSubstr("device ref: run: stopped with UB_RANGE"));
  }
  EXPECT_THROW(run.Wait(milliseconds(0)), RunError) << "the outcome is kept";
  Program good = device.Load(driver_test::ScaleProgram(1));
  good.WriteInput(0, driver_test::ScaleInput(0));
  EXPECT_TRUE(good.Launch().Wait(milliseconds(1000))) << "the error was cleared";
}

TEST(Device, OneRunAtATime) {
  Device device = OpenTiny();
  Program program = device.Load(driver_test::ScaleProgram(1));
  program.WriteInput(0, driver_test::ScaleInput(0));
  systole::Run first = program.Launch();
  EXPECT_THROW(program.Launch(), DeviceError);
  first.Wait(milliseconds(1000));
  EXPECT_NO_THROW(program.Launch().Wait(milliseconds(1000)));
}

// A run dropped before a wait saw it end (its wait failed or gave up) may still be running:
// a new launch would queue behind it, and it would run on whatever was written since.
TEST(Device, ALaunchWaitsUntilADroppedRunHasEnded) {
  Device device = OpenTiny();
  Program program = device.Load(driver_test::ScaleProgram(3));
  const auto x = driver_test::ScaleInput(2);
  program.WriteInput(0, x);
  { systole::Run dropped = program.Launch(); }  // the golden model runs a launch while waited for
  EXPECT_THAT([&] { program.Launch(); },
              ::testing::ThrowsMessage<DeviceError>(HasSubstr("an earlier launch was not waited for to its end")));
  EXPECT_TRUE(device.link().WaitForInterrupt(milliseconds(1000)));  // it ends meanwhile
  systole::Run next = program.Launch();
  EXPECT_TRUE(next.Wait(milliseconds(1000)));
  EXPECT_EQ(program.ReadOutput(0), driver_test::ScaleExpected(3, x));
}

TEST(Device, InputSizesAndNamesAreChecked) {
  Device device = OpenTiny();
  Program program = device.Load(driver_test::ScaleProgram(1));
  EXPECT_THROW(program.WriteInput(0, std::vector<std::uint8_t>(7)), DeviceError);
  EXPECT_THROW(program.WriteInput("Z", std::vector<std::uint8_t>(8)), DeviceError);
  EXPECT_THROW(program.ReadOutput(3), DeviceError);
  EXPECT_THROW(program.DeviceAddress(0x9000), DeviceError);
}

// Bound tensors (Device::Load with bindings): one program's output is another's input without a
// trip through the host, and an input and an output bound to one buffer update it in place.
TEST(Device, BoundTensorsLiveInTheCallersBuffers) {
  Device device = OpenTiny();
  Buffer middle = device.Allocate(8);
  const std::vector<TensorBinding> out_to_middle{{"Y", middle}};
  const std::vector<TensorBinding> in_from_middle{{"X", middle}};
  Program twice = device.Load(driver_test::ScaleProgram(2), out_to_middle);
  Program thrice = device.Load(driver_test::ScaleProgram(3), in_from_middle);
  const auto x = driver_test::ScaleInput(2);
  twice.WriteInput("X", x);
  twice.Launch().Wait(milliseconds(1000));
  EXPECT_EQ(middle.Read(), driver_test::ScaleExpected(2, x)) << "the output went to the buffer";
  EXPECT_EQ(twice.ReadOutput("Y"), middle.Read()) << "ReadOutput of a bound tensor reads its buffer";
  thrice.Launch().Wait(milliseconds(1000));
  EXPECT_EQ(thrice.ReadOutput("Y"), driver_test::ScaleExpected(6, x));

  Buffer state = device.Allocate(64);  // larger than the tensor: its first 8 bytes are used
  const std::vector<TensorBinding> in_place{{"X", state}, {"Y", state}};
  Program scale = device.Load(driver_test::ScaleProgram(-1), in_place);
  state.Write(x);
  scale.Launch().Wait(milliseconds(1000));
  scale.Launch().Wait(milliseconds(1000));
  std::vector<std::uint8_t> first(8);
  state.Read(first);
  EXPECT_EQ(first, x) << "negated twice, in place";
  scale.Launch().Wait(milliseconds(1000));
  state.Read(first);
  EXPECT_EQ(first, driver_test::ScaleExpected(-1, x));
  // Every program still runs where it was, and freeing a program leaves the buffer alone.
  twice = Program();
  EXPECT_EQ(middle.Read(), driver_test::ScaleExpected(2, x));
}

TEST(Device, BindingsThatDoNotFitAreRefusedNamingTheTensor) {
  Device device = OpenTiny();
  Device other = OpenTiny();
  const auto refused = [&](std::vector<TensorBinding> bindings, const std::string& message) {
    EXPECT_THAT([&] { device.Load(driver_test::ScaleProgram(1), bindings); },
                ::testing::ThrowsMessage<DeviceError>(HasSubstr(message)));
  };
  refused({{"Z", device.Allocate(8)}}, "device ref: load program: binding 'Z': the program has no input or output "
                                       "of that name");
  refused({{"X", device.Allocate(8)}, {"X", device.Allocate(8)}}, "binding 'X': bound twice");
  refused({{"Y", Buffer()}}, "binding 'Y': an empty Buffer handle");
  refused({{"Y", other.Allocate(8)}}, "binding 'Y': the buffer belongs to another device (ref)");
  refused({{"Y", device.Allocate(7)}}, "binding 'Y': the tensor takes 8 bytes, the buffer has 7");
  // A data segment inside a bound tensor, and an instruction reaching past one.
  const image::Program overlapping = assembly::Assemble(R"(.config tiny
.data  W, at=0x2000, dtype=int8
.values 1,2,3,4
.input  X, at=0x2000, dtype=int8, shape=2x4
.output Y, at=0x3000, dtype=int8, shape=1x4
load mem=ub, dram=X, stride=4, row=0, rows=2, elems=4
store mem=ub, dram=Y, stride=4, row=0, rows=2, elems=4
halt
)",
                                                        "overlapping.s");
  std::vector<TensorBinding> x_bound{{"X", device.Allocate(8)}};
  EXPECT_THAT([&] { device.Load(overlapping, x_bound); },
              ::testing::ThrowsMessage<DeviceError>(
                  HasSubstr("data segment 'W' lies in a bound tensor: loading it would overwrite the caller's buffer")));
  std::vector<TensorBinding> y_bound{{"Y", device.Allocate(4)}};
  EXPECT_THAT([&] { device.Load(overlapping, y_bound); },
              ::testing::ThrowsMessage<DeviceError>(
                  HasSubstr("instruction 1 (0x3000..0x3008) reaches across the edge of the bound tensor 'Y' "
                            "(0x3000..0x3004)")));
}

}  // namespace
