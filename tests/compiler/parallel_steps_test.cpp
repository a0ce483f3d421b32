// Device steps side by side (runtime/parallel_steps.hpp) on the golden model: the same result,
// statistics and timeline as one device running them one after the other, and a step whose
// output or functional counters differ from the golden model's is named with the difference.
// The same on the Verilated RTL is in rtl_parallel_steps_test.cpp.
#include <fmt/core.h>
#include <gmock/gmock.h>

#include "runtime/parallel_steps.hpp"
#include "tests/compiler/compiler_test_util.hpp"

namespace systole::compiler {
namespace {

using runtime::DeviceStepRecord;
using runtime::ExecuteParallel;
using runtime::ParallelOptions;
using runtime::ReplayDeviceSteps;
using ::testing::HasSubstr;

struct Fixture {
  Config config = LoadConfig("small");
  CompiledModel model = Compile(testing::ReadText(testing::ExampleFile("small_cnn_f32.hlo")), "small_cnn_f32.hlo",
                                config);
  std::vector<hlo::Literal> inputs = hlo::RandomInputs(*model.module, 1);
};

TEST(ParallelSteps, OnTheGoldenModelAreTheSameAsOneAfterTheOther) {
  Fixture f;
  Device device = Device::Open("ref", f.config);
  trace::Timeline one_timeline(f.config, "ref");
  device.Record(&one_timeline);
  const RunResult one = Execute(f.model, device, f.inputs);
  device.Record(nullptr);
  ASSERT_GE(one.stats.device_steps, 3u);

  for (unsigned jobs : {1u, 2u, 3u, 16u}) {
    SCOPED_TRACE(jobs);
    trace::Timeline timeline(f.config, "ref");
    std::vector<std::string> progress;
    ParallelOptions options;
    options.uri = "ref";
    options.jobs = jobs;
    options.timeline = &timeline;
    options.progress = [&progress](const std::string& message) { progress.push_back(message); };
    const RunResult side_by_side = ExecuteParallel(f.model, f.config, f.inputs, options);
    EXPECT_EQ(testing::FirstBitDifference(side_by_side.result, one.result), "");
    EXPECT_EQ(side_by_side.stats.cycles, one.stats.cycles);  // the model's estimate has no history
    EXPECT_EQ(side_by_side.stats.macs, one.stats.macs);
    EXPECT_EQ(side_by_side.stats.mxu_busy, one.stats.mxu_busy);
    EXPECT_EQ(side_by_side.stats.device_steps, one.stats.device_steps);
    EXPECT_EQ(side_by_side.stats.program_bytes, one.stats.program_bytes);
    EXPECT_EQ(side_by_side.stats.operand_bytes, one.stats.operand_bytes);
    EXPECT_EQ(side_by_side.stats.result_bytes, one.stats.result_bytes);
    // The timeline holds the steps in step order, laid end to end as on one device.
    ASSERT_EQ(timeline.launches().size(), one_timeline.launches().size());
    for (std::size_t i = 0; i < timeline.launches().size(); ++i) {
      EXPECT_EQ(timeline.launches()[i].name, one_timeline.launches()[i].name);
      EXPECT_EQ(timeline.launches()[i].begin, one_timeline.launches()[i].begin);
      EXPECT_EQ(timeline.launches()[i].end, one_timeline.launches()[i].end);
    }
    EXPECT_EQ(timeline.spans().size(), one_timeline.spans().size());
    EXPECT_EQ(timeline.stalls().size(), one_timeline.stalls().size());
    // The golden model's steps, then one line per step the devices finished.
    const auto finished = std::count_if(progress.begin(), progress.end(), [](const std::string& m) {
      return m.rfind("ref step ", 0) == 0;
    });
    EXPECT_EQ(static_cast<std::size_t>(finished), one.stats.device_steps);
    EXPECT_THAT(progress.front(), HasSubstr("golden model: device step 1/"));
  }
}

TEST(ParallelSteps, AStepThatDiffersFromTheGoldenModelIsNamedWithTheDifference) {
  Fixture f;
  Device device = Device::Open("ref", f.config);
  std::vector<DeviceStepRecord> records;
  Execute(f.model, device, f.inputs, {}, nullptr, &records);
  ASSERT_EQ(records.size(), f.model.DeviceStepCount());
  std::vector<const DeviceStep*> steps;
  for (const Step& step : f.model.steps) {
    if (step.kind == Step::Kind::kDevice) steps.push_back(&*step.device);
  }
  ParallelOptions options;
  options.uri = "ref";
  EXPECT_EQ(ReplayDeviceSteps(f.model, f.config, records, options).size(), records.size());

  std::vector<DeviceStepRecord> wrong_byte = records;
  wrong_byte[1].output[5] ^= 0x40;
  try {
    ReplayDeviceSteps(f.model, f.config, wrong_byte, options);
    ADD_FAILURE() << "a wrong output byte was not noticed";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr(fmt::format("device step '{}' ({}) (step 2 of {}) differs on ref from the "
                                                    "golden model: output byte 5 of ",
                                                    steps[1]->covers.back(), steps[1]->kernel, steps.size())));
  }

  std::vector<DeviceStepRecord> wrong_counter = records;
  for (auto& [name, value] : wrong_counter.back().counters.values) {
    if (name == "MACS") ++value;
  }
  EXPECT_THROW(
      {
        try {
          ReplayDeviceSteps(f.model, f.config, wrong_counter, options);
        } catch (const std::runtime_error& error) {
          EXPECT_THAT(error.what(), HasSubstr("counter MACS is "));
          throw;
        }
      },
      std::runtime_error);

  std::vector<DeviceStepRecord> missing = records;
  missing.pop_back();
  EXPECT_THROW(ReplayDeviceSteps(f.model, f.config, missing, options), std::logic_error);
  options.jobs = 0;
  EXPECT_THROW(ReplayDeviceSteps(f.model, f.config, records, options), std::invalid_argument);
}

TEST(ParallelSteps, ADeviceThatCannotOpenStopsTheRunWithItsError) {
  Fixture f;
  ParallelOptions options;
  options.uri = "nosuchscheme://x";
  options.jobs = 2;
  EXPECT_THROW(ExecuteParallel(f.model, f.config, f.inputs, options), std::exception);
}

}  // namespace
}  // namespace systole::compiler
