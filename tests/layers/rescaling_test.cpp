// Rescaling: x · scale + offset against the NumPy reference, conformance, config (scale required), errors.
#include <gtest/gtest.h>

#include <cmath>

#include <torchfit/layers/rescaling.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(Rescaling, Conformance) {
  expect_layer_conformance(Rescaling(RescalingOptions(1.0 / 255)).ptr(), LayerConformance({4, 4, 3}, {4, 4, 3}));
  expect_layer_conformance(Rescaling(RescalingOptions(1.0 / 127.5).offset(-1)).ptr(), LayerConformance({5}, {5}));
}

TEST(Rescaling, MatchesNumPy) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  auto [x, y] = torchfit::testing::random_forward(Rescaling(RescalingOptions(1.0 / 127.5).offset(-1)).ptr(), {3, 4, 2});
  torchfit::testing::expect_matches_reference(
      y,
      torchfit::testing::keras_reference(
          {{"op", "rescaling"}, {"x", torchfit::testing::tensor_json(x)}, {"scale", 1.0 / 127.5}, {"offset", -1.0}}));
}

TEST(Rescaling, ConfigAndErrors) {
  auto read = layer_from_json({{"class_name", "Rescaling"}, {"config", {{"scale", 0.5}}}});
  EXPECT_EQ(read->config()["scale"], 0.5);
  EXPECT_EQ(read->config()["offset"], 0.0);
  EXPECT_NE(torchfit::testing::layer_config_error({{"class_name", "Rescaling"}, {"config", nlohmann::json::object()}})
                .find("missing field 'scale'"),
            std::string::npos);
  EXPECT_THROW(Rescaling(RescalingOptions(std::nan(""))), ConfigError);
}
