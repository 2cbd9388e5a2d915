// Flatten: NCHW order.
#include <gtest/gtest.h>

#include <torchfit/layers/flatten.h>
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::check_layer;

TEST(Flatten, NchwOrder) {
  check_layer(Flatten().ptr(), {36, 36, 64}, {82944}, 0);
  Flatten f(FlattenOptions().input_shape(Shape{1, 2, 2}));  // H=1, W=2, C=2
  Sequential m;
  m->add(f);
  auto x = at::arange(4, at::kFloat).reshape({1, 2, 1, 2});  // (N, C, H, W)
  auto y = m->forward(x);
  EXPECT_TRUE(at::equal(y, at::arange(4, at::kFloat).reshape({1, 4})));  // channel-major
}
