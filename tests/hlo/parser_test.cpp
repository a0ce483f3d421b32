// The parser on every syntax variant real HLO dumps use, each in a small inline module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/hlo/hlo_test_util.hpp"

namespace systole::hlo {
namespace {

using testing::ParseAndVerify;

TEST(HloParser, ModuleHeaderWithAttributes) {
  const Module module = ParseAndVerify(R"(
HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2]{0})->f32[2]{0}}, allow_spmd_sharding_propagation_to_output={true}
ENTRY main.1 {
  ROOT x = f32[2]{0} parameter(0)
})");
  EXPECT_EQ(module.name, "jit_f");
  EXPECT_EQ(module.entry->name, "main.1");
  EXPECT_EQ(module.entry->root->opcode, Opcode::kParameter);
}

TEST(HloParser, OldHeaderEndsWithColon) {
  const Module module = ParseAndVerify("HloModule old_style:\n\nENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n");
  EXPECT_EQ(module.name, "old_style");
  EXPECT_EQ(module.entry->name, "e");
}

TEST(HloParser, NoHeaderNoEntryNoRootDefaultToLast) {
  const Module module = ParseAndVerify(R"(
first {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
second {
  a = f32[] parameter(0)
  b = f32[] negate(a)
  c = f32[] abs(b)
})");
  EXPECT_EQ(module.name, "module");
  EXPECT_EQ(module.computations.size(), 2u);
  EXPECT_EQ(module.entry->name, "second");
  EXPECT_EQ(module.entry->root->name, "c");
  EXPECT_EQ(module.computations[0]->root->name, "n");
}

TEST(HloParser, NamesWithAndWithoutPercent) {
  const Module module = ParseAndVerify(R"(
ENTRY %e {
  %a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  %c = f32[4] add(a, %b)
  ROOT d = f32[4] multiply(%c, c)
})");
  const Instruction* d = module.entry->root;
  ASSERT_EQ(d->operands.size(), 2u);
  EXPECT_EQ(d->operands[0]->name, "c");
  EXPECT_EQ(d->operands[0]->operands[0]->name, "a");
  EXPECT_EQ(d->operands[0]->operands[1]->name, "b");
}

TEST(HloParser, OperandsWithPrintedShapes) {
  const Module module = ParseAndVerify(R"(
ENTRY e {
  a = f32[4]{0} parameter(0)
  t = (f32[4], f32[4]) tuple(f32[4]{0} %a, f32[4] a)
  ROOT g = f32[4] get-tuple-element((f32[4], f32[4]) %t), index=1
})");
  EXPECT_EQ(module.entry->root->tuple_index, 1);
  EXPECT_EQ(module.entry->root->operands[0]->name, "t");
}

TEST(HloParser, ShapesLayoutsTilesTuplesScalars) {
  const Module module = ParseAndVerify(R"(
ENTRY e {
  a = f32[8,128]{1,0:T(8,128)} parameter(0)
  b = bf16[2,3]{0,1:T(8,128)(2,1)S(1)} parameter(1)
  c = f32[] parameter(2)
  d = (f32[8,128]{1,0}, (bf16[2,3], f32[])) parameter(3)
  ROOT t = (f32[8,128], bf16[2,3], f32[]) tuple(a, b, c)
})");
  const std::vector<Instruction*> parameters = module.entry->Parameters();
  EXPECT_EQ(parameters[0]->shape.ToString(), "f32[8,128]");
  EXPECT_EQ(parameters[0]->shape.minor_to_major, (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(parameters[1]->shape.type, ElementType::kBf16);
  EXPECT_EQ(parameters[2]->shape.Rank(), 0u);
  EXPECT_EQ(parameters[2]->shape.Elements(), 1);
  EXPECT_EQ(parameters[3]->shape.ToString(), "(f32[8,128], (bf16[2,3], f32[]))");
}

TEST(HloParser, EveryElementType) {
  for (const char* type : {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "bf16", "f16", "f32", "f64"}) {
    const std::string text = std::string("ENTRY e {\n  ROOT p = ") + type + "[3] parameter(0)\n}\n";
    const Module module = ParseAndVerify(text);
    EXPECT_EQ(ElementTypeName(module.entry->root->shape.type), type);
  }
}

TEST(HloParser, Constants) {
  const Module module = ParseAndVerify(R"(
ENTRY e {
  s = f32[] constant(1.5)
  neg = f32[] constant(-2e-3)
  i = s32[] constant(-7)
  pinf = f32[] constant(inf)
  ninf = bf16[] constant(-inf)
  n = f32[] constant(nan)
  p = pred[2] constant({true, false})
  m = f32[2,3]{1,0} constant({ { 1, 2, 3 }, { 4, 5, 6.5 } })
  old = f32[2]{0} constant(f32[2]{0} {7, 8})
  elided = f32[1000] constant({...})
  empty = f32[0] constant({})
  ROOT t = (f32[], f32[]) tuple(s, neg)
})");
  const Computation& e = *module.entry;
  EXPECT_EQ(e.Find("s")->literal->values[0], 1.5);
  EXPECT_FLOAT_EQ(static_cast<float>(e.Find("neg")->literal->values[0]), -2e-3f);
  EXPECT_EQ(e.Find("i")->literal->values[0], -7);
  EXPECT_TRUE(std::isinf(e.Find("pinf")->literal->values[0]));
  EXPECT_EQ(e.Find("ninf")->literal->values[0], -INFINITY);
  EXPECT_TRUE(std::isnan(e.Find("n")->literal->values[0]));
  EXPECT_EQ(e.Find("p")->literal->values, (std::vector<double>{1, 0}));
  EXPECT_EQ(e.Find("m")->literal->values, (std::vector<double>{1, 2, 3, 4, 5, 6.5}));
  EXPECT_EQ(e.Find("old")->literal->values, (std::vector<double>{7, 8}));
  EXPECT_TRUE(e.Find("elided")->literal_elided);
  EXPECT_TRUE(e.Find("empty")->literal->values.empty());
}

TEST(HloParser, Bf16ConstantsAreRoundedToBf16) {
  const Module module = ParseAndVerify("ENTRY e {\n  ROOT c = bf16[] constant(0.01001)\n}\n");
  EXPECT_EQ(module.entry->root->literal->values[0], 0.010009765625);  // nearest bf16
}

TEST(HloParser, AttributesItDoesNotNeedAreSkipped) {
  const Module module = ParseAndVerify(R"(
ENTRY e {
  a = f32[2] parameter(0), sharding={replicated}, metadata={op_name="jit(f)/add{x}, y" source_file="/a.py" source_line=3}
  b = f32[2] parameter(1), sharding={devices=[2]0,1}, frontend_attributes={_xla_compute_type="host"}
  ROOT c = f32[2] add(a, b), backend_config="{\"flag\": true, \"n\": [1,2]}", metadata={op_name="add"}, sharding, statistics={visualizing_index=1}
}
)");
  EXPECT_EQ(module.entry->root->opcode, Opcode::kAdd);
  const Module braced = ParseAndVerify(
      "ENTRY e {\n  ROOT a = f32[2] parameter(0), backend_config={\"outer\":{\"inner\":[1,{}]}}, control-predecessors={}\n}\n");
  EXPECT_EQ(braced.entry->root->opcode, Opcode::kParameter);
}

TEST(HloParser, CommentsAnywhere) {
  const Module module = ParseAndVerify(R"(
// leading comment
HloModule m /* block */, entry_computation_layout={()->f32[]}
/* a block
   comment over lines */
ENTRY e { // trailing
  a = /*index=0*/ f32[] parameter(0) // after
  ROOT t = (f32[], /*index=1*/f32[]) tuple(a, /* inline */ a)
} // e
)");
  EXPECT_EQ(module.entry->root->operands.size(), 2u);
}

TEST(HloParser, SeveralModulesSeparatedByDashes) {
  const std::vector<Module> modules = ParseModules(R"(HloModule one
ENTRY e {
  ROOT a = f32[] parameter(0)
}
// -----
HloModule two
ENTRY e {
  ROOT a = s32[] parameter(0)
}
  // -----
)");
  ASSERT_EQ(modules.size(), 2u);
  EXPECT_EQ(modules[0].name, "one");
  EXPECT_EQ(modules[1].name, "two");
  EXPECT_THAT(testing::ErrorOf([&] { ParseModule("HloModule a\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n// -----\n"
                                                 "HloModule b\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n"); }),
              ::testing::HasSubstr("expected one HLO module, found 2"));
}

TEST(HloParser, SelectsOneModuleByIndexOrNameKeepingItsLines) {
  const std::string text =
      "HloModule a\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n// -----\n// only a comment\n// -----\n"
      "HloModule b, is_scheduled=true\nENTRY e {\n  ROOT p = f33[] parameter(0)\n}\n";
  EXPECT_EQ(ParseModule(SelectModuleText(text, "x.hlo", "0"), "x.hlo").name, "a");
  EXPECT_EQ(ParseModule(SelectModuleText(text, "x.hlo", "a"), "x.hlo").name, "a");
  // The comment-only piece is no module: index 1 is `b`, and its error keeps the file's line 10.
  for (const char* selector : {"1", "b"}) {
    const std::string selected = SelectModuleText(text, "x.hlo", selector);
    EXPECT_THAT(testing::ErrorOf([&] { ParseModule(selected, "x.hlo"); }),
                ::testing::StartsWith("x.hlo:10:12: expected an element type"));
  }
  const std::string error = testing::ErrorOf([&] { SelectModuleText(text, "x.hlo", "c"); });
  EXPECT_THAT(error, ::testing::HasSubstr("no module named 'c': the file holds 2 module(s): 0 a (line 1), 1 b (line 7)"));
  EXPECT_THAT(testing::ErrorOf([&] { SelectModuleText(text, "x.hlo", "2"); }),
              ::testing::HasSubstr("no module numbered '2'"));
}

TEST(HloParser, ErrorsInLaterModulesReportTheirRealLine) {
  const std::string error = testing::ErrorOf([] {
    ParseModules("HloModule a\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n// -----\nHloModule b\nENTRY e {\n  ROOT p = f33[] parameter(0)\n}\n", "x.hlo");
  });
  EXPECT_THAT(error, ::testing::StartsWith("x.hlo:8:12: expected an element type"));
}

TEST(HloParser, MultiLineInstructionsAndSignatures) {
  const Module module = ParseAndVerify(R"(
HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x,
                      f32[] %y)
}

ENTRY %main (a: f32[2,3], b: (f32[], s32[])) -> f32[2] {
  %a = f32[2,3]
       parameter(0)
  %b = (f32[], s32[]) parameter(1)
  %zero = f32[] constant(0)
  ROOT %r = f32[2]
      reduce(%a, %zero),
      dimensions={1},
      to_apply=%add
}
)");
  EXPECT_EQ(module.entry->root->called[0]->name, "add");
  EXPECT_EQ(module.entry->root->dimensions, (std::vector<std::int64_t>{1}));
}

TEST(HloParser, ForwardReferencesResolve) {
  const Module module = ParseAndVerify(R"(
ENTRY e {
  ROOT r = f32[] add(x, x)
  x = f32[] parameter(0)
})");
  EXPECT_EQ(module.entry->root->operands[0]->name, "x");
}

TEST(HloParser, ConvolutionAttributes) {
  const Module module = ParseAndVerify(R"(
ENTRY e {
  x = f32[1,4,9,9] parameter(0)
  k = f32[3,3,2,6] parameter(1)
  ROOT c = f32[1,6,9,14] convolution(x, k), window={size=3x3 stride=2x1 pad=1_2x0_1 lhs_dilate=2x2 rhs_dilate=1x2 rhs_reversal=0x1}, dim_labels=bf01_01io->bf01, feature_group_count=2, batch_group_count=1
})");
  const Instruction& c = *module.entry->root;
  ASSERT_EQ(c.window.size(), 2u);
  EXPECT_EQ(c.window[0].size, 3);
  EXPECT_EQ(c.window[0].stride, 2);
  EXPECT_EQ(c.window[0].pad_low, 1);
  EXPECT_EQ(c.window[0].pad_high, 2);
  EXPECT_EQ(c.window[1].pad_high, 1);
  EXPECT_EQ(c.window[1].lhs_dilation, 2);
  EXPECT_EQ(c.window[1].rhs_dilation, 2);
  EXPECT_FALSE(c.window[0].reversal);
  EXPECT_TRUE(c.window[1].reversal);
  EXPECT_EQ(c.feature_group_count, 2);
  EXPECT_EQ(c.conv_dims.input_batch, 0);
  EXPECT_EQ(c.conv_dims.input_feature, 1);
  EXPECT_EQ(c.conv_dims.input_spatial, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(c.conv_dims.kernel_spatial, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(c.conv_dims.kernel_input_feature, 2);
  EXPECT_EQ(c.conv_dims.kernel_output_feature, 3);
}

TEST(HloParser, DimLabelsWithPermutedSpatialDigits) {
  const Module module = ParseAndVerify(R"(
ENTRY e {
  x = f32[5,1,7,2] parameter(0)
  k = f32[2,4,3,3] parameter(1)
  ROOT c = f32[4,7,5,1] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=1b0f_io10->f01b
})");
  const ConvDimensionNumbers& dn = module.entry->root->conv_dims;
  EXPECT_EQ(dn.input_spatial, (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(dn.kernel_spatial, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(dn.output_feature, 0);
  EXPECT_EQ(dn.output_batch, 3);
}

TEST(HloParser, DotSlicePadCompareAndScalarAttributes) {
  const Module module = ParseAndVerify(R"(
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,default}
  s = f32[1,2,3] slice(d), slice={[1:2], [0:3:2], [0:5:2]}
  z = f32[] constant(0)
  p = f32[3,4,7] pad(s, z), padding=0_2x1_0_1x0_0_2
  c1 = pred[3,4,7] compare(p, p), direction=GT
  c2 = pred[3,4,7] compare(p, p), comparison_direction=LE, type=TOTALORDER
  i = s32[4,3] iota(), iota_dimension=1
  r = f32[3,4,7] reduce-precision(p), exponent_bits=5, mantissa_bits=10
  ROOT t = (pred[3,4,7], pred[3,4,7]) tuple(c1, c2)
})");
  const Computation& e = *module.entry;
  EXPECT_EQ(e.Find("d")->dot_dims.lhs_contracting, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(e.Find("d")->dot_dims.rhs_batch, (std::vector<std::int64_t>{0}));
  ASSERT_EQ(e.Find("s")->slice.size(), 3u);
  EXPECT_EQ(e.Find("s")->slice[1].stride, 2);
  EXPECT_EQ(e.Find("s")->slice[0].stride, 1);
  EXPECT_EQ(e.Find("p")->padding[1].interior, 1);
  EXPECT_EQ(e.Find("p")->padding[2].interior, 2);
  EXPECT_EQ(e.Find("c1")->comparison, ComparisonDirection::kGt);
  EXPECT_EQ(e.Find("c2")->comparison, ComparisonDirection::kLe);
  EXPECT_EQ(e.Find("i")->iota_dimension, 1);
  EXPECT_EQ(e.Find("r")->exponent_bits, 5);
  EXPECT_EQ(e.Find("r")->mantissa_bits, 10);
}

TEST(HloParser, CallsAndToApplyResolveToComputations) {
  const Module module = ParseAndVerify(R"(
HloModule m
ENTRY main {
  a = f32[2] parameter(0)
  ROOT c = f32[2] call(a), to_apply=%relu
}
relu {
  x = f32[2] parameter(0)
  z = f32[] constant(0)
  b = f32[2] broadcast(z), dimensions={}
  ROOT m = f32[2] maximum(x, b)
})");
  EXPECT_EQ(module.entry->name, "main");
  EXPECT_EQ(module.entry->root->called[0], module.Find("relu"));
}

TEST(HloParser, LocationsAreRecorded) {
  const Module module = ParseModule("ENTRY e {\n  a = f32[] parameter(0)\n    ROOT b = f32[] negate(a)\n}\n", "f.hlo");
  EXPECT_EQ(module.entry->root->location.ToString(), "f.hlo:3:10");
}

}  // namespace
}  // namespace systole::hlo
