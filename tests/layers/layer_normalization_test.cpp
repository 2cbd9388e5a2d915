// LayerNormalization: Keras's axes on (H, W, C) and (D) inputs, parameter shapes and counts, values
// against the float64 NumPy reference, config keys, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/layer_normalization.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(LayerNormalization, ConformanceAndKerasParameterCounts) {
  // axis −1 on (H, W, C): gamma and beta (C) → 2·C, as Keras's summary.
  expect_layer_conformance(LayerNormalization().ptr(), LayerConformance({4, 5, 3}, {4, 5, 3}).trainable_params(6));
  expect_layer_conformance(LayerNormalization(LayerNormalizationOptions().axis({1, 2, 3})).ptr(),
                           LayerConformance({4, 5, 3}, {4, 5, 3}).trainable_params(2 * 60));
  expect_layer_conformance(LayerNormalization(LayerNormalizationOptions().center(false)).ptr(),
                           LayerConformance({10}, {10}).trainable_params(10));
}

TEST(LayerNormalization, MatchesKerasDefinition) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    KerasAxes axis;
    std::vector<int64_t> in;
    bool center, scale;
  };
  for (const Case& c : {Case{KerasAxes(-1), {4, 5, 3}, true, true}, Case{KerasAxes({1, 2}), {4, 5, 3}, true, true},
                        Case{KerasAxes({3, 1}), {4, 5, 3}, false, true},
                        Case{KerasAxes({-3, -2, -1}), {4, 5, 3}, true, false}, Case{KerasAxes(1), {7}, true, true}}) {
    SCOPED_TRACE(nlohmann::json(c.axis).dump() + " on " + format_shape(c.in));
    LayerNormalization layer(LayerNormalizationOptions().axis(c.axis).epsilon(0.01).center(c.center).scale(c.scale));
    auto [x, y0] = torchfit::testing::random_forward(layer.ptr(), c.in);
    nlohmann::json req = {{"op", "layer_normalization"},
                          {"x", torchfit::testing::tensor_json(x * 3 + 1)},
                          {"axis", c.axis.is_list ? nlohmann::json(c.axis.axes) : nlohmann::json(c.axis.axes[0])},
                          {"epsilon", 0.01}};
    {
      at::NoGradGuard g;
      if (c.scale) {
        layer->gamma.uniform_(0.5, 2);
        req["gamma"] = torchfit::testing::tensor_json(layer->gamma);
      }
      if (c.center) {
        layer->beta.uniform_(-1, 1);
        req["beta"] = torchfit::testing::tensor_json(layer->beta);
      }
    }
    at::NoGradGuard g;
    torchfit::testing::expect_matches_reference(layer->forward(x * 3 + 1), torchfit::testing::keras_reference(req),
                                                1e-5);
  }
}

TEST(LayerNormalization, ParameterShapesConfigAndErrors) {
  LayerNormalization layer(LayerNormalizationOptions().axis({3, 1}).input_shape(Shape{4, 5, 3}));
  Sequential m;
  m->add(layer);
  EXPECT_EQ(layer->gamma.sizes().vec(), (std::vector<int64_t>{4, 3}));  // Keras order (H, C)
  EXPECT_EQ(layer->config()["axis"], nlohmann::json({3, 1}));
  EXPECT_EQ(LayerNormalization()->config()["axis"], -1);
  EXPECT_EQ(LayerNormalization()->config()["epsilon"], 1e-3);
  auto read = layer_from_json({{"class_name", "LayerNormalization"}, {"config", {{"axis", {3}}, {"scale", false}}}});
  EXPECT_EQ(read->config()["axis"], nlohmann::json({3}));
  EXPECT_THROW(LayerNormalization(LayerNormalizationOptions().epsilon(0)), ConfigError);
  Sequential bad;
  EXPECT_THROW(bad->add(LayerNormalization(LayerNormalizationOptions().axis(0).input_shape(Shape{4}))), ConfigError);
  Sequential bad2;
  EXPECT_THROW(bad2->add(LayerNormalization(LayerNormalizationOptions().axis(4).input_shape(Shape{2, 2, 2}))),
               ConfigError);
}
