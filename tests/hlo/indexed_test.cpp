// gather, scatter, sort, dynamic-update-slice and select-and-scatter on the interpreter: JAX's
// jnp.take, .at[].add/set, vmapped versions of both (batching dimensions), jnp.sort,
// jnp.argsort, lax.scan, lax.dynamic_update_slice and max-pool gradients as the pinned JAX
// writes them, against JAX's own CPU outputs
// (tests/hlo/data/jax_*.{hlo,npz}, written by jax_dumps.py) bit for bit; then XLA's
// out-of-range rules, IEEE total order, and malformed attributes refused with what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/hlo/hlo_test_util.hpp"
#include "tests/hlo/jax_fixture.hpp"

namespace systole::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every element equal, NaN to NaN and each zero with its sign: these fixtures compute exactly.
void ExpectIdenticalToJax(const std::string& name) {
  const std::vector<testing::JaxRun> runs = testing::RunJaxFixture(name);
  ASSERT_FALSE(runs.empty());
  for (std::size_t run = 0; run < runs.size(); ++run) {
    const std::vector<double>& got = runs[run].got.values;
    const std::vector<double>& expected = runs[run].expected.values;
    ASSERT_EQ(got.size(), expected.size()) << name << " run " << run;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const bool same = std::isnan(expected[k]) ? std::isnan(got[k])
                                                : got[k] == expected[k] && std::signbit(got[k]) == std::signbit(expected[k]);
      EXPECT_TRUE(same) << name << " run " << run << " element " << k << ": got " << got[k] << ", JAX "
                        << expected[k];
    }
  }
}

TEST(Indexed, TakeMatchesJaxOutOfRangeRowsIncluded) { ExpectIdenticalToJax("jax_take"); }
TEST(Indexed, TakeGradientAddsRepeatedIdsAsJaxDoes) { ExpectIdenticalToJax("jax_take_grad"); }
TEST(Indexed, ScatterSetSkipsOutOfRangeIdsAsJaxDoes) { ExpectIdenticalToJax("jax_scatter_set"); }
TEST(Indexed, VmappedTakeUsesBatchingDimensions) { ExpectIdenticalToJax("jax_batched_take"); }
// select-and-scatter: a 2x2/2 max pool's gradient on small integers with ties (the first of
// tied elements in the window gets it), and 3x3/2 windows that overlap (an element picked by
// two windows gets both).
TEST(Indexed, MaxPoolGradientGoesToTheFirstOfTiedElementsAsJaxDoes) { ExpectIdenticalToJax("jax_max_pool_grad"); }
TEST(Indexed, OverlappingPoolGradientAddsWhereWindowsPickTheSameElement) {
  ExpectIdenticalToJax("jax_overlapping_pool_grad");
}
TEST(Indexed, VmappedTakeGradientUsesBatchingDimensions) { ExpectIdenticalToJax("jax_batched_take_grad"); }
TEST(Indexed, SortOrdersNansAndSignedZerosAsJaxDoes) { ExpectIdenticalToJax("jax_sort_rows"); }
TEST(Indexed, ArgsortIsAVariadicStableSort) { ExpectIdenticalToJax("jax_argsort_columns"); }
TEST(Indexed, ScanStacksItsOutputsWithDynamicUpdateSlice) { ExpectIdenticalToJax("jax_scan_cumsum"); }
TEST(Indexed, DynamicUpdateSliceClampsItsStartAsJaxDoes) { ExpectIdenticalToJax("jax_update_slice"); }

TEST(Indexed, GatherClampsEachStartSoTheWindowFits) {
  // Windows of 2 rows from a 4-row table: starts 3 and -5 clamp to 2 and 0.
  const Literal result = testing::RunText(R"(HloModule m
ENTRY e { t = f32[4,2] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = f32[2,2,2] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0},
      index_vector_dim=1, slice_sizes={2,2} }
)",
                                          {testing::F32({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}),
                                           testing::Array(ElementType::kS32, {2, 1}, {3, -5})});
  EXPECT_THAT(result.values, ElementsAre(20, 21, 30, 31, 0, 1, 10, 11));
}

TEST(Indexed, ScatterSkipsAWindowThatDoesNotFitAndFoldsInUpdateOrder) {
  // to_apply is subtract(old, new): the order of repeated updates shows in the result.
  const Literal result = testing::RunText(R"(HloModule m
sub { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b) }
ENTRY e { x = f32[4] parameter(0)
  i = s32[4] parameter(1)
  u = f32[4] parameter(2)
  ROOT s = f32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sub }
)",
                                          {testing::F32({4}, {100, 100, 100, 100}),
                                           testing::Array(ElementType::kS32, {4}, {1, 4, 1, -1}),
                                           testing::F32({4}, {1, 2, 3, 4})});
  EXPECT_THAT(result.values, ElementsAre(100, 96, 100, 100));
}

TEST(Indexed, TotalOrderCompareRanksNansZerosAndInfinities) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> ascending = {-nan, -inf, -1.5, -0.0, 0.0, 2.0, inf, nan};
  const std::string text = R"(HloModule m
ENTRY e { a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  ROOT lt = pred[8] compare(a, b), direction=LT, type=TOTALORDER }
)";
  for (std::size_t shift = 1; shift < ascending.size(); ++shift) {
    std::vector<double> later(ascending.size());
    for (std::size_t k = 0; k < ascending.size(); ++k) later[k] = ascending[(k + shift) % ascending.size()];
    const Literal lt = testing::RunText(text, {testing::F32({8}, ascending), testing::F32({8}, later)});
    for (std::size_t k = 0; k < ascending.size(); ++k) {
      EXPECT_EQ(lt.values[k], k + shift < ascending.size() ? 1.0 : 0.0) << ascending[k] << " < " << later[k];
    }
  }
  ASSERT_TRUE(std::signbit(-nan));
}

