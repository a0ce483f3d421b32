// The HLS top functions of one configuration (built with -DSYSTOLE_HLS_CONFIG=NAME) against
// the golden model on the same configuration, through the ref device (ref_cases.hpp): random
// MATMUL + MATMUL accumulate + ACTIVATE programs (every function, bias or not, random scale,
// shift, zero point and clamp bounds; for bf16 some rows that cancel, so that the order of
// additions shows), random VECTOR programs (every op, broadcast, bcol, every math function on
// bf16) and random REDUCE programs (max, sum, over elements and over rows), each compared byte
// for byte with the kernels' C simulation. Seeds are printed.
#include <gtest/gtest.h>

#include "hls/vitis/run_case.hpp"
#include "tests/hls/ref_cases.hpp"
#include "tests/util/test_seed.hpp"

namespace systole::hls {
namespace {

TEST(HlsTops, MatmulAndActivateMatchTheGoldenModel) {
  test_cases::Operands rand(test::Seed());
  for (int trial = 0; trial < 60; ++trial) {
    const vectors::MatmulActivateCase c = test_cases::MatmulActivate(rand, trial);
    ASSERT_EQ(vectors::RunTops(c), c.y)
        << "trial " << trial << ": rows " << c.rows << " k " << c.k << " bias " << c.bias
        << " function " << c.function << " scale 0x" << std::hex << c.scale << std::dec
        << " shift " << c.shift << " zero point " << c.zero_point;
  }
}

TEST(HlsTops, VectorMatchesTheGoldenModel) {
  test_cases::Operands rand(test::Seed());
  for (int trial = 0; trial < 60; ++trial) {
    const vectors::VectorCase c = test_cases::Vector(rand);
    ASSERT_EQ(vectors::RunTops(c), c.y) << "trial " << trial << ": rows " << c.rows << " op "
                                        << c.op << " math " << c.math << " function " << c.function
                                        << " broadcast " << c.broadcast << " bcol " << c.bcol;
  }
}

TEST(HlsTops, ReduceMatchesTheGoldenModel) {
  test_cases::Operands rand(test::Seed());
  for (int trial = 0; trial < 60; ++trial) {
    const vectors::ReduceCase c = test_cases::Reduce(rand);
    ASSERT_EQ(vectors::RunTops(c), c.y) << "trial " << trial << ": rows " << c.rows << " elems "
                                        << c.elems << " over rows " << c.over_rows << " op " << c.op
                                        << " scale 0x" << std::hex << c.scale << std::dec
                                        << " shift " << c.shift;
  }
}

}  // namespace
}  // namespace systole::hls
