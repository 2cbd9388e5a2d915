// GlobalAveragePooling2D and GlobalMaxPooling2D: known values, conformance, names, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/global_pooling2d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;
using torchfit::testing::run_layer;

TEST(GlobalPooling2D, KnownValues) {
  // Channel 0 = 0..5, channel 1 = 10·(0..5) over a 2×3 image.
  auto x = at::stack({at::arange(6, at::kFloat), at::arange(6, at::kFloat) * 10}).reshape({1, 2, 2, 3});
  auto avg = run_layer(GlobalAveragePooling2D().ptr(), {2, 3, 2}, x);
  EXPECT_TRUE(at::allclose(avg, at::tensor({2.5f, 25.0f}).reshape({1, 2}))) << avg;
  auto mx = run_layer(GlobalMaxPooling2D().ptr(), {2, 3, 2}, x);
  EXPECT_TRUE(at::equal(mx, at::tensor({5.0f, 50.0f}).reshape({1, 2}))) << mx;
}

TEST(GlobalPooling2D, ConformanceNamesAndErrors) {
  expect_layer_conformance(GlobalAveragePooling2D().ptr(), LayerConformance({5, 4, 3}, {3}));
  expect_layer_conformance(GlobalMaxPooling2D().ptr(), LayerConformance({5, 4, 3}, {3}));
  EXPECT_EQ(keras_snake_case("GlobalMaxPooling2D"), "global_max_pooling2d");
  Sequential m;
  EXPECT_THROW(m->add(GlobalAveragePooling2D(GlobalPooling2DOptions().input_shape(Shape{7}))), ConfigError);
}
