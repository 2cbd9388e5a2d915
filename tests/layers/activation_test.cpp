// Activation: values and config.
#include <gtest/gtest.h>

#include <torchfit/layers/activation.h>
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::check_layer;

TEST(Activation, ValuesAndConfig) {
  check_layer(Activation("tanh").ptr(), {3, 3, 2}, {3, 3, 2}, 0);
  Activation soft("softmax");
  soft->build({3});
  auto y = soft->forward(at::tensor({1.0f, 2.0f, 3.0f}).reshape({1, 3}));
  EXPECT_NEAR(y.sum().item<double>(), 1.0, 1e-6);
  const double expected = std::exp(3.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(y[0][2].item<double>(), expected, 1e-6);
  Activation relu("relu");
  relu->build({2});
  EXPECT_TRUE(
      at::equal(relu->forward(at::tensor({-1.0f, 2.0f}).reshape({1, 2})), at::tensor({0.0f, 2.0f}).reshape({1, 2})));
  EXPECT_THROW(Activation("gelu2"), ConfigError);
}
