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

TEST(Device, InputSizesAndNamesAreChecked) {
  Device device = OpenTiny();
  Program program = device.Load(driver_test::ScaleProgram(1));
  EXPECT_THROW(program.WriteInput(0, std::vector<std::uint8_t>(7)), DeviceError);
  EXPECT_THROW(program.WriteInput("Z", std::vector<std::uint8_t>(8)), DeviceError);
  EXPECT_THROW(program.ReadOutput(3), DeviceError);
  EXPECT_THROW(program.DeviceAddress(0x9000), DeviceError);
}

}  // namespace
