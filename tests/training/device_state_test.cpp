// Training state in device memory (CompileOptions::device_state, docs/TRAINING.md "State in
// device memory"): the SGD-with-momentum update of every weight matrix that only device dots
// read runs on the device (ACCVEC, update steps), its parameters, momenta and bf16 weight copies
// stay in bound device buffers between steps, and the result is bit-identical to updating the
// state on the host — losses and every state value — while the weights no longer go down and
// their gradients no longer come up (bytes counted on a link wrapped around the golden model's).
#include <gmock/gmock.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <set>

#include "toolchain/compiler/model_file.hpp"
#include "tests/training/training_test_util.hpp"
#include "tests/util/test_seed.hpp"
#include "toolchain/hlo/io.hpp"

namespace systole::runtime {
namespace {

using testing::CompileFixture;
using testing::CountingLink;
using testing::FirstBatches;
using testing::LinkBytes;
using testing::LoadState;

std::size_t UpdateSteps(const CompiledModel& model) {
  std::size_t updates = 0;
  for (const compiler::DeviceStep* step : model.DeviceSteps()) updates += step->resident_outputs.empty() ? 0 : 1;
  return updates;
}

TEST(DeviceState, TheMlpsWeightsAndMomentaLiveInDeviceMemory) {
  const auto host = CompileFixture("mlp_sgd_step.hlo");
  const auto device = CompileFixture("mlp_sgd_step.hlo", "small", true);
  EXPECT_TRUE(host->state_tensors.empty());
  EXPECT_THAT(testing::StateTensorNames(*device), ::testing::UnorderedElementsAreArray(testing::kMlpSgdStateTensors));
  EXPECT_EQ(UpdateSteps(*device), 5u);
  // The two gradient dots and the host's f32 updates of w1, w2, b1 and b2 are gone (the biases'
  // gradients, sums over the batch, stay on the host with the rest of the backward pass).
  EXPECT_EQ(host->HostStepCount(compiler::HostWork::kCompute) - device->HostStepCount(compiler::HostWork::kCompute), 16u);
}

TEST(DeviceState, IsBitIdenticalToTheHostUpdateWithFewerBytesThroughTheLink) {
  const auto host_step = CompileFixture("mlp_sgd_step.hlo");
  const auto device_step = CompileFixture("mlp_sgd_step.hlo", "small", true);
  const auto batches = FirstBatches(*host_step, 5);
  const Config config = LoadConfig("small");
  LinkBytes host_bytes, device_bytes;
  Device host_device(std::make_unique<CountingLink>(config, host_bytes));
  Device state_device(std::make_unique<CountingLink>(config, device_bytes));
  // Before the sessions: the state's upload (in the constructor) is counted in the first step.
  LinkBytes host_before = host_bytes, device_before = device_bytes;
  TrainingSession host(host_step, host_device, LoadState("mlp_sgd"));
  TrainingSession resident(device_step, state_device, LoadState("mlp_sgd"));
  EXPECT_EQ(host.device_state_values(), 0u);
  EXPECT_EQ(resident.device_state_values(), 8u);  // w1, b1, w2, b2 and their momenta
  StepResult host_result, resident_result;
  for (std::size_t s = 0; s < batches.size(); ++s) {
    SCOPED_TRACE(::testing::Message() << "step " << s + 1);
    host_result = host.Step(batches[s]);
    resident_result = resident.Step(batches[s]);
    EXPECT_EQ(resident_result.metrics, host_result.metrics);
    // The stats are the link's.
    EXPECT_EQ(device_bytes.written - device_before.written,
              resident_result.stats.program_bytes + resident_result.stats.operand_bytes);
    EXPECT_EQ(device_bytes.read - device_before.read, resident_result.stats.result_bytes);
    if (s > 0) {
      // Per step: the 18 944 bytes of fp32 weight gradients are no longer read back ...
      EXPECT_EQ(host_bytes.read - host_before.read - (device_bytes.read - device_before.read), 18944u);
      // ... and the bf16 weights (w1 8 192, w2 2 048, w2ᵀ 1 280) and the replicated biases (b1
      // 8 192, b2 2 048) no longer written, while the update of w2 in its second layout writes its
      // gradient dot's operands again (hᵀ 4 096, δ 1 024) and the biases' gradients go down
      // (fp32 rows of 16: 256 and 64 bytes).
      EXPECT_EQ(host_bytes.written - host_before.written - (device_bytes.written - device_before.written),
                11520u + 10240u - 5120u - 320u);
    }
    host_before = host_bytes;
    device_before = device_bytes;
  }
  // Every state value, read back from the device, is the host's bit for bit.
  std::uint64_t read_before = device_bytes.read;
  ASSERT_EQ(resident.state().size(), host.state().size());
  for (std::size_t i = 0; i < host.state().size(); ++i) {
    EXPECT_EQ(resident.state()[i].values, host.state()[i].values) << "state value " << i;
  }
  // Read once (w1, m1, w2, m2 in fp32, w2 padded to 16 columns; b1, m1, b2, m2 as rows of 16),
  // not again while no step ran.
  EXPECT_EQ(device_bytes.read - read_before, 2u * (64 * 64 + 64 * 16) * 4 + 2u * (64 + 16) * 4);
  std::cout << "mlp_sgd_step.hlo on ref, per step: device state "
            << resident_result.stats.operand_bytes + resident_result.stats.result_bytes << " bytes through the link, "
            << resident_result.stats.cycles << " cycles; host state "
            << host_result.stats.operand_bytes + host_result.stats.result_bytes << " bytes, " << host_result.stats.cycles
            << " cycles\n";
}

TEST(DeviceState, ANewStateIsWrittenAndTheStepsGoOnFromIt) {
  const auto host_step = CompileFixture("mlp_sgd_step.hlo");
  const auto device_step = CompileFixture("mlp_sgd_step.hlo", "small", true);
  const auto batches = FirstBatches(*host_step, 3);
  Device a = Device::Open("ref", LoadConfig("small")), b = Device::Open("ref", LoadConfig("small"));
  TrainingSession host(host_step, a, LoadState("mlp_sgd"));
  TrainingSession resident(device_step, b, LoadState("mlp_sgd"));
  resident.Step(batches[0]);
  host.Step(batches[2]);
  resident.set_state(host.state());  // as a resume from a checkpoint does
  EXPECT_EQ(resident.Step(batches[1]).metrics, host.Step(batches[1]).metrics);
  for (std::size_t i = 0; i < host.state().size(); ++i) EXPECT_EQ(resident.state()[i].values, host.state()[i].values);
}

// A link to the golden model whose `fail_at`-th wait for a launch's interrupt (1-based) fails as
// a lost connection does; the waits before and after it work.
class FailingLink : public testing::RefLinkWrapper {
 public:
  FailingLink(const Config& config, std::uint64_t fail_at) : RefLinkWrapper(config), fail_at_(fail_at) {}
  bool WaitForInterrupt(std::chrono::milliseconds timeout) override {
    if (++waits_ == fail_at_) throw std::runtime_error("ref: connection lost (a test's failing link)");
    return RefLinkWrapper::WaitForInterrupt(timeout);
  }
  std::uint64_t waits() const { return waits_; }

