// Loops and conditionals with device work (toolchain/compiler/control_flow.cpp, runtime/
// execute.cpp; docs/COMPILER.md, "Loops and conditionals"): the dots of a while's body and of a
// conditional's branches are device steps that run each time the host calls the computation;
// the host keeps the control. Values here are small integers and signed permutations, exact in
// bf16, so the golden model must give the interpreter's result bit for bit.
#include <gmock/gmock.h>

#include <unistd.h>
#include <zip.h>

#include "runtime/parallel_steps.hpp"
#include "tests/compiler/compiler_test_util.hpp"
#include "toolchain/compiler/listing.hpp"
#include "toolchain/compiler/model_file.hpp"
#include "toolchain/hlo/error.hpp"

namespace systole::compiler {
namespace {

using testing::FirstBitDifference;
using ::testing::HasSubstr;

const std::string kState = "(s32[], f32[4,16], f32[16,16])";

// A loop's condition and body, named <prefix>cond and <prefix>body: the body computes the value
// `d` with `work` (lines of HLO reading x and w) and adds one to the counter; the condition
// is `condition` (lines ending in ROOT lt, reading the counter i).
std::string LoopComputations(const std::string& prefix, const std::string& work, const std::string& condition) {
  return prefix + "body {\n  p = " + kState + R"( parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4,16] get-tuple-element(p), index=1
  w = f32[16,16] get-tuple-element(p), index=2
)" + work + R"(
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = )" + kState + " tuple(n, d, w)\n}\n" + prefix + "cond {\n  p = " + kState + R"( parameter(0)
  i = s32[] get-tuple-element(p), index=0
)" + condition + "\n}\n";
}

std::string CountsTo(const std::string& trips) {
  return "  k = s32[] constant(" + trips + ")\n  ROOT lt = pred[] compare(i, k), direction=LT";
}

// What a loop's body computes: x <- x . w; two of those in an inner loop; x <- -x (no device work).
enum class Work { kDot, kInnerLoop, kNegate };

// x <- work(x, w), `trips` times (the condition compares the counter with a constant, as
// lax.fori_loop writes it; "true" never ends).
std::string LoopText(const std::string& trips, Work work = Work::kDot) {
  const std::string dot = "  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  const std::string inner = work != Work::kInnerLoop ? std::string()
                                                     : LoopComputations("inner_", dot, CountsTo("2"));
  const std::string product =
      work == Work::kDot      ? dot
      : work == Work::kNegate ? "  d = f32[4,16] negate(x)"
                              : "  zero = s32[] constant(0)\n  it = " + kState + " tuple(zero, x, w)\n  il = " + kState +
                                    " while(it), condition=inner_cond, body=inner_body\n"
                                    "  d = f32[4,16] get-tuple-element(il), index=1";
  const std::string condition = trips == "true" ? "  ROOT lt = pred[] constant(true)" : CountsTo(trips);
  return "HloModule loop\n" + inner + LoopComputations("", product, condition) + R"(ENTRY e {
  x = f32[4,16] parameter(0)
  w = f32[16,16] parameter(1)
  z = s32[] constant(0)
  t = )" + kState + R"( tuple(z, x, w)
  l = )" + kState + R"( while(t), condition=cond, body=body
  ROOT r = f32[4,16] get-tuple-element(l), index=1
}
)";
}

// x in {-1, 0, 1}; w a signed permutation: every product stays in {-1, 0, 1}, exact in bf16.
std::vector<hlo::Literal> ExactInputs(const hlo::Module& module) {
  std::vector<hlo::Literal> inputs;
  for (const hlo::Instruction* parameter : module.entry->Parameters()) inputs.emplace_back(parameter->shape);
  for (hlo::Literal& input : inputs) {
    if (input.shape.Rank() != 2) continue;
    const auto rows = static_cast<std::size_t>(input.shape.dims[0]), cols = static_cast<std::size_t>(input.shape.dims[1]);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        double& v = input.values[r * cols + c];
        v = rows == cols ? (c == (r * 5 + 3) % cols ? (r % 2 != 0 ? 1.0 : -1.0) : 0.0) : double((r + c) % 3) - 1.0;
      }
    }
  }
  return inputs;
}

// Runs `model` on `ref` and on the interpreter; they must agree bit for bit.
RunResult RunExactly(const CompiledModel& model, const std::vector<hlo::Literal>& inputs) {
  Device device = Device::Open("ref", LoadConfig("small"));
  RunResult run = Execute(model, device, inputs);
  const hlo::Literal expected = hlo::Interpreter(*model.module).Run(inputs);
  EXPECT_EQ(FirstBitDifference(run.result, expected), "");
  return run;
}

