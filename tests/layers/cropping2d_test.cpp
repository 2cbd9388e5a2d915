// Cropping2D: Keras's cropping forms, shapes, values against the NumPy reference, config keys, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/cropping2d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(Cropping2D, ConformanceForEachKerasForm) {
  expect_layer_conformance(Cropping2D().ptr(), LayerConformance({5, 4, 2}, {5, 4, 2}));
  expect_layer_conformance(Cropping2D(Cropping2DOptions(1)).ptr(), LayerConformance({5, 4, 2}, {3, 2, 2}));
  expect_layer_conformance(Cropping2D(Cropping2DOptions({2, 0, 1, 2})).ptr(), LayerConformance({5, 4, 3}, {3, 1, 3}));
}

TEST(Cropping2D, MatchesNumPySlicing) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  auto [x, y] = torchfit::testing::random_forward(Cropping2D(Cropping2DOptions({1, 2, 0, 3})).ptr(), {6, 7, 2});
  torchfit::testing::expect_matches_reference(
      y,
      torchfit::testing::keras_reference(
          {{"op", "cropping2d"}, {"x", torchfit::testing::tensor_json(x)}, {"cropping", {{1, 2}, {0, 3}}}}),
      0.0);
}

TEST(Cropping2D, ConfigAndErrors) {
  auto layer = layer_from_json({{"class_name", "Cropping2D"}, {"config", {{"cropping", {{0, 1}, {2, 3}}}}}});
  EXPECT_EQ(layer->config()["cropping"], nlohmann::json({{0, 1}, {2, 3}}));
  EXPECT_THROW(Cropping2D(Cropping2DOptions({0, -1})), ConfigError);
  Sequential m;
  try {
    m->add(Cropping2D(Cropping2DOptions({2, 2, 0, 0}).input_shape(Shape{4, 4, 1})));
    ADD_FAILURE() << "cropping everything must be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("leaves nothing"), std::string::npos) << e.what();
  }
}
