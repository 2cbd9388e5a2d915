// ReLU: Keras's backend.relu for every combination of max_value, negative_slope and threshold against the
// float64 NumPy reference (and hand-derived values), conformance, config keys, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/advanced_activations.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(ReLU, Conformance) {
  expect_layer_conformance(ReLU().ptr(), LayerConformance({4, 4, 2}, {4, 4, 2}));
  expect_layer_conformance(ReLU(ReLUOptions().max_value(6.0).negative_slope(0.1).threshold(0.5)).ptr(),
                           LayerConformance({6}, {6}));
}

// Hand-derived from Keras's formula: threshold 1, slope 0.5, max 2 on [-1, 0.5, 1, 1.5, 3]:
// x ≤ 1 → 0.5·(x − 1) = −1, −0.25, 0 (x = threshold gives 0); 1.5 → 1.5; 3 → 2.
TEST(ReLU, KerasFormulaByHand) {
  auto y = torchfit::testing::run_layer(ReLU(ReLUOptions().max_value(2.0).negative_slope(0.5).threshold(1.0)).ptr(),
                                        {5}, at::tensor({-1.0f, 0.5f, 1.0f, 1.5f, 3.0f}).reshape({1, 5}));
  EXPECT_TRUE(at::allclose(y.flatten(), at::tensor({-1.0f, -0.25f, 0.0f, 1.5f, 2.0f}))) << y;
}

TEST(ReLU, MatchesKerasBackendRelu) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const std::optional<double> max_value :
       {std::optional<double>(), std::optional<double>(6.0), std::optional<double>(0.7)}) {
    for (const double slope : {0.0, 0.2, 1.5}) {
      for (const double threshold : {0.0, 0.3}) {
        SCOPED_TRACE("max_value " + (max_value ? std::to_string(*max_value) : "None") + " negative_slope " +
                     std::to_string(slope) + " threshold " + std::to_string(threshold));
        ReLU layer(ReLUOptions().max_value(max_value).negative_slope(slope).threshold(threshold));
        auto [x, y] = torchfit::testing::random_forward(layer.ptr(), {3, 4, 2});
        nlohmann::json req = {{"op", "relu"},
                              {"x", torchfit::testing::tensor_json(x)},
                              {"max_value", max_value ? nlohmann::json(*max_value) : nlohmann::json(nullptr)},
                              {"negative_slope", slope},
                              {"threshold", threshold}};
        torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
      }
    }
  }
}

TEST(ReLU, ConfigAndErrors) {
  EXPECT_TRUE(ReLU()->config()["max_value"].is_null());
  auto read = layer_from_json({{"class_name", "ReLU"}, {"config", {{"max_value", 6.0}, {"name", "relu6"}}}});
  EXPECT_EQ(read->config()["max_value"], 6.0);
  EXPECT_EQ(read->config()["negative_slope"], 0.0);
  EXPECT_EQ(ReLU()->class_name(), "ReLU");
  EXPECT_THROW(ReLU(ReLUOptions().max_value(-1.0)), ConfigError);
  EXPECT_THROW(ReLU(ReLUOptions().negative_slope(-0.1)), ConfigError);
  EXPECT_THROW(ReLU(ReLUOptions().threshold(-0.1)), ConfigError);
}