 private:
  std::uint64_t fail_at_;
  std::uint64_t waits_ = 0;
};

// A step that fails after some of its updates ran leaves the state in device memory partly
// updated: neither the step's start nor its end. The session must not hand that out as its
// state, nor train on from it, and the device must not run the abandoned launch on a state
// written later; a checkpoint resumes.
TEST(DeviceState, AFailedStepLeavesNoPartlyUpdatedStateToReadOrTrainFrom) {
  const auto step = CompileFixture("mlp_sgd_step.hlo", "small", true);
  const auto batches = FirstBatches(*step, 3);
  const Config config = LoadConfig("small");
  Device straight_device = Device::Open("ref", config);
  TrainingSession straight(step, straight_device, LoadState("mlp_sgd"));
  straight.Step(batches[0]);
  const std::vector<hlo::Literal> checkpoint = straight.state();
  const StepResult expected = straight.Step(batches[1]);

  // The launches of one step, counted on a link that never fails.
  auto counting = std::make_unique<FailingLink>(config, 0);
  FailingLink* counter = counting.get();
  Device counting_device(std::move(counting));
  TrainingSession counted(step, counting_device, LoadState("mlp_sgd"));
  counted.Step(batches[0]);
  const std::uint64_t per_step = counter->waits();
  ASSERT_EQ(UpdateSteps(*step), 5u);
  ASSERT_GT(per_step, 5u);

  // The second step fails at its last launch, an update (b2's): those of w1, b1 and w2 (in both
  // its layouts) have run, that one has not.
  Device device(std::make_unique<FailingLink>(config, 2 * per_step));
  TrainingSession session(step, device, LoadState("mlp_sgd"));
  session.Step(batches[0]);
  EXPECT_THAT([&] { session.Step(batches[1]); },
              ::testing::ThrowsMessage<std::runtime_error>(::testing::HasSubstr("connection lost")));
  const auto partly = ::testing::HasSubstr("may be partly updated");
  EXPECT_THAT([&] { session.state(); }, ::testing::ThrowsMessage<std::runtime_error>(partly));
  EXPECT_THAT([&] { session.Step(batches[1]); }, ::testing::ThrowsMessage<std::runtime_error>(partly));

  // The failed launch was never waited for to its end, and the golden model runs a launch
  // while it is waited for: it is still pending, and would run on the restored state first.
  session.set_state(checkpoint);
  EXPECT_THAT([&] { session.Step(batches[1]); },
              ::testing::ThrowsMessage<std::runtime_error>(::testing::HasSubstr("an earlier launch was not waited for")));

  // A resume from the last checkpoint on a device opened again continues bit for bit.
  Device reopened = Device::Open("ref", config);
  TrainingSession resumed(step, reopened, checkpoint);
  EXPECT_EQ(resumed.Step(batches[1]).metrics, expected.metrics);
  for (std::size_t i = 0; i < straight.state().size(); ++i) {
    EXPECT_EQ(resumed.state()[i].values, straight.state()[i].values) << "state value " << i;
  }
}

// Adam: p, m and v of w1 and of w2 in both layouts, and the bf16 weights (12 tensors), and of
// b1 and b2 with their replicas (8); the step size, computed on the host from the step count,
// goes down every step (4 bytes an update).
TEST(DeviceState, AdamKeepsBothMomentsOnTheDeviceBitIdentically) {
  const auto host_step = CompileFixture("mlp_adam_step.hlo");
  const auto device_step = CompileFixture("mlp_adam_step.hlo", "small", true);
  EXPECT_EQ(device_step->state_tensors.size(), 20u);
  EXPECT_EQ(UpdateSteps(*device_step), 5u);
  const auto batches = FirstBatches(*host_step, 5);
  Device a = Device::Open("ref", LoadConfig("small")), b = Device::Open("ref", LoadConfig("small"));
  TrainingSession host(host_step, a, LoadState("mlp_adam"));
  TrainingSession resident(device_step, b, LoadState("mlp_adam"));
  EXPECT_EQ(resident.device_state_values(), 12u);  // w1, b1, w2, b2 and their two moments each
  StepResult last;
  for (const auto& batch : batches) {
    last = resident.Step(batch);
    EXPECT_EQ(last.metrics, host.Step(batch).metrics);
  }
  for (std::size_t i = 0; i < host.state().size(); ++i) {
    EXPECT_EQ(resident.state()[i].values, host.state()[i].values) << "state value " << i;
  }
  std::cout << "mlp_adam_step.hlo on ref, per step: device state " << last.stats.operand_bytes + last.stats.result_bytes
            << " bytes through the link, " << last.stats.cycles << " cycles\n";
}

// A binding that reads a value's dimensions reversed before permuting them (the input
// gradient's view of a convolution's weights, [KH,KW,Cin,Cout] -> [KH,KW,Cout,Cin] reversed in
// KH and KW): each device element from the value's mirrored position, and back.
TEST(DeviceState, ABindingReadsAValueReversedAndBack) {
  const hlo::Shape shape{hlo::ElementType::kF32, {2, 3, 1, 2}};
  hlo::Literal value(shape);
  for (std::size_t i = 0; i < value.values.size(); ++i) value.values[i] = static_cast<double>(i);
  const compiler::Binding binding{compiler::Binding::Kind::kValue, "w", {0, 1, 3, 2}, image::DataType::kFp32,
                                  {2, 3, 2, 1}, 0, 0, {0, 1}};
  const std::vector<std::uint8_t> bytes = EncodeValue(binding, value);
  ASSERT_EQ(bytes.size(), 12u * 4u);
  for (std::size_t kh = 0; kh < 2; ++kh) {
    for (std::size_t kw = 0; kw < 3; ++kw) {
      for (std::size_t co = 0; co < 2; ++co) {
        float device = 0;
        std::memcpy(&device, &bytes[((kh * 3 + kw) * 2 + co) * 4], 4);
        // value[1 - kh][2 - kw][0][co], row-major [2, 3, 1, 2]
        EXPECT_EQ(device, static_cast<float>(((1 - kh) * 3 + (2 - kw)) * 2 + co)) << kh << "," << kw << "," << co;
      }
    }
  }
  EXPECT_EQ(DecodeValue(binding, bytes, shape).values, value.values);
}

class Cnns : public ::testing::TestWithParam<std::string> {};

// Every parameter of the CNNs (SGD with momentum; the CNN with Adam too) keeps its state on the
// device: the dense layer, every bias (the
// convolutions' too: their drains start from them) and both convolutions' weights. A
// convolution's gradient is a convolution over the batch that the update takes as an input, in
// each layout the convolutions load: the forward's, and for the second convolution also the
// input gradient's, which reads the weights spatially reversed with Cin and Cout swapped.
TEST_P(Cnns, KeepEveryParameterOnTheDeviceBitIdentically) {
  const std::string model = GetParam();
  const auto host_step = CompileFixture(model + "_step.hlo");
  const auto device_step = CompileFixture(model + "_step.hlo", "small", true);
  // The dense layer's weights in two layouts, the three biases, the first convolution's weights
  // in one layout and the second's in two.
  EXPECT_EQ(UpdateSteps(*device_step), 8u);
  std::set<std::string> biases;  // the parameters held as replicated biases
  std::vector<std::string> kernels;
  for (const compiler::StateTensor& t : device_step->state_tensors) {
    if (t.layout.kind == compiler::Binding::Kind::kBias) biases.insert(t.layout.value);
    if (t.layout.shape.size() == 5) kernels.push_back(t.name.substr(t.name.find(' ') + 1));
  }
  EXPECT_EQ(biases.size(), 3u);
  // Value, moments (SGD one, Adam two) and bf16 copy in each layout: [KH,KW,Cin,Cout] for both
  // convolutions, and [KH,KW,Cout,Cin] reversed for the second.
  const bool adam = model.find("adam") != std::string::npos;
  EXPECT_EQ(std::count(kernels.begin(), kernels.end(), "fp32 [0,1,2,3]"), adam ? 6 : 4);
  EXPECT_EQ(std::count(kernels.begin(), kernels.end(), "weights [0,1,2,3]"), 2);
  EXPECT_EQ(std::count(kernels.begin(), kernels.end(), "fp32 [0,1,3,2] reversed [0,1]"), adam ? 3 : 2);
  EXPECT_EQ(std::count(kernels.begin(), kernels.end(), "weights [0,1,3,2] reversed [0,1]"), 1);
  EXPECT_EQ(kernels.size(), adam ? 12u : 9u);
  // No reverse of the weights is left to the host.
  for (const compiler::Step& step : device_step->steps) {
    if (step.kind == compiler::Step::Kind::kHost) {
      EXPECT_NE(device_step->module->entry->Find(step.instruction)->opcode, hlo::Opcode::kReverse) << step.instruction;
    }
  }
  const auto batches = FirstBatches(*host_step, 3);
  Device a = Device::Open("ref", LoadConfig("small")), b = Device::Open("ref", LoadConfig("small"));
  TrainingSession host(host_step, a, LoadState(model));
  TrainingSession resident(device_step, b, LoadState(model));
  EXPECT_EQ(resident.device_state_values(), adam ? 18u : 12u);  // every parameter and its moments
  StepResult last;
  for (const auto& batch : batches) {
    const StepResult host_result = host.Step(batch);
    last = resident.Step(batch);
    EXPECT_EQ(last.metrics, host_result.metrics);
    std::cout << model << " per step: device state " << last.stats.operand_bytes + last.stats.result_bytes
              << " bytes through the link, " << last.stats.cycles << " cycles; host state "
              << host_result.stats.operand_bytes + host_result.stats.result_bytes << " bytes, " << host_result.stats.cycles
              << " cycles\n";
  }
  for (std::size_t i = 0; i < host.state().size(); ++i) {
    EXPECT_EQ(resident.state()[i].values, host.state()[i].values) << "state value " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Cnns, ::testing::Values("cnn_sgd", "pool_cnn_sgd", "cnn_adam"));

// One bias added to two dots of different row counts: two replicas ([1, 4, 16] and [1, 40, 16]),
// both updated with it; its gradient, the sum of both outputs over their rows, comes from the
// host. Three runs of the step, each from the last one's state, equal the host update bit for
// bit (random inputs, seed printed).
TEST(DeviceState, ABiasTwoDrainsReadKeepsAReplicaForEach) {
  constexpr const char* kStep = R"(HloModule bias_two_drains, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }

region_add {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT sum = f32[] add(lhs, rhs)
}

ENTRY main {
  b = f32[16]{0} parameter(0)
  m = f32[16]{0} parameter(1)
  w = f32[8,16]{1,0} parameter(2)
  x1 = f32[4,8]{1,0} parameter(3)
  x2 = f32[40,8]{1,0} parameter(4)
  d1 = f32[4,16]{1,0} dot(x1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb1 = f32[4,16]{1,0} broadcast(b), dimensions={1}
  y1 = f32[4,16]{1,0} add(d1, bb1)
  d2 = f32[40,16]{1,0} dot(x2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb2 = f32[40,16]{1,0} broadcast(b), dimensions={1}
  y2 = f32[40,16]{1,0} add(d2, bb2)
  zero = f32[] constant(0)
  g1 = f32[16]{0} reduce(y1, zero), dimensions={0}, to_apply=region_add
  g2 = f32[16]{0} reduce(y2, zero), dimensions={0}, to_apply=region_add
  g = f32[16]{0} add(g1, g2)
  mu = f32[] constant(0.9)
  mub = f32[16]{0} broadcast(mu), dimensions={}
  mm = f32[16]{0} multiply(m, mub)
  m2 = f32[16]{0} add(mm, g)
  lr = f32[] constant(0.01)
  lrb = f32[16]{0} broadcast(lr), dimensions={}
  step = f32[16]{0} multiply(m2, lrb)
  b2 = f32[16]{0} subtract(b, step)
  ROOT t = (f32[16]{0}, f32[16]{0}, f32[16]{0}) tuple(b2, m2, g)
}
)";
  const Config config = LoadConfig("small");
  compiler::CompileOptions options;
  const CompiledModel host_step = compiler::Compile(kStep, "bias_two_drains.hlo", config, options);
  options.device_state = true;
  const CompiledModel device_step = compiler::Compile(kStep, "bias_two_drains.hlo", config, options);
  std::vector<std::string> names;
  for (const compiler::StateTensor& t : device_step.state_tensors) names.push_back(t.name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("b fp32 [0]", "m fp32 [0]", "b bias [1,4,16]", "b bias [1,40,16]"));
  const std::uint64_t seed = systole::test::Seed();
  std::vector<hlo::Literal> host_arguments = hlo::RandomInputs(*host_step.module, seed);
  std::vector<hlo::Literal> device_arguments = host_arguments;
  Device a = Device::Open("ref", config), b = Device::Open("ref", config);
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE(::testing::Message() << "run " << run + 1);
    const RunResult host = Execute(host_step, a, host_arguments);
    const RunResult device = Execute(device_step, b, device_arguments);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(device.result.elements[i].values, host.result.elements[i].values) << i;
    for (std::size_t i = 0; i < 2; ++i) {
      host_arguments[i] = host.result.elements[i];
      device_arguments[i] = device.result.elements[i];
    }
  }
}

TEST(DeviceState, ARunOnItsOwnWritesTheStateAndReadsTheNewStateBack) {
  const auto host_step = CompileFixture("mlp_sgd_step.hlo");
  const auto device_step = CompileFixture("mlp_sgd_step.hlo", "small", true);
  const auto batches = FirstBatches(*host_step, 1);
  std::vector<hlo::Literal> host_state = LoadState("mlp_sgd"), device_state = LoadState("mlp_sgd");
  Device a = Device::Open("ref", LoadConfig("small")), b = Device::Open("ref", LoadConfig("small"));
  RunStats last;
  testing::LoadEveryStep(*host_step, a, host_state, batches, last);
  testing::LoadEveryStep(*device_step, b, device_state, batches, last);  // plain Execute, as `systole run`
  for (std::size_t i = 0; i < host_state.size(); ++i) EXPECT_EQ(device_state[i].values, host_state[i].values);
}

TEST(DeviceState, ResidentProgramsWithoutTheStateAreRefused) {
  const auto step = CompileFixture("mlp_sgd_step.hlo", "small", true);
  Device device = Device::Open("ref", LoadConfig("small"));
  ResidentPrograms unbound(*step, device);  // its update programs would not reach the state's buffers
  std::vector<hlo::Literal> arguments = LoadState("mlp_sgd");
  const auto batches = FirstBatches(*step, 1);
  for (const hlo::Literal& batch : batches[0]) arguments.push_back(batch);  // the parameters' order: state, x, y
  EXPECT_THAT([&] { Execute(*step, device, arguments, {}, &unbound); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("another resident state (or none)")));
}

// A while loop that carries donated weights and their momentum through its body (the body's
// dot reads w, its SGD update writes it back): the body's update runs on the device every
// iteration, w and m stay in device memory, and the loop's results equal the host update's bit
// for bit (random inputs, seed printed). Where the condition reads w, the body takes its whole
// tuple, or the entry reads w besides starting the loop, the state stays on the host: the host
// would see a placeholder.
constexpr const char* kLoopOfSteps = R"(HloModule loop_state, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }

cond {
  p = (s32[], f32[8,16]{1,0}, f32[8,16]{1,0}, f32[4,8]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT r = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[8,16]{1,0}, f32[8,16]{1,0}, f32[4,8]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  w = f32[8,16]{1,0} get-tuple-element(p), index=1
  m = f32[8,16]{1,0} get-tuple-element(p), index=2
  x = f32[4,8]{1,0} get-tuple-element(p), index=3
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  y = f32[4,16]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[8,16]{1,0} dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  mu = f32[] constant(0.9)
  mub = f32[8,16]{1,0} broadcast(mu), dimensions={}
  mm = f32[8,16]{1,0} multiply(m, mub)
  m2 = f32[8,16]{1,0} add(mm, g)
  lr = f32[] constant(0.01)
  lrb = f32[8,16]{1,0} broadcast(lr), dimensions={}
  st = f32[8,16]{1,0} multiply(m2, lrb)
  w2 = f32[8,16]{1,0} subtract(w, st)
  ROOT t = (s32[], f32[8,16]{1,0}, f32[8,16]{1,0}, f32[4,8]{1,0}) tuple(i2, w2, m2, x)
}

ENTRY main {
  w = f32[8,16]{1,0} parameter(0)
  m = f32[8,16]{1,0} parameter(1)
  x = f32[4,8]{1,0} parameter(2)
  zero = s32[] constant(0)
  start = (s32[], f32[8,16]{1,0}, f32[8,16]{1,0}, f32[4,8]{1,0}) tuple(zero, w, m, x)
  loop = (s32[], f32[8,16]{1,0}, f32[8,16]{1,0}, f32[4,8]{1,0}) while(start), condition=cond, body=body
  w_out = f32[8,16]{1,0} get-tuple-element(loop), index=1
  m_out = f32[8,16]{1,0} get-tuple-element(loop), index=2
  ROOT out = (f32[8,16]{1,0}, f32[8,16]{1,0}) tuple(w_out, m_out)
}
)";

TEST(DeviceState, ALoopThatCarriesItsStateKeepsItOnTheDeviceAndOnlyThen) {
  const Config config = LoadConfig("small");
  compiler::CompileOptions options;
  const CompiledModel host = compiler::Compile(kLoopOfSteps, "loop_state.hlo", config, options);
  options.device_state = true;
  const CompiledModel resident = compiler::Compile(kLoopOfSteps, "loop_state.hlo", config, options);
  EXPECT_THAT(testing::StateTensorNames(resident),
              ::testing::UnorderedElementsAre("w fp32 [0,1]", "m fp32 [0,1]", "w weights [0,1]"));
  EXPECT_EQ(UpdateSteps(resident), 1u);
  const std::uint64_t seed = systole::test::Seed();
  const std::vector<hlo::Literal> arguments = hlo::RandomInputs(*host.module, seed);
  Device a = Device::Open("ref", config), b = Device::Open("ref", config);
  const RunResult expected = Execute(host, a, arguments);
  const RunResult run = Execute(resident, b, arguments);
  ASSERT_EQ(run.result.elements.size(), 2u);
  EXPECT_EQ(run.result.elements[0].values, expected.result.elements[0].values);
  EXPECT_EQ(run.result.elements[1].values, expected.result.elements[1].values);
  EXPECT_EQ(run.stats.device_steps, expected.stats.device_steps);  // 3 iterations of the forward dot and the update

  const auto placed = [&](const std::string& text) {
    return !compiler::Compile(text, "loop_state.hlo", config, options).state_tensors.empty();
  };
  const auto replace = [](std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  // The condition reads w (its first element bounds the loop).
  EXPECT_FALSE(placed(replace(kLoopOfSteps, "  ROOT r = pred[] compare(i, n), direction=LT\n",
                              "  w = f32[8,16]{1,0} get-tuple-element(p), index=1\n"
                              "  ws = f32[1,1]{1,0} slice(w), slice={[0:1], [0:1]}\n"
                              "  wr = f32[] reshape(ws)\n  lim = f32[] constant(100)\n"
                              "  a = pred[] compare(wr, lim), direction=LT\n  b = pred[] compare(i, n), direction=LT\n"
                              "  ROOT r = pred[] and(a, b)\n")));
  // The body reads its whole tuple (into a tuple of its own, x taken from there).
  EXPECT_FALSE(placed(replace(kLoopOfSteps, "  x = f32[4,8]{1,0} get-tuple-element(p), index=3\n",
                              "  pt = ((s32[], f32[8,16]{1,0}, f32[8,16]{1,0}, f32[4,8]{1,0})) tuple(p)\n"
                              "  pp = (s32[], f32[8,16]{1,0}, f32[8,16]{1,0}, f32[4,8]{1,0}) get-tuple-element(pt), index=0\n"
                              "  x = f32[4,8]{1,0} get-tuple-element(pp), index=3\n")));
  // The entry reads w besides starting the loop.
  EXPECT_FALSE(placed(replace(kLoopOfSteps, "  ROOT out = (f32[8,16]{1,0}, f32[8,16]{1,0}) tuple(w_out, m_out)",
                              "  ROOT out = (f32[8,16]{1,0}, f32[8,16]{1,0}, f32[8,16]{1,0}) tuple(w_out, m_out, w)")));
}

TEST(DeviceState, IsNotPlacedWhereNoUpdateOfADotsWeightsIsDonated) {
  EXPECT_TRUE(CompileFixture("mlp_grad.hlo", "small", true)->state_tensors.empty());       // nothing donated
}

TEST(DeviceState, AModelThatKeepsStateOnTheDeviceIsNotSavedAsAModelFile) {
  const auto step = CompileFixture("mlp_sgd_step.hlo", "small", true);
  const auto path = std::filesystem::temp_directory_path() / "systole_device_state_model.systole";
  EXPECT_THAT([&] { compiler::SaveModel(*step, path); },
              ::testing::ThrowsMessage<std::runtime_error>(::testing::HasSubstr("device memory")));
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace systole::runtime
