// Dropout: identity in eval mode, zeroes and scales in training, bad rates.
#include <gtest/gtest.h>

#include <torchfit/layers/dense.h>
#include <torchfit/layers/dropout.h>
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::check_layer;

TEST(Dropout, EvalIsIdentityAndBitIdentical) {
  Sequential m;
  m->add(Dense(DenseOptions(4).input_shape(Shape{4})));
  m->add(Dropout(DropoutOptions(0.5)));
  m->eval();
  auto x = at::ones({1, 4});
  auto a = m->forward(x);
  auto b = m->forward(x);
  EXPECT_TRUE(at::equal(a, b));
}

TEST(Dropout, TrainZeroesAboutHalfAndScalesByTwo) {
  at::manual_seed(3);
  Dropout d(DropoutOptions(0.5));
  d->build({100000});
  d->train();
  auto y = d->forward(at::ones({1, 100000}));
  const double zero_share = (y == 0).to(at::kFloat).mean().item<double>();
  EXPECT_NEAR(zero_share, 0.5, 0.01);
  auto kept = y.masked_select(y != 0);
  EXPECT_TRUE(at::allclose(kept, at::full_like(kept, 2.0)));
}

TEST(Dropout, BadRate) {
  EXPECT_THROW(Dropout(DropoutOptions(1.0)), ConfigError);
  EXPECT_THROW(Dropout(DropoutOptions(-0.1)), ConfigError);
  // Dropout's train() output differs from its eval() output: the conformance check asserts it.
  torchfit::testing::expect_layer_conformance(
      Dropout(DropoutOptions(0.3)).ptr(), torchfit::testing::LayerConformance({7}, {7}).training_changes_output(true));
  torchfit::testing::expect_layer_conformance(
      Dropout(DropoutOptions(0.5)).ptr(),
      torchfit::testing::LayerConformance({3, 3, 2}, {3, 3, 2}).training_changes_output(true));
}
