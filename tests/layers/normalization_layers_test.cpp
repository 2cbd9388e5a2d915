// GroupNormalization, UnitNormalization and RMSNormalization (Keras 3): values against NumPy written from
// Keras's source (tests/layers/reference/keras_layers_reference.py), conformance (gradients, config and
// save/load round trips), Keras weights, bad arguments.
#include <gtest/gtest.h>

#include <torchfit/layers/group_normalization.h>
#include <torchfit/layers/rms_normalization.h>
#include <torchfit/layers/unit_normalization.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::keras_reference;
using torchfit::testing::LayerConformance;
using torchfit::testing::tensor_json;

namespace normalization_layers_test {

// The layer's output on random input of Keras shape `in`, after its weights are set to random values.
std::pair<at::Tensor, at::Tensor> forward_with_random_weights(const std::shared_ptr<Layer>& layer, const Shape& in) {
  auto [x, y] = torchfit::testing::random_forward(layer, in, 3);
  at::manual_seed(11);
  for (auto& p : layer->parameters()) p.data().copy_(at::randn(p.sizes()) * 0.5 + 1.0);
  at::NoGradGuard no_grad;
  return {x, layer->forward(x)};
}

std::string build_error(const std::shared_ptr<Layer>& layer, const Shape& in) {
  try {
    layer->build(in);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(GroupNormalization, MatchesKerasOnImagesSequencesAndVectors) {
  const std::string why = torchfit::testing::keras_reference_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  struct Case {
    Shape in;
    int64_t groups, axis;
    bool center, scale;
  };
  for (const Case& c :
       {Case{{4, 5, 6}, 3, -1, true, true}, Case{{4, 5, 6}, -1, -1, true, true}, Case{{7, 8}, 2, -1, false, true},
        Case{{6, 4}, 3, 1, true, false}, Case{{12}, 4, -1, true, true}}) {
    SCOPED_TRACE(format_shape(c.in) + " groups " + std::to_string(c.groups) + " axis " + std::to_string(c.axis));
    GroupNormalization layer(GroupNormalizationOptions().groups(c.groups).axis(c.axis).center(c.center).scale(c.scale));
    auto [x, y] = forward_with_random_weights(layer.ptr(), c.in);
    nlohmann::json req = {{"op", "group_normalization"},
                          {"x", tensor_json(x)},
                          {"groups", c.groups},
                          {"axis", c.axis},
                          {"epsilon", layer->options.epsilon()}};
    if (layer->gamma.defined()) req["gamma"] = tensor_json(layer->gamma);
    if (layer->beta.defined()) req["beta"] = tensor_json(layer->beta);
    torchfit::testing::expect_matches_reference(y, keras_reference(req), 1e-4);
  }
}

TEST(GroupNormalization, ConformanceWeightsAndErrors) {
  expect_layer_conformance(GroupNormalization(GroupNormalizationOptions().groups(2)).ptr(),
                           LayerConformance({3, 4, 6}, {3, 4, 6}).trainable_params(12));
  expect_layer_conformance(GroupNormalization(GroupNormalizationOptions().groups(4).center(false)).ptr(),
                           LayerConformance({5, 8}, {5, 8}).trainable_params(8));
  GroupNormalization layer(GroupNormalizationOptions().groups(-1));
  layer->build({4, 4, 6});
  EXPECT_EQ(layer->group_count(), 6);
  EXPECT_EQ(layer->keras_weights().size(), 2u);
  EXPECT_THROW(GroupNormalization(GroupNormalizationOptions().groups(0)), ConfigError);
  EXPECT_THROW(GroupNormalization(GroupNormalizationOptions().epsilon(0)), ConfigError);
  const std::string e = build_error(GroupNormalization(GroupNormalizationOptions().groups(4)).ptr(), {5, 5, 6});
  EXPECT_NE(e.find("groups 4 must divide the 6 channels"), std::string::npos) << e;
  EXPECT_NE(e.find("(GroupNormalization)"), std::string::npos) << e;
  EXPECT_NE(build_error(GroupNormalization(GroupNormalizationOptions().groups(8)).ptr(), {6}).find("groups 8"),
            std::string::npos);
  EXPECT_NE(build_error(GroupNormalization(GroupNormalizationOptions().axis(3)).ptr(), {6, 4}).find("axis 3"),
            std::string::npos);
}

TEST(UnitNormalization, MatchesKerasOverOneOrSeveralAxes) {
  const std::string why = torchfit::testing::keras_reference_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  for (const auto& [in, axis] : std::vector<std::pair<Shape, KerasAxes>>{
           {{4, 5, 3}, KerasAxes(-1)}, {{4, 5, 3}, KerasAxes({1, 2})}, {{6, 4}, KerasAxes(1)}, {{7}, KerasAxes(-1)}}) {
    SCOPED_TRACE(format_shape(in) + " axis " + nlohmann::json(axis).dump());
    UnitNormalization layer(UnitNormalizationOptions().axis(axis));
    auto [x, y] = torchfit::testing::random_forward(layer.ptr(), in, 3);
    torchfit::testing::expect_matches_reference(
        y, keras_reference({{"op", "unit_normalization"}, {"x", tensor_json(x)}, {"axis", axis}}));
  }
  // An all-zero sample stays 0 (the 1e-12 floor), not nan.
  UnitNormalization zero;
  zero->build({4});
  EXPECT_TRUE(at::equal(zero->forward(at::zeros({2, 4})), at::zeros({2, 4})));
  expect_layer_conformance(UnitNormalization().ptr(), LayerConformance({3, 4, 5}, {3, 4, 5}));
  EXPECT_THROW(UnitNormalization(UnitNormalizationOptions().axis(KerasAxes(std::vector<int64_t>{}))), ConfigError);
  EXPECT_NE(build_error(UnitNormalization(UnitNormalizationOptions().axis(KerasAxes(0))).ptr(), {4}).find("batch axis"),
            std::string::npos);
}

TEST(RMSNormalization, MatchesKerasWithItsScale) {
  const std::string why = torchfit::testing::keras_reference_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  for (const auto& [in, axis] : std::vector<std::pair<Shape, KerasAxes>>{
           {{4, 5, 3}, KerasAxes(-1)}, {{6, 4}, KerasAxes({1, 2})}, {{6, 4}, KerasAxes(-1)}, {{9}, KerasAxes(-1)}}) {
    SCOPED_TRACE(format_shape(in) + " axis " + nlohmann::json(axis).dump());
    RMSNormalization layer(RMSNormalizationOptions().axis(axis));
    auto [x, y] = forward_with_random_weights(layer.ptr(), in);
    torchfit::testing::expect_matches_reference(y, keras_reference({{"op", "rms_normalization"},
                                                                    {"x", tensor_json(x)},
                                                                    {"axis", axis},
                                                                    {"epsilon", 1e-6},
                                                                    {"scale", tensor_json(layer->scale)}}));
  }
}

TEST(RMSNormalization, ConformanceWeightsAndErrors) {
  expect_layer_conformance(RMSNormalization().ptr(), LayerConformance({3, 4, 5}, {3, 4, 5}).trainable_params(5));
  expect_layer_conformance(RMSNormalization(RMSNormalizationOptions().axis(KerasAxes({1, 2}))).ptr(),
                           LayerConformance({3, 5}, {3, 5}).trainable_params(15));
  RMSNormalization layer;
  layer->build({4, 6});
  EXPECT_EQ(layer->scale.sizes(), (std::vector<int64_t>{6}));  // Keras: (input_shape[axis],)
  EXPECT_THROW(RMSNormalization(RMSNormalizationOptions().epsilon(-1)), ConfigError);
  const std::string e = build_error(RMSNormalization(RMSNormalizationOptions().axis(KerasAxes(1))).ptr(), {4, 6});
  EXPECT_NE(e.find("must be the last axes in increasing order"), std::string::npos) << e;
}

}  // namespace normalization_layers_test
