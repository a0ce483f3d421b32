// The small CNNs trained on `ref` for JAX's 10 epochs (~100 s each, so in `make test-long`):
// the final test accuracy is at least 97 % and within one percentage point of JAX's. The pooled
// one has a 2x2 max pool between its convolutions: its gradient (select-and-scatter) runs on the
// host, every convolution and dot on the MXU.
#include <gmock/gmock.h>

#include "tests/training/training_test_util.hpp"

namespace systole::runtime {
namespace {

class CnnLong : public ::testing::TestWithParam<std::string> {};

TEST_P(CnnLong, ReachesTheTargetWithinOnePercentOfJax) {
  const std::string model = GetParam();
  const TrainSummary summary = testing::TrainLikeJax(model + "_sgd", model + "_eval.hlo");
  const testing::JaxReference jax = testing::LoadJaxReference(model + "_sgd");
  ASSERT_TRUE(summary.final_test_accuracy.has_value());
  EXPECT_GE(*summary.final_test_accuracy, 0.97);
  EXPECT_NEAR(*summary.final_test_accuracy, jax.test_accuracy.back(), 0.01);
  std::cout << model << "_sgd: final test accuracy " << *summary.final_test_accuracy << " (JAX "
            << jax.test_accuracy.back() << "), " << summary.device_cycles << " device cycles\n";
}

INSTANTIATE_TEST_SUITE_P(Models, CnnLong, ::testing::Values("cnn", "pool_cnn"));

}  // namespace
}  // namespace systole::runtime
