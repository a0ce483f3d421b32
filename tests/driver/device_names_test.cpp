// Device names (systole/device_names.hpp): names in the devices file stand for URIs or lists,
// names may name names, SYSTOLE_DEVICE is the default, and a bad file is refused naming it.
#include "systole/device_names.hpp"

#include <gmock/gmock.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

namespace systole {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class DeviceNames : public ::testing::Test {
 protected:
  void Write(const std::string& text) {
    std::ofstream(file_) << text;
    setenv("SYSTOLE_DEVICES_FILE", file_.c_str(), 1);
  }
  void TearDown() override {
    std::remove(file_.c_str());
    unsetenv("SYSTOLE_DEVICES_FILE");
    unsetenv("SYSTOLE_DEVICE");
  }
  // One file per test and process: ctest runs these tests side by side (and the sanitizer
  // build runs them again), so a shared name let one test read another's file.
  std::string file_ = ::testing::TempDir() + "devices-" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
                      std::to_string(getpid()) + ".toml";
};

TEST_F(DeviceNames, NamesStandForUrisAndListsAndMayNameNames) {
  Write("[devices]\nlab-board = \"serial:///dev/ttyUSB0?baud=3000000\"\n"
        "pod-a = [\"tcp://10.0.0.1:7000\", \"tcp://10.0.0.2:7000\"]\npod-b = [\"lab-board\", \"ref\"]\n");
  EXPECT_THAT(ResolveDevice("lab-board").uris, ElementsAre("serial:///dev/ttyUSB0?baud=3000000"));
  EXPECT_THAT(ResolveDevice("pod-a").uris, ElementsAre("tcp://10.0.0.1:7000", "tcp://10.0.0.2:7000"));
  EXPECT_THAT(ResolveDevice("pod-b").uris, ElementsAre("serial:///dev/ttyUSB0?baud=3000000", "ref"));
  EXPECT_THAT(ResolveDevice("pod-b").source, HasSubstr(file_));
  EXPECT_THAT(ResolveDevice("ref,pod-a").uris, ElementsAre("ref", "tcp://10.0.0.1:7000", "tcp://10.0.0.2:7000"));
  const DeviceResolution uri = ResolveDevice("tcp://127.0.0.1:7000");
  EXPECT_THAT(uri.uris, ElementsAre("tcp://127.0.0.1:7000"));
  EXPECT_EQ(uri.source, "URI");
}

TEST_F(DeviceNames, SystoleDeviceIsTheDefault) {
  Write("[devices]\npod = [\"ref\", \"ref\"]\n");
  EXPECT_THAT(ResolveDevice("").uris, ElementsAre("ref"));
  setenv("SYSTOLE_DEVICE", "pod", 1);
  const DeviceResolution r = ResolveDevice("");
  EXPECT_EQ(r.requested, "pod");
  EXPECT_THAT(r.uris, ElementsAre("ref", "ref"));
  EXPECT_THAT(r.source, HasSubstr("SYSTOLE_DEVICE"));
}

TEST_F(DeviceNames, BadFilesAreRefusedNamingFileAndEntry) {
  Write("[devices]\na = \"b\"\nb = [\"a\"]\n");
  EXPECT_THAT([] { ResolveDevice("a"); }, ThrowsMessage<std::runtime_error>(HasSubstr("cycle: a -> b -> a")));
  Write("[devices]\nx = 3\n");
  EXPECT_THAT([] { ResolveDevice("x"); },
              ThrowsMessage<std::runtime_error>(HasSubstr("devices.x must be a URI or name")));
  Write("[devices\nx = 3\n");
  EXPECT_THAT([] { ResolveDevice("x"); }, ThrowsMessage<std::runtime_error>(HasSubstr(file_ + ":1:")));
  Write("[devices]\n");
  EXPECT_THAT([] { ResolveDevice("ref,,rtl"); }, ThrowsMessage<std::runtime_error>(HasSubstr("an empty item")));
}

}  // namespace
}  // namespace systole
