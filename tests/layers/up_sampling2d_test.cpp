// UpSampling2D: nearest (repeats) and bilinear (tf.image.resize with half-pixel centres) against the
// float64 NumPy reference, a hand-derived bilinear case, conformance, config, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/up_sampling2d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(UpSampling2D, Conformance) {
  expect_layer_conformance(UpSampling2D().ptr(), LayerConformance({3, 5, 2}, {6, 10, 2}));
  expect_layer_conformance(UpSampling2D(UpSampling2DOptions({3, 2}).interpolation("bilinear")).ptr(),
                           LayerConformance({3, 5, 2}, {9, 10, 2}));
}

// One row [0, 1] doubled: source x = (i + 0.5) / 2 − 0.5 = −0.25, 0.25, 0.75, 1.25 → clamped 0, 0.25,
// 0.75, 1 (TensorFlow's half-pixel centres; align_corners would give 0, 1/3, 2/3, 1).
TEST(UpSampling2D, BilinearUsesHalfPixelCentres) {
  auto y = torchfit::testing::run_layer(UpSampling2D(UpSampling2DOptions({1, 2}).interpolation("bilinear")).ptr(),
                                        {1, 2, 1}, at::tensor({0.0f, 1.0f}).reshape({1, 1, 1, 2}));
  EXPECT_TRUE(at::allclose(y.flatten(), at::tensor({0.0f, 0.25f, 0.75f, 1.0f}))) << y;
}

TEST(UpSampling2D, MatchesTensorFlowResize) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const std::string interpolation : {"nearest", "bilinear"}) {
    for (const std::vector<int64_t>& size : {std::vector<int64_t>{2, 2}, std::vector<int64_t>{3, 2}}) {
      SCOPED_TRACE(interpolation + " size " + std::to_string(size[0]) + "x" + std::to_string(size[1]));
      auto [x, y] = torchfit::testing::random_forward(
          UpSampling2D(UpSampling2DOptions({size[0], size[1]}).interpolation(interpolation)).ptr(), {5, 4, 2});
      torchfit::testing::expect_matches_reference(
          y, torchfit::testing::keras_reference({{"op", "up_sampling2d"},
                                                 {"x", torchfit::testing::tensor_json(x)},
                                                 {"size", size},
                                                 {"interpolation", interpolation}}));
    }
  }
}

TEST(UpSampling2D, ConfigAndErrors) {
  auto layer =
      layer_from_json({{"class_name", "UpSampling2D"}, {"config", {{"size", {2, 3}}, {"interpolation", "bilinear"}}}});
  EXPECT_EQ(layer->config()["size"], nlohmann::json({2, 3}));
  EXPECT_EQ(layer->config()["interpolation"], "bilinear");
  EXPECT_THROW(UpSampling2D(UpSampling2DOptions(0)), ConfigError);
  EXPECT_THROW(UpSampling2D(UpSampling2DOptions().interpolation("bicubic")), ConfigError);
}
