// AveragePooling2D: known outputs, "same" padding that leaves padded pixels out of the mean (as
// TensorFlow), conformance, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/average_pooling2d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;
using torchfit::testing::run_layer;

TEST(AveragePooling2D, KnownTensor) {
  // 4×4 arange, pool 2 (stride 2): means of the four 2×2 blocks.
  auto x = at::arange(16, at::kFloat).reshape({1, 1, 4, 4});
  auto y = run_layer(AveragePooling2D().ptr(), {4, 4, 1}, x);
  EXPECT_TRUE(at::allclose(y, at::tensor({2.5f, 4.5f, 10.5f, 12.5f}).reshape({1, 1, 2, 2}))) << y;
}

TEST(AveragePooling2D, SamePaddingExcludesPaddedPixels) {
  // 3×3 arange, pool 2 stride 2 "same": out 2×2, one padded row/column at the bottom/right (TensorFlow),
  // windows {0,1,3,4}, {2,5}, {6,7}, {8}: the mean is over real pixels only.
  auto x = at::arange(9, at::kFloat).reshape({1, 1, 3, 3});
  auto y = run_layer(AveragePooling2D(AveragePooling2DOptions(2).padding("same")).ptr(), {3, 3, 1}, x);
  EXPECT_TRUE(at::allclose(y, at::tensor({2.0f, 3.5f, 6.5f, 8.0f}).reshape({1, 1, 2, 2}))) << y;
  // Strides other than the pool: 3×3 windows, stride 1, "same" keeps 3×3; the corner averages 2×2 pixels.
  auto z =
      run_layer(AveragePooling2D(AveragePooling2DOptions(3).strides(std::vector<int64_t>{1, 1}).padding("same")).ptr(),
                {3, 3, 1}, x);
  ASSERT_EQ(z.sizes().vec(), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_FLOAT_EQ(z[0][0][0][0].item<float>(), (0 + 1 + 3 + 4) / 4.0f);
  EXPECT_FLOAT_EQ(z[0][0][1][1].item<float>(), 4.0f);
}

TEST(AveragePooling2D, ConformanceAndErrors) {
  expect_layer_conformance(AveragePooling2D().ptr(), LayerConformance({8, 9, 3}, {4, 4, 3}));
  expect_layer_conformance(AveragePooling2D(AveragePooling2DOptions({3, 2}).padding("same")).ptr(),
                           LayerConformance({7, 5, 2}, {3, 3, 2}));
  EXPECT_THROW(AveragePooling2D(AveragePooling2DOptions(2).padding("full")), ConfigError);
  EXPECT_THROW(AveragePooling2D(AveragePooling2DOptions(0)), ConfigError);
  Sequential m;
  EXPECT_THROW(m->add(AveragePooling2D(AveragePooling2DOptions(4).input_shape(Shape{3, 3, 1}))), ConfigError);
  Sequential m2;
  EXPECT_THROW(m2->add(AveragePooling2D(AveragePooling2DOptions(2).input_shape(Shape{8}))), ConfigError);
}

// Values against the float64 NumPy reference of TensorFlow's avg_pool: odd sizes, strides 2 and (2, 3), "same"
// with the odd pixel after (padded pixels never win a maximum nor enter a mean), and "valid".
TEST(AveragePooling2D, MatchesTensorFlowAtOddSizesAndStrides) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  torchfit::testing::expect_pooling_matches_tensorflow<AveragePooling2D>("avg_pool");
}
