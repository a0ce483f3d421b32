// What the pinned JAX writes (tests/hlo/data/jax_*.hlo, made by jax_dumps.py there): the
// FileNames / FunctionNames / FileLocations / StackFrames tables after the HloModule line, `%`
// names, signatures and metadata with stack_frame_id. The parser reads the tables, names the
// Python line of every traced instruction, and rejects broken tables at file:line:col.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "tests/hlo/hlo_test_util.hpp"
#include "toolchain/hlo/interpreter.hpp"
#include "toolchain/hlo/io.hpp"
#include "toolchain/hlo/pass.hpp"

namespace systole::hlo {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::filesystem::path kData = std::filesystem::path(SYSTOLE_SOURCE_DIR) / "tests/hlo/data";

Module ParseFixture(const std::string& name) {
  std::vector<Module> modules = ParseModuleFile(kData / name);
  EXPECT_EQ(modules.size(), 1u);
  Verify(modules.front());
  return std::move(modules.front());
}

const Instruction* FirstOf(const Computation& computation, Opcode opcode) {
  for (const auto& i : computation.instructions) {
    if (i->opcode == opcode) return i.get();
  }
  return nullptr;
}

TEST(JaxDump, MlpTablesAndSourceLines) {
  const Module module = ParseFixture("jax_mlp.hlo");
  EXPECT_EQ(module.name, "jit_mlp");
  const StackFrameIndex& index = module.stack_frames;
  EXPECT_EQ(index.file_names, std::vector<std::string>{"tests/hlo/data/jax_dumps.py"});
  EXPECT_THAT(index.function_names, ::testing::Contains("mlp"));
  ASSERT_FALSE(index.file_locations.empty());
  ASSERT_FALSE(index.frames.empty());

  // The first dot is `x @ w1` on line 26 of jax_dumps.py, the second `h @ w2` on line 27.
  std::vector<const Instruction*> dots;
  for (const auto& i : module.entry->instructions) {
    if (i->opcode == Opcode::kDot) dots.push_back(i.get());
  }
  ASSERT_EQ(dots.size(), 2u);
  EXPECT_EQ(dots[0]->metadata.op_name, "jit(mlp)/dot_general");
  EXPECT_GT(dots[0]->metadata.stack_frame_id, 0);
  EXPECT_THAT(module.SourceOf(*dots[0]), StartsWith("tests/hlo/data/jax_dumps.py:26:"));
  EXPECT_THAT(module.SourceOf(*dots[0]), HasSubstr("(mlp)"));
  EXPECT_THAT(module.SourceOf(*dots[1]), StartsWith("tests/hlo/data/jax_dumps.py:27:"));
  // Parameters carry an op_name but no frame: no source line.
  EXPECT_EQ(module.SourceOf(*module.entry->Parameters().front()), "");
}

TEST(JaxDump, InlinedBodiesTakeTheCallersLine) {
  Module module = ParseFixture("jax_mlp.hlo");
  const Instruction* call = FirstOf(*module.entry, Opcode::kCall);
  ASSERT_NE(call, nullptr);
  const std::string call_line = module.SourceOf(*call);
  ASSERT_THAT(call_line, StartsWith("tests/hlo/data/jax_dumps.py:26:"));  // jax.nn.relu(...)
  InlineCalls().Run(module);
  const Instruction* relu = FirstOf(*module.entry, Opcode::kMaximum);
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(module.SourceOf(*relu), call_line);
}

TEST(JaxDump, MlpAndCnnRunOnTheInterpreter) {
  for (const char* name : {"jax_mlp.hlo", "jax_cnn.hlo"}) {
    SCOPED_TRACE(name);
    const Module module = ParseFixture(name);
    const Literal result = Interpreter(module).Run(RandomInputs(module, 3));
    EXPECT_TRUE(result.shape.IsArray());
    EXPECT_EQ(result.shape.dims.back(), 10);
  }
}

// What XLA's CPU compiler prints after optimization (jax.jit(fn).lower(...).compile().as_text()):
// `fusion` instructions calling fused computations, operands without shapes, scheduling
// attributes on the module line. The fusions run as calls and inline like them.
double MaxDifference(const Literal& a, const Literal& b) {
  EXPECT_EQ(a.shape.ToString(), b.shape.ToString());
  double worst = 0;
  for (std::size_t k = 0; k < a.values.size() && k < b.values.size(); ++k) {
    worst = std::max(worst, std::abs(a.values[k] - b.values[k]));
  }
  return worst;
}

double MaxMagnitude(const Literal& a) {
  double worst = 0;
  for (double v : a.values) worst = std::max(worst, std::abs(v));
  return worst;
}

std::size_t CountOf(const Module& module, Opcode opcode) {
  std::size_t count = 0;
  for (const auto& computation : module.computations) {
    for (const auto& i : computation->instructions) count += i->opcode == opcode ? 1u : 0u;
  }
  return count;
}

TEST(JaxDump, OptimizedDumpsMatchTheUnoptimizedOnes) {
  for (const char* name : {"jax_mlp", "jax_cnn"}) {
    SCOPED_TRACE(name);
    const Module before = ParseFixture(std::string(name) + ".hlo");
    const Module after = ParseFixture(std::string(name) + "_optimized.hlo");
    EXPECT_GE(CountOf(after, Opcode::kFusion), 2u);
    const std::vector<Literal> inputs = RandomInputs(before, 11);
    const Literal expected = Interpreter(before).Run(inputs);
    const Literal got = Interpreter(after).Run(inputs);
    // XLA may reorder float arithmetic while optimizing: equal within float32 rounding.
    EXPECT_LE(MaxDifference(got, expected), 1e-5 * MaxMagnitude(expected));
  }
}

TEST(JaxDump, OptimizedFusionsInlineLikeCalls) {
  for (const char* name : {"jax_mlp_optimized.hlo", "jax_cnn_optimized.hlo",
                           "jax_layer_norm_optimized.hlo", "jax_attention_optimized.hlo"}) {
    SCOPED_TRACE(name);
    Module module = ParseFixture(name);
    ASSERT_GT(CountOf(module, Opcode::kFusion), 0u);
    const std::vector<Literal> inputs = RandomInputs(module, 5);
    const Literal fused = Interpreter(module).Run(inputs);
    InlineCalls().Run(module);
    DeadCodeElimination().Run(module);
    EXPECT_EQ(CountOf(module, Opcode::kFusion), 0u);
    EXPECT_EQ(CountOf(module, Opcode::kCall), 0u);
    const Literal inlined = Interpreter(module).Run(inputs);
    EXPECT_EQ(MaxDifference(inlined, fused), 0.0);
    // The fused bodies keep the Python line of the code they came from.
    for (const auto& i : module.entry->instructions) {
      if (i->opcode == Opcode::kDot) {
        EXPECT_THAT(module.SourceOf(*i), StartsWith("tests/hlo/data/jax_dumps.py:"));
      }
    }
  }
}

TEST(JaxDump, CnnHasConvolutionsPoolAndLines) {
  const Module module = ParseFixture("jax_cnn.hlo");
  const Instruction* conv = FirstOf(*module.entry, Opcode::kConvolution);
  ASSERT_NE(conv, nullptr);
  EXPECT_THAT(module.SourceOf(*conv), HasSubstr("(cnn)"));
  EXPECT_NE(FirstOf(*module.entry, Opcode::kReduceWindow), nullptr);
}

// A module with the tables, for the error cases below; `tables` replaces the default ones.
std::string WithTables(const std::string& tables, const std::string& frame = "1") {
  return "HloModule m\n\n" + tables +
         "\nENTRY %e (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n"
         "  ROOT %n = f32[2]{0} negate(%p), metadata={op_name=\"jit(f)/neg\" stack_frame_id=" +
         frame + "}\n}\n";
}

const std::string kTables =
    "FileNames\n1 \"f.py\"\n\nFunctionNames\n1 \"f\"\n\nFileLocations\n"
    "1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=11 end_column=17}\n\n"
    "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n";

using testing::ParseError;

TEST(JaxDump, SmallModuleNamesItsLine) {
  const Module module = ParseModule(WithTables(kTables), "t.hlo");
  EXPECT_EQ(module.SourceOf(*module.entry->root), "f.py:3:11 (f)");
}

TEST(JaxDump, OlderMetadataSourceFileAndLine) {
  const Module module = ParseModule(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
      "  ROOT n = f32[2] negate(p), metadata={op_type=\"neg\" op_name=\"jit(f)/neg\" source_file=\"/a/f.py\" "
      "source_line=7}\n}\n",
      "t.hlo");
  EXPECT_EQ(module.SourceOf(*module.entry->root), "/a/f.py:7");
}

TEST(JaxDump, ComputationCalledFileNamesIsStillAComputation) {
  const Module module = ParseModule("HloModule m\nFileNames {\n  ROOT p = f32[] parameter(0)\n}\n", "t.hlo");
  EXPECT_EQ(module.entry->name, "FileNames");
}

TEST(JaxDump, BrokenTablesFailAtTheirLocation) {
  EXPECT_THAT(ParseError(WithTables("FileNames\n2 \"f.py\"\n")),
              HasSubstr("bad.hlo:4:1: FileNames entry 2 out of order (expected 1)"));
  EXPECT_THAT(ParseError(WithTables("FileNames\n1 f.py\n")), HasSubstr("bad.hlo:4:3: expected a quoted file name"));
  EXPECT_THAT(ParseError(WithTables("FileNames\n1 \"f.py\n")), HasSubstr("unterminated string"));
  EXPECT_THAT(ParseError(WithTables("FileNames\n1 \"f.py\"\nFileNames\n1 \"g.py\"\n")),
              HasSubstr("bad.hlo:5:1: second FileNames table"));
  EXPECT_THAT(ParseError(WithTables("StackFrames\n1 {file_location_id=1 parent_frame_id=1\n")),
              HasSubstr("'}' closing a StackFrames entry"));
  EXPECT_THAT(ParseError(WithTables("StackFrames\n1 {file_location_id=-1}\n")),
              HasSubstr("a non-negative file_location_id"));
  // References between tables and from instructions are checked.
  EXPECT_THAT(ParseError(WithTables("StackFrames\n1 {file_location_id=4 parent_frame_id=1}\n")),
              HasSubstr("bad.hlo:4:1: file_location_id 4 is not in the table (it has 0 entries)"));
  EXPECT_THAT(ParseError(WithTables(kTables, "9")),
              HasSubstr("stack_frame_id 9 is not in the table (it has 1 entries)"));
}

// XLA prints modules without their tables too (the corpus's ResNet-50 dump): the instructions'
// stack_frame_id then refers to nothing the file holds, and the source is simply unknown.
TEST(JaxDump, StackFrameIdsWithoutTablesAreKeptButNameNoSource) {
  const Module module = ParseModule(
      "HloModule m\n\nENTRY %e (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2]{0} parameter(0), "
      "metadata={op_name=\"jit(f)/p\" stack_frame_id=10}\n}\n",
      "t.hlo");
  EXPECT_EQ(module.entry->root->metadata.stack_frame_id, 10);
  EXPECT_EQ(module.SourceOf(*module.entry->root), "");
}

TEST(JaxDump, UnsupportedOpNamesThePythonLine) {
  const std::string text = "HloModule m\n\n" + kTables +
                           "\nENTRY %e (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n"
                           "  ROOT %s = f32[2]{0} cholesky(%p), lower=true, "
                           "metadata={op_name=\"jit(f)/sort\" stack_frame_id=1}\n}\n";
  EXPECT_THAT(ParseError(text),
              HasSubstr("bad.hlo:17:23: unsupported op 'cholesky' in instruction 's' (traced at f.py:3:11 (f))"));
  // Without metadata, or with a frame the tables lack, the message is the plain one.
  EXPECT_THAT(ParseError("ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT s = f32[2] cholesky(p), lower=true\n}\n"),
              ::testing::EndsWith("unsupported op 'cholesky' in instruction 's'"));
  EXPECT_THAT(ParseError(WithTables(kTables, "1").replace(WithTables(kTables, "1").find("negate"), 6, "sorted")),
              HasSubstr("unsupported op 'sorted' in instruction 'n' (traced at f.py:3:11 (f))"));
}

// jax.nn.logsumexp writes is-finite, jax.nn.gelu(approximate=False) and jax.scipy.special.erf
// write erf: both run on the interpreter (host steps).
TEST(JaxDump, IsFiniteAndErf) {
  const Literal finite = testing::RunText(
      "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT f = pred[4] is-finite(p)\n}\n",
      {testing::F32({4}, {1.0, INFINITY, -INFINITY, NAN})});
  EXPECT_EQ(finite.shape.type, ElementType::kPred);
  EXPECT_EQ(finite.values, (std::vector<double>{1, 0, 0, 0}));
  const Literal erf = testing::RunText("ENTRY e {\n  p = f32[3] parameter(0)\n  ROOT f = f32[3] erf(p)\n}\n",
                                       {testing::F32({3}, {0.0, 0.5, -2.0})});
  EXPECT_EQ(erf.values, (std::vector<double>{0.0, double(float(std::erf(0.5))), double(float(std::erf(-2.0)))}));
  EXPECT_THAT(testing::ErrorOf([] {
                testing::ParseAndVerify("ENTRY e {\n  p = s32[3] parameter(0)\n  ROOT f = pred[3] is-finite(p)\n}\n");
              }),
              HasSubstr("needs a floating-point operand"));
}

TEST(JaxDump, UnknownFieldsOfNewerXlaAreSkipped) {
  const Module module = ParseModule(
      WithTables("FileNames\n1 \"f.py\"\nFunctionNames\n1 \"f\"\nFileLocations\n"
                 "1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=11 end_column=17 flavour=\"x\"}\n"
                 "StackFrames\n1 {file_location_id=1 parent_frame_id=1 inlined=true}\n"),
      "t.hlo");
  EXPECT_EQ(module.SourceOf(*module.entry->root), "f.py:3:11 (f)");
}

}  // namespace
}  // namespace systole::hlo
