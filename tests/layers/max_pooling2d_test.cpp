// MaxPooling2D: shapes, config, the maximum of each window.
#include <gtest/gtest.h>

#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/model/sequential.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::check_layer;

TEST(MaxPooling2D, ShapesConfig) {
  check_layer(MaxPooling2D(MaxPooling2DOptions(2)).ptr(), {148, 148, 32}, {74, 74, 32}, 0);
  check_layer(MaxPooling2D(MaxPooling2DOptions(3).strides(std::vector<int64_t>{2, 2}).padding("same")).ptr(), {7, 8, 2},
              {4, 4, 2}, 0);
  Sequential m;
  EXPECT_THROW(m->add(MaxPooling2D(MaxPooling2DOptions(4).input_shape(Shape{3, 3, 1}))), ConfigError);
}

TEST(MaxPooling2D, TakesTheMaximum) {
  MaxPooling2D p(MaxPooling2DOptions(2).input_shape(Shape{2, 2, 1}));
  Sequential m;
  m->add(p);
  auto x = at::tensor({1.0f, 5.0f, -2.0f, 3.0f}).reshape({1, 1, 2, 2});
  EXPECT_FLOAT_EQ(m->forward(x).item<float>(), 5.0f);
}

// Values against the float64 NumPy reference of TensorFlow's max_pool: odd sizes, strides 2 and (2, 3), "same"
// with the odd pixel after (padded pixels never win a maximum nor enter a mean), and "valid".
TEST(MaxPooling2D, MatchesTensorFlowAtOddSizesAndStrides) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  torchfit::testing::expect_pooling_matches_tensorflow<MaxPooling2D>("max_pool");
}