TEST(Indexed, SortWithATupleOfKeysKeepsTiesInOrder) {
  const Literal result = testing::RunText(R"(HloModule m
less { a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT }
ENTRY e { k = s32[2,3] parameter(0)
  v = f32[2,3] parameter(1)
  ROOT s = (s32[2,3], f32[2,3]) sort(k, v), dimensions={1}, to_apply=less }
)",
                                          {testing::Array(ElementType::kS32, {2, 3}, {2, 1, 2, 0, 0, -1}),
                                           testing::F32({2, 3}, {10, 11, 12, 20, 21, 22})});
  ASSERT_EQ(result.elements.size(), 2u);
  EXPECT_THAT(result.elements[0].values, ElementsAre(1, 2, 2, -1, 0, 0));
  EXPECT_THAT(result.elements[1].values, ElementsAre(11, 10, 12, 22, 20, 21));
}

struct Malformed {
  const char* what;
  const char* instruction;
  const char* message;
};

class IndexedMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(IndexedMalformed, IsRefusedWithTheReason) {
  const std::string text = std::string(R"(HloModule m
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
cmp { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e { t = f32[10,4] parameter(0)
  i = s32[6,1] parameter(1)
  u = f32[6,4] parameter(2)
  f = f32[6] parameter(3)
  )") + GetParam().instruction + " }\n";
  const std::string error = testing::ErrorOf([&] { testing::ParseAndVerify(text); });
  EXPECT_THAT(error, HasSubstr(GetParam().message)) << GetParam().what;
  EXPECT_THAT(error, HasSubstr("test.hlo:")) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    Attributes, IndexedMalformed,
    ::testing::Values(
        Malformed{"no index_vector_dim",
                  "ROOT g = f32[6,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                  "slice_sizes={1,4}",
                  "index_vector_dim -1 is out of range"},
        Malformed{"slice_sizes of the wrong rank",
                  "ROOT g = f32[6,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                  "index_vector_dim=1, slice_sizes={1}",
                  "slice_sizes has 1 entries for an operand of rank 2"},
        Malformed{"slice larger than the operand",
                  "ROOT g = f32[6,1,5] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, "
                  "index_vector_dim=1, slice_sizes={1,5}",
                  "slice size 5 of dimension 1 is outside [0, 4]"},
        Malformed{"unsorted offset_dims",
                  "ROOT g = f32[1,6,4] gather(t, i), offset_dims={2,0}, collapsed_slice_dims={}, start_index_map={0}, "
                  "index_vector_dim=1, slice_sizes={1,4}",
                  "offset_dims {2,0} must be in increasing order"},
        Malformed{"start_index_map longer than the index vectors",
                  "ROOT g = f32[6,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1}, "
                  "index_vector_dim=1, slice_sizes={1,4}",
                  "start_index_map has 2 entries but the index vectors have 1"},
        Malformed{"printed shape disagrees",
                  "ROOT g = f32[6,3] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                  "index_vector_dim=1, slice_sizes={1,4}",
                  "f32[6,4]"},
        Malformed{"float indices",
                  "ROOT g = f32[6,4] gather(t, u), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                  "index_vector_dim=1, slice_sizes={1,4}",
                  "start indices must be integers"},
        Malformed{"scatter updates of the wrong size",
                  "ROOT s = f32[10,4] scatter(t, i, f), update_window_dims={1}, inserted_window_dims={0}, "
                  "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
                  "updates f32[6] must have rank 2"},
        Malformed{"variadic scatter",
                  "ROOT s = (f32[10,4], f32[10,4]) scatter(t, t, i, u, u), update_window_dims={1}, "
                  "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
                  "variadic scatter is not supported"},
        Malformed{"comparator returning f32",
                  "ROOT s = f32[6] sort(f), dimensions={0}, to_apply=cmp",
                  "comparator 'cmp' must return pred[], returns f32[]"},
        Malformed{"sort without a dimension",
                  "ROOT s = f32[6] sort(f), to_apply=cmp",
                  "needs dimensions={d}"},
        Malformed{"is_stable not a boolean",
                  "ROOT s = f32[6] sort(f), dimensions={0}, is_stable=maybe, to_apply=cmp",
                  "expected true or false, found 'maybe'"},
        Malformed{"unknown comparison type",
                  "ROOT c = pred[6] compare(f, f), direction=LT, type=SIDEWAYS",
                  "unknown comparison type 'SIDEWAYS'"},
        Malformed{"dynamic-update-slice of another rank",
                  "ROOT d = f32[10,4] dynamic-update-slice(t, f, i, i)",
                  "must have the operand's element type and rank"},
        Malformed{"select-and-scatter source not shaped like the windows",
                  "z = f32[] constant(0)\n  ROOT s = f32[10,4] select-and-scatter(t, u, z), "
                  "window={size=2x2 stride=2x2}, select=cmp, scatter=add",
                  "has 2 window position(s) per dimension [5, 2]"},
        Malformed{"select-and-scatter select returning f32",
                  "z = f32[] constant(0)\n  v = f32[5,2] broadcast(z), dimensions={}\n  ROOT s = f32[10,4] "
                  "select-and-scatter(t, v, z), window={size=2x2 stride=2x2}, select=cmp, scatter=add",
                  "select 'cmp' must return pred[], returns f32[]"},
        Malformed{"select-and-scatter without select=",
                  "z = f32[] constant(0)\n  v = f32[5,2] broadcast(z), dimensions={}\n  ROOT s = f32[10,4] "
                  "select-and-scatter(t, v, z), window={size=2x2 stride=2x2}, scatter=add",
                  "names only one of its two computations (select= and scatter=)"}));

}  // namespace
}  // namespace systole::hlo