const Step& OnlyControlStep(const CompiledModel& model) {
  const auto it = std::find_if(model.steps.begin(), model.steps.end(),
                               [](const Step& step) { return step.kind == Step::Kind::kControl; });
  if (it == model.steps.end()) throw std::runtime_error("no control step");
  return *it;
}

TEST(Loops, TheBodysDotRunsOnTheDeviceEveryIteration) {
  const CompiledModel model = Compile(LoopText("3"), "loop.hlo", LoadConfig("small"));
  const Step& loop = OnlyControlStep(model);
  EXPECT_EQ(loop.instruction, "l");
  ASSERT_EQ(loop.regions.size(), 2u);
  EXPECT_EQ(loop.regions[0].role, "condition");
  EXPECT_EQ(loop.regions[1].role, "body");
  const auto& body = loop.regions[1].steps;
  const auto dot = std::find_if(body.begin(), body.end(), [](const Step& s) { return s.kind == Step::Kind::kDevice; });
  ASSERT_NE(dot, body.end());
  EXPECT_EQ(dot->device->covers.back(), "d");
  EXPECT_EQ(model.DeviceStepCount(), 1u);  // counted once, whatever the iterations

  const RunResult run = RunExactly(model, ExactInputs(*model.module));
  EXPECT_EQ(run.stats.device_steps, 3u);  // one per iteration
}

TEST(Loops, ALoopInsideALoopBodyRunsItsDotsOnTheDeviceToo) {
  const CompiledModel model = Compile(LoopText("3", Work::kInnerLoop), "nested.hlo", LoadConfig("small"));
  const Step& outer = OnlyControlStep(model);
  const auto& body = outer.regions.at(1).steps;
  const auto inner = std::find_if(body.begin(), body.end(), [](const Step& s) { return s.kind == Step::Kind::kControl; });
  ASSERT_NE(inner, body.end());
  EXPECT_EQ(inner->instruction, "il");
  EXPECT_EQ(model.DeviceStepCount(), 1u);
  const RunResult run = RunExactly(model, ExactInputs(*model.module));
  EXPECT_EQ(run.stats.device_steps, 6u);  // 3 outer iterations of 2 inner ones
}

TEST(Loops, TheBodysProgramsLoadOnceWhenResident) {
  const CompiledModel model = Compile(LoopText("5"), "loop.hlo", LoadConfig("small"));
  Device device = Device::Open("ref", LoadConfig("small"));
  const std::vector<hlo::Literal> inputs = ExactInputs(*model.module);
  const RunResult once = Execute(model, device, inputs);  // loads the program every iteration
  runtime::ResidentPrograms resident(model, device);
  const RunResult kept = Execute(model, device, inputs, {}, &resident);
  EXPECT_EQ(FirstBitDifference(kept.result, once.result), "");
  EXPECT_EQ(kept.stats.program_bytes * 5, once.stats.program_bytes);
  EXPECT_EQ(kept.stats.operand_bytes, once.stats.operand_bytes);
}

// The interpreter's bound (Interpreter::kDefaultWhileIterationLimit, 10^6 iterations) applies
// to a loop with device work too; a small one shows the same error without 10^6 device runs.
TEST(Loops, ALoopThatNeverEndsReportsTheInterpretersIterationLimit) {
  const CompiledModel model = Compile(LoopText("true"), "forever.hlo", LoadConfig("small"));
  ASSERT_EQ(OnlyControlStep(model).instruction, "l");
  Device device = Device::Open("ref", LoadConfig("small"));
  EXPECT_THAT([&] { Execute(model, device, ExactInputs(*model.module), {}, nullptr, nullptr, 20); },
              ::testing::ThrowsMessage<hlo::HloError>(HasSubstr("while 'l' is still running after 20 iterations")));
}

TEST(Loops, ALoopWithoutDeviceWorkStaysOneHostStep) {
  const CompiledModel model = Compile(LoopText("3", Work::kNegate), "negate.hlo", LoadConfig("small"));
  const Step* loop = testing::FindStep(model, "l");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->kind, Step::Kind::kHost);
  EXPECT_EQ(loop->reason, "control flow whose computations have no device work: the interpreter runs it whole");
  EXPECT_FALSE(model.HasControlSteps());
  EXPECT_EQ(RunExactly(model, ExactInputs(*model.module)).stats.device_steps, 0u);
}

// A conditional on an s32 index: branch 0 a dot on the device, branch 1 a negate on the host;
// an index out of range runs the last branch (XLA's rule, as the interpreter).
TEST(Conditionals, TheBranchTakenRunsItsDotOnTheDevice) {
  const std::string text = R"(HloModule m
dot_branch { p = (f32[4,16], f32[16,16]) parameter(0)
  x = f32[4,16] get-tuple-element(p), index=0
  w = f32[16,16] get-tuple-element(p), index=1
  ROOT d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0} }
