// RandomErasing (Keras 3): at given draws, against the NumPy reference written from Keras 3's
// get_random_transformation and transform_images (keras_image_augmentation_reference.py) for noise, one and three
// fill values; draws in Keras's ranges (the default factor 1.0 erases half the images: p ~ U[0, 1), as Keras 3's
// code); seeded; the input in inference; conformance; Keras 3 configs; errors naming the layer and value.
#include <gtest/gtest.h>

#include <torchfit/layers/random_erasing.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

namespace {

nlohmann::json erasing_pairs(const at::Tensor& t) {  // (N, 2) → [[a, b], …] for a request
  const at::Tensor c = t.to(at::kDouble);
  nlohmann::json j = nlohmann::json::array();
  for (int64_t i = 0; i < c.size(0); ++i) j.push_back({c[i][0].item<double>(), c[i][1].item<double>()});
  return j;
}

}  // namespace

TEST(RandomErasing, ConformanceDefaultsAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(
      RandomErasing(RandomErasingOptions().factor(KerasFactor(1.0, 1.0)).scale(KerasFactor(0.3, 0.5))).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  const RandomErasingOptions defaults;
  EXPECT_EQ(defaults.factor().values, (std::vector<double>{1.0}));
  EXPECT_EQ(defaults.scale().values, (std::vector<double>{0.02, 0.33}));
  EXPECT_TRUE(defaults.fill_value().values.empty());
  EXPECT_EQ(defaults.value_range(), (std::vector<double>{0.0, 255.0}));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = at::rand({3, 3, 5, 6}, at::kDouble) * 255.0;
  ErasingDraws d;
  d.areas = at::tensor({0.25, 0.5, 0.9, 0.04, 0.33, 0.33}, at::kDouble).view({3, 2});
  d.starts = at::tensor({0.0, 1.0, 0.37, 0.81, 0.999, 0.5}, at::kDouble).view({3, 2});
  d.applies = at::tensor({1, 0, 1}).to(at::kBool);
  const std::vector<bool> applies = {true, false, true};
  const nlohmann::json base = {
      {"op", "augment_erasing"},           {"x", tensor_json(x)}, {"areas", erasing_pairs(d.areas)},
      {"starts", erasing_pairs(d.starts)}, {"applies", applies},  {"value_range", {0.0, 255.0}}};
  // Noise (fill_value none): N(0, 1)·255 clipped to [0, 255].
  d.noise = at::randn({3, 3, 5, 6}, at::kDouble);
  nlohmann::json req = base;
  req["fill_value"] = nullptr;
  req["noise"] = tensor_json(d.noise);
  const at::Tensor noisy = RandomErasing()->erase(x, d);
  torchfit::testing::expect_matches_reference(noisy, torchfit::testing::keras_reference(req), 1e-9);
  EXPECT_FALSE(at::equal(noisy, x));
  EXPECT_TRUE(at::equal(noisy[1], x[1])) << "an image not erased";
  d.noise = at::Tensor();
  for (const nlohmann::json& fill : {nlohmann::json(300.0), nlohmann::json({10.0, -5.0, 128.0})}) {
    SCOPED_TRACE(fill.dump());
    ErasingFillValue value;
    from_json(fill, value);
    req = base;
    req["fill_value"] = fill;
    torchfit::testing::expect_matches_reference(RandomErasing(RandomErasingOptions().fill_value(value))->erase(x, d),
                                                torchfit::testing::keras_reference(req), 1e-9);
  }
}

TEST(RandomErasing, DrawsInKerasRangeSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({20000, 1, 1, 1});
  const ErasingDraws d = RandomErasing()->draw(like);
  torchfit::testing::expect_covers_range(d.areas.select(1, 0), 0.02, 0.33);
  torchfit::testing::expect_covers_range(d.areas.select(1, 1), 0.02, 0.33);
  torchfit::testing::expect_covers_range(d.starts, 0.0, 1.0);
  // Default factor 1.0: p ~ U[0, 1), erased when u < p: half the images.
  EXPECT_NEAR(d.applies.to(at::kDouble).mean().item<double>(), 0.5, 0.015);
  EXPECT_NEAR(d.noise.mean().item<double>(), 0.0, 0.03);
  EXPECT_NEAR(d.noise.std().item<double>(), 1.0, 0.03);
  const ErasingDraws fixed =
      RandomErasing(RandomErasingOptions().factor(KerasFactor(0.2, 0.2)).fill_value(0.0).scale(0.5))->draw(like);
  EXPECT_NEAR(fixed.applies.to(at::kDouble).mean().item<double>(), 0.2, 0.015);
  EXPECT_FALSE(fixed.noise.defined()) << "no noise drawn for a fill_value";
  torchfit::testing::expect_covers_range(fixed.areas, 0.0, 0.5);  // a number s: [0, s]
  at::manual_seed(8);
  const at::Tensor x = at::rand({8, 3, 6, 5}) * 255.0;
  torchfit::testing::expect_seeded_and_inference_identity([] { return RandomErasing().ptr(); }, x);
  const auto layer =
      torchfit::testing::layer_from_keras3<RandomErasingImpl>(torchfit::testing::keras3_augmentation_layer(
          "RandomErasing", "e",
          {{"factor", {0.0, 1.0}}, {"scale", {0.02, 0.33}}, {"fill_value", nullptr}, {"value_range", {0, 255}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor().values, (std::vector<double>{0.0, 1.0}));
  EXPECT_TRUE(layer->options.fill_value().values.empty());
  const auto three = torchfit::testing::layer_from_keras3<RandomErasingImpl>(
      torchfit::testing::keras3_augmentation_layer("RandomErasing", "e3", {{"fill_value", {1, 2, 3}}}));
  ASSERT_TRUE(three);
  EXPECT_EQ(three->options.fill_value().values, (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_EQ(layer_to_json(*three)["config"]["fill_value"], nlohmann::json({1.0, 2.0, 3.0}));
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomErasing(RandomErasingOptions().factor(1.5).name("e")); },
                      "layer 'e' (RandomErasing): factor must be a number in [0, 1] or a pair [lower, upper] with "
                      "lower <= 1 and upper >= 0, got 1.5");
  expect_config_error([] { RandomErasing(RandomErasingOptions().scale(KerasFactor(1.2, 1.5)).name("e")); },
                      "layer 'e' (RandomErasing): scale must be a number in [0, 1] or a pair [lower, upper] with "
                      "lower <= 1 and upper >= 0, got [1.2, 1.5]");
  expect_config_error(
      [] {
        RandomErasing(RandomErasingOptions().fill_value({1.0, 2.0}).name("e"));
      },
      "layer 'e' (RandomErasing): fill_value must be none, a number or three numbers, got [1.0,2.0]");
  expect_config_error(
      [] {
        RandomErasing(RandomErasingOptions().value_range({255.0, 0.0}).name("e"));
      },
      "layer 'e' (RandomErasing): value_range must be [low, high] with low < high, got [255, 0]");
  expect_config_error(
      [] {
        layer_from_json({{"class_name", "RandomErasing"}, {"config", {{"name", "e"}, {"fill_value", "noise"}}}});
      },
      "layer 'e' (RandomErasing): field 'fill_value'");
  expect_config_error(
      [] {
        Sequential s;
        s->add(RandomErasing(RandomErasingOptions().fill_value({1.0, 2.0, 3.0}).name("e").input_shape(Shape{5, 7, 1}))
                   .ptr());
      },
      "layer 'e' (RandomErasing): a fill_value of three numbers needs 3 channels, got");
}