negate_branch { p = (f32[4,16], f32[16,16]) parameter(0)
  x = f32[4,16] get-tuple-element(p), index=0
  ROOT n = f32[4,16] negate(x) }
ENTRY e { i = s32[] parameter(0)
  x = f32[4,16] parameter(1)
  w = f32[16,16] parameter(2)
  t = (f32[4,16], f32[16,16]) tuple(x, w)
  ROOT c = f32[4,16] conditional(i, t, t), branch_computations={dot_branch, negate_branch} }
)";
  const CompiledModel model = Compile(text, "switch.hlo", LoadConfig("small"));
  const Step& control = OnlyControlStep(model);
  ASSERT_EQ(control.regions.size(), 2u);
  EXPECT_EQ(control.regions[0].role, "branch 0");
  EXPECT_EQ(control.regions[0].steps.back().kind, Step::Kind::kDevice);
  EXPECT_EQ(control.regions[1].steps.back().kind, Step::Kind::kHost);
  for (const int index : {0, 1, 7, -1}) {
    SCOPED_TRACE(index);
    std::vector<hlo::Literal> inputs = ExactInputs(*model.module);
    inputs[0] = hlo::Literal::Scalar(hlo::ElementType::kS32, index);
    EXPECT_EQ(RunExactly(model, inputs).stats.device_steps, index == 0 ? 1u : 0u);
  }
}

TEST(Loops, TheModelFileAndTheListingKeepTheBody) {
  const CompiledModel model = Compile(LoopText("3", Work::kInnerLoop), "nested.hlo", LoadConfig("small"));
  const auto path = std::filesystem::path(::testing::TempDir()) / ("loop_" + std::to_string(::getpid()) + ".sbin");
  SaveModel(model, path);
  const CompiledModel loaded = LoadModel(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.HasControlSteps());
  EXPECT_EQ(loaded.DeviceStepCount(), 1u);
  const std::vector<hlo::Literal> inputs = ExactInputs(*model.module);
  EXPECT_EQ(FirstBitDifference(RunExactly(loaded, inputs).result, RunExactly(model, inputs).result), "");

  const std::vector<ListingFile> files = ListingFiles(model, "nested.s");
  ASSERT_EQ(files.size(), 2u);  // the index and the one device step
  EXPECT_THAT(files[0].text, HasSubstr(";   control l  while (control: the host runs the loop"));
  EXPECT_THAT(files[0].text, HasSubstr("body body:"));
  EXPECT_THAT(files[0].text, ::testing::ContainsRegex(";       device  d  gemm 4x16x16"));
}

// A manifest whose loop names another computation than the one the while calls is refused,
// naming both (the nesting must be the module's).
TEST(Loops, AModelFileWhoseRegionsAreNotTheLoopsIsRefused) {
  const auto path = std::filesystem::path(::testing::TempDir()) / ("bad_loop_" + std::to_string(::getpid()) + ".sbin");
  SaveModel(Compile(LoopText("3"), "loop.hlo", LoadConfig("small")), path);
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), 0, &error);
  ASSERT_NE(archive, nullptr);
  zip_stat_t stat;
  ASSERT_EQ(zip_stat(archive, "manifest.json", 0, &stat), 0);
  std::string manifest(stat.size, '\0');
  zip_file_t* member = zip_fopen(archive, "manifest.json", 0);
  ASSERT_NE(member, nullptr);
  ASSERT_EQ(zip_fread(member, manifest.data(), stat.size), static_cast<zip_int64_t>(stat.size));
  zip_fclose(member);
  const std::string body = "\"computation\": \"body\"";
  ASSERT_NE(manifest.find(body), std::string::npos);
  manifest.replace(manifest.find(body), body.size(), "\"computation\": \"cond\"");
  zip_source_t* source = zip_source_buffer(archive, manifest.data(), manifest.size(), 0);
  ASSERT_GE(zip_file_add(archive, "manifest.json", source, ZIP_FL_OVERWRITE), 0);
  ASSERT_EQ(zip_close(archive), 0);
  EXPECT_THAT([&] { LoadModel(path); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr(
                  "manifest: steps[2].regions[1].computation 'cond' is not the one 'l' calls there ('body')")));
  std::filesystem::remove(path);
}

TEST(Loops, SideBySideJobsRefuseThemClearly) {
  const CompiledModel model = Compile(LoopText("2"), "loop.hlo", LoadConfig("small"));
  runtime::ParallelOptions options;
  options.uri = "ref";
  EXPECT_THAT([&] { runtime::ExecuteParallel(model, LoadConfig("small"), ExactInputs(*model.module), options); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("run it without --jobs")));
}

}  // namespace
}  // namespace systole::compiler
